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
    int nt = spec.exactTerms.size();
    int[] pos = new int[nt];
    int[] neg = new int[nt];
    double[] w = new double[nt];
    int t = 0;
    for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
      pos[t] = fw.ords.getOrDefault(e.getKey(), -1);
      neg[t] = spec.booleanMode ? -1 : fw.ords.getOrDefault(SignedImpactQuery.NEG_PREFIX + e.getKey(), -1);
      w[t++] = e.getValue();
    }
    int np = spec.pairs.size();
    int[] pa = new int[np];
    int[] pb = new int[np];
    for (int i = 0; i < np; i++) {
      pa[i] = fw.ords.getOrDefault(spec.pairs.get(i).a, -1);
      pb[i] = fw.ords.getOrDefault(spec.pairs.get(i).b, -1);
    }
    double[] out = new double[docs.length];
    int[] order = WindowRescorer.docOrder(docs);
    BinaryDocValues forward = reader.leaves().get(0).reader().getBinaryDocValues(TopPostingsIndexer.FORWARD_FIELD);
    for (int k : order) {
      if (forward == null || !forward.advanceExact(docs[k])) {
        continue; // no postings: every clause scores 0
      }
      BytesRef b = forward.binaryValue();
      double score = 0;
      for (int i = 0; i < nt; i++) {
        long f = impact(b, fw.bytes, pos[i]) - impact(b, fw.bytes, neg[i]);
        score += w[i] * f;
      }
      for (int i = 0; i < np; i++) {
        long fa = impact(b, fw.bytes, pa[i]);
        long fb = impact(b, fw.bytes, pb[i]);
        if (fa > 0 && fb > 0) {
          score += spec.exactPairWeights.get(i) * Math.sqrt((double) fa * fb);
        }
      }
      out[k] = score;
    }
    return out;
  }

  /** Impact of term id {@code ord} in one document's forward entries ({@code width} bytes each), 0 when absent. */
  private static long impact(BytesRef b, int width, int ord) {
    if (ord < 0) {
      return 0;
    }
    int lo = 0;
    int hi = b.length / width;
    while (lo < hi) { // entries in ascending term id
      int mid = (lo + hi) >>> 1;
      int at = b.offset + mid * width;
      int m = read(b.bytes, at, width / 2);
      if (m < ord) {
        lo = mid + 1;
      } else if (m > ord) {
        hi = mid;
      } else {
        return read(b.bytes, at + width / 2, width / 2) & 0xFFFFFFFFL;
      }
    }
    return 0;
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
