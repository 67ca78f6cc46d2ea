package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.DocIds;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.index.TopPostingsIndexer;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import io.github.lsrlucene.query.SignedImpactQuery;
import java.util.HashMap;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * The top-postings sidecar of an index ({@link TopPostingsIndexer}) opened for search: the first phase of
 * approximate search. A sidecar whose documents no longer match the index's is kept as a problem, reported
 * when approximate search is asked for, so that exact search still works.
 */
final class TopPostings implements Closeable {
  private final Directory dir;
  private final DirectoryReader reader;
  private final IndexSearcher searcher;
  private final IndexReader main;
  private final Map<String, Forward> ordsByField = new java.util.concurrent.ConcurrentHashMap<>();
  final String problem; // why approximate search cannot run, null when it can

  private TopPostings(Directory dir, DirectoryReader reader, IndexReader main, String problem) {
    this.dir = dir;
    this.main = main;
    this.reader = reader;
    this.searcher = reader == null ? null : BatchSearcher.impactSearcher(reader);
    this.problem = problem;
  }

  /** The sidecar of {@code index} (main reader and its external ids), or null when the index has none. */
  static TopPostings open(Path index, DirectoryReader main, String[] docIds) throws IOException {
    Path path = index.resolve(TopPostingsIndexer.DIR);
    if (!Files.isDirectory(path)) {
      return null;
    }
    Directory dir = FSDirectory.open(path);
    if (!DirectoryReader.indexExists(dir)) {
      dir.close();
      return null;
    }
    DirectoryReader reader = DirectoryReader.open(dir);
    String problem = null;
    String rebuild = "; rebuild it: lsr-lucene index --index " + index + " --top-postings N --overwrite";
    if (main.leaves().size() != 1 || reader.leaves().size() != 1 || main.maxDoc() != reader.maxDoc()) {
      problem = path + ": holds " + reader.maxDoc() + " documents in " + reader.leaves().size() + " segment(s), the index "
          + main.maxDoc() + " in " + main.leaves().size() + rebuild;
    } else {
      String[] ids = DocIds.read(reader, TopPostingsIndexer.ID_FIELD);
      for (int d = 0; d < docIds.length && problem == null; d++) {
        if (docIds[d] != null && !docIds[d].equals(ids[d])) {
          problem = path + ": docid " + d + " is '" + docIds[d] + "' in the index but '" + ids[d] + "' here" + rebuild;
        }
      }
    }
    return new TopPostings(dir, reader, main, problem);
  }

  /**
   * The top n documents of {@code spec}'s first stage on the short lists (global docids, not ranked exactly);
   * {@code plain}, when not null, is that first stage as a plain query of positive terms.
   */
  int[] candidates(QuerySpec spec, Query plain, int n, Map<String, Long> collectionMaxImpacts, ExternalIds ids)
      throws IOException {
    if (problem != null) {
      throw new QuerySpecException(spec.label() + ": " + problem);
    }
    Query q = plain != null ? plain : searcher.rewrite(spec.firstStage(PositionalIndexer.FIELD, 0f, collectionMaxImpacts));
    TopKCollector c = new TopKCollector(n, ids.idOrd, ids.ordToDoc);
    searcher.search(q, c);
    return c.sorted(new float[c.size()]);
  }

  /**
   * Exact scores of {@code docs} from the forward field, for specs of terms and pairs: the arithmetic of
   * {@link ExactScorer}, in double, term by term in spec order, then pairs (w &middot; (impact &minus; neg impact),
   * or w &middot; impact in boolean mode; w &middot; &radic;(a &middot; b) per pair), so that approximate search at full depth
   * gives exact search's bits; null when the sidecar cannot (windows, no forward field).
   */
  double[] forwardScores(QuerySpec spec, int[] docs) throws IOException {
    if (!spec.windows.isEmpty() || reader.leaves().size() != 1) {
      return null;
    }
    Forward fw = termOrds(spec.field);
    if (fw == NO_FORWARD) {
      return null;
    }
    // the distinct term ids the spec reads get a slot each; one linear pass over a document's entries fills them
    int[] slot = SLOTS.get();
    if (slot.length < fw.ords.size()) {
      slot = new int[fw.ords.size()];
      java.util.Arrays.fill(slot, -1);
      SLOTS.set(slot);
    }
    int nt = spec.exactTerms.size();
    int np = spec.pairs.size();
    int[] read = new int[2 * nt + 2 * np]; // term ids with a slot, in slot order
    int[] pos = new int[nt];
    int[] neg = new int[nt];
    double[] w = new double[nt];
    int[] pa = new int[np];
    int[] pb = new int[np];
    int slots = 0;
    try {
      int t = 0;
      for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
        slots = slotOf(fw.ords.get(e.getKey()), slot, read, slots);
        pos[t] = slotIndex(fw.ords.get(e.getKey()), slot);
        String negTerm = SignedImpactQuery.NEG_PREFIX + e.getKey();
        slots = spec.booleanMode ? slots : slotOf(fw.ords.get(negTerm), slot, read, slots);
        neg[t] = spec.booleanMode ? -1 : slotIndex(fw.ords.get(negTerm), slot);
        w[t++] = e.getValue();
      }
      for (int i = 0; i < np; i++) {
        slots = slotOf(fw.ords.get(spec.pairs.get(i).a), slot, read, slots);
        pa[i] = slotIndex(fw.ords.get(spec.pairs.get(i).a), slot);
        slots = slotOf(fw.ords.get(spec.pairs.get(i).b), slot, read, slots);
        pb[i] = slotIndex(fw.ords.get(spec.pairs.get(i).b), slot);
      }
      long[] imp = new long[slots + 1]; // the last slot stands for absent terms: always 0
      for (int i = 0; i < nt; i++) {
        pos[i] = pos[i] < 0 ? slots : pos[i];
        neg[i] = neg[i] < 0 ? slots : neg[i];
      }
      for (int i = 0; i < np; i++) {
        pa[i] = pa[i] < 0 ? slots : pa[i];
        pb[i] = pb[i] < 0 ? slots : pb[i];
      }
      double[] out = new double[docs.length];
      int[] order = WindowRescorer.docOrder(docs);
      BinaryDocValues forward = reader.leaves().get(0).reader().getBinaryDocValues(TopPostingsIndexer.FORWARD_FIELD);
      int half = fw.bytes / 2;
      for (int k : order) {
        if (forward == null || !forward.advanceExact(docs[k])) {
          continue; // no postings: every clause scores 0
        }
        BytesRef b = forward.binaryValue();
        java.util.Arrays.fill(imp, 0L);
        byte[] bytes = b.bytes;
        int end = b.offset + b.length;
        if (half == 2) { // 16-bit entries, decoded without a loop
          for (int at = b.offset; at + 3 < end; at += 4) {
            int s = slot[(bytes[at] & 0xFF) | (bytes[at + 1] & 0xFF) << 8];
            if (s >= 0) {
              imp[s] = (bytes[at + 2] & 0xFF) | (bytes[at + 3] & 0xFF) << 8;
            }
          }
        } else {
          for (int at = b.offset; at + fw.bytes <= end; at += fw.bytes) {
            int s = slot[read(bytes, at, half)];
            if (s >= 0) {
              imp[s] = read(bytes, at + half, half) & 0xFFFFFFFFL;
            }
          }
        }
        double score = 0; // ExactScorer's sum: terms in spec order, then pairs
        for (int i = 0; i < nt; i++) {
          score += w[i] * (imp[pos[i]] - imp[neg[i]]);
        }
        for (int i = 0; i < np; i++) {
          long fa = imp[pa[i]];
          long fb = imp[pb[i]];
          if (fa > 0 && fb > 0) {
            score += spec.exactPairWeights.get(i) * Math.sqrt((double) fa * fb);
          }
        }
        out[k] = score;
      }
      return out;
    } finally {
      for (int i = 0; i < slots; i++) {
        slot[read[i]] = -1; // the per-thread array is left all -1 for the next call
      }
    }
  }

  /** Per-thread term id &rarr; slot array (-1: not read), sized to the vocabulary. */
  private static final ThreadLocal<int[]> SLOTS = ThreadLocal.withInitial(() -> new int[0]);

  /** Gives term id {@code ord} (null: not in the index) a slot unless it has one; returns the slots in use. */
  private static int slotOf(Integer ord, int[] slot, int[] read, int slots) {
    if (ord != null && slot[ord] < 0) {
      slot[ord] = slots;
      read[slots++] = ord;
    }
    return slots;
  }

  /** The slot of term id {@code ord}, -1 for a term not in the index. */
  private static int slotIndex(Integer ord, int[] slot) {
    return ord == null ? -1 : slot[ord];
  }

  /** An unsigned little-endian number of {@code n} (2 or 4) bytes. */
  private static int read(byte[] bytes, int at, int n) {
    int v = 0;
    for (int i = n - 1; i >= 0; i--) {
      v = v << 8 | (bytes[at + i] & 0xFF);
    }
    return v;
  }

  /** The forward field's term ids of one field and the bytes of an entry. */
  private static final class Forward {
    final Map<String, Integer> ords;
    final int bytes;

    Forward(Map<String, Integer> ords, int bytes) {
      this.ords = ords;
      this.bytes = bytes;
    }
  }

  /** No forward field for a field (a concurrent map holds no null). */
  private static final Forward NO_FORWARD = new Forward(Map.of(), 0);

  /**
   * Term &rarr; id (rank in the main index's term order) of {@code field}, the forward field's term ids;
   * {@link #NO_FORWARD} when the sidecar has no forward field for it (an older sidecar, another field).
   */
  private Forward termOrds(String field) throws IOException {
    Forward got = ordsByField.get(field);
    if (got != null) {
      return got;
    }
    Map<String, String> user = reader.getIndexCommit().getUserData();
    Forward fw = NO_FORWARD;
    Terms terms = main.leaves().size() == 1 ? main.leaves().get(0).reader().terms(field) : null;
    String count = user.get(TopPostingsIndexer.TERMS_KEY);
    int bytes = Integer.parseInt(user.getOrDefault(TopPostingsIndexer.FORWARD_BYTES_KEY, "4"));
    if (field.equals(user.get("field")) && count != null && terms != null && (bytes == 4 || bytes == 8)) {
      Map<String, Integer> ords = new HashMap<>();
      TermsEnum te = terms.iterator();
      for (BytesRef t = te.next(); t != null; t = te.next()) {
        ords.put(t.utf8ToString(), ords.size());
      }
      if (ords.size() == Integer.parseInt(count)) { // else the index's terms changed since the sidecar was written
        fw = new Forward(ords, bytes);
      }
    }
    ordsByField.put(field, fw);
    return fw;
  }

  @Override
  public void close() throws IOException {
    reader.close();
    dir.close();
  }
}
