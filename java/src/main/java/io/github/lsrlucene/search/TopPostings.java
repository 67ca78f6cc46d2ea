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
  private final Map<String, Map<String, Integer>> ordsByField = new java.util.concurrent.ConcurrentHashMap<>();
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
   * Exact scores of {@code docs} from the forward field, for specs of terms with integral weights (sums exact in
   * a long): &Sigma; w &middot; (impact &minus; neg impact), or &Sigma; w &middot; impact in boolean mode, as
   * {@link ExactScorer} computes them; null for any other spec (pairs, windows, fractional weights).
   */
  double[] forwardScores(QuerySpec spec, int[] docs) throws IOException {
    if (!spec.pairs.isEmpty() || !spec.windows.isEmpty() || reader.leaves().size() != 1) {
      return null;
    }
    Map<String, Integer> ords = termOrds(spec.field);
    if (ords == null) {
      return null;
    }
    long[] weight = new long[ords.size()];
    for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
      double w = e.getValue();
      if (w != Math.rint(w) || Math.abs(w) > 0x1p31) {
        return null;
      }
      Integer pos = ords.get(e.getKey());
      if (pos != null) {
        weight[pos] += (long) w;
      }
      Integer neg = spec.booleanMode ? null : ords.get(SignedImpactQuery.NEG_PREFIX + e.getKey());
      if (neg != null) {
        weight[neg] -= (long) w;
      }
    }
    double[] out = new double[docs.length];
    int[] order = WindowRescorer.docOrder(docs);
    BinaryDocValues forward = reader.leaves().get(0).reader().getBinaryDocValues(TopPostingsIndexer.FORWARD_FIELD);
    for (int k : order) {
      if (forward == null || !forward.advanceExact(docs[k])) {
        continue;
      }
      BytesRef b = forward.binaryValue();
      byte[] bytes = b.bytes;
      int at = b.offset;
      int end = b.offset + b.length;
      long score = 0;
      for (; at + 3 < end; at += 4) {
        int ord = (bytes[at] & 0xFF) | (bytes[at + 1] & 0xFF) << 8;
        score += weight[ord] * ((bytes[at + 2] & 0xFF) | (bytes[at + 3] & 0xFF) << 8);
      }
      out[k] = score;
    }
    return out;
  }

  /**
   * Term &rarr; id (rank in the main index's term order) of {@code field}, the forward field's term ids; null when
   * the sidecar has no forward field for it (an older sidecar, another field).
   */
  private Map<String, Integer> termOrds(String field) throws IOException {
    Map<String, Integer> got = ordsByField.get(field);
    if (got != null || ordsByField.containsKey(field)) {
      return got;
    }
    Map<String, String> user = reader.getIndexCommit().getUserData();
    Map<String, Integer> ords = null;
    Terms terms = main.leaves().size() == 1 ? main.leaves().get(0).reader().terms(field) : null;
    if (field.equals(user.get("field")) && user.get(TopPostingsIndexer.TERMS_KEY) != null && terms != null) {
      ords = new HashMap<>();
      TermsEnum te = terms.iterator();
      for (BytesRef t = te.next(); t != null; t = te.next()) {
        ords.put(t.utf8ToString(), ords.size());
      }
      if (ords.size() != Integer.parseInt(user.get(TopPostingsIndexer.TERMS_KEY))) {
        ords = null; // the index's terms changed since the sidecar was written
      }
    }
    ordsByField.put(field, ords);
    return ords;
  }

  @Override
  public void close() throws IOException {
    reader.close();
    dir.close();
  }
}
