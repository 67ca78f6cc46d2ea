package io.github.lsrlucene.search;

import io.github.lsrlucene.Json;
import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.DocIds;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.index.PositionalSidecar;
import io.github.lsrlucene.query.DenseImpacts;
import io.github.lsrlucene.query.ImpactSimilarity;
import io.github.lsrlucene.query.SignedImpactQuery;
import io.github.lsrlucene.query.WindowQuery;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ParallelLeafReader;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.FixedBitSet;

/**
 * Exact search of query specs ({@link QuerySpec}) on one Anserini impact index: top k by exact score, ties by docid
 * ascending. One shared {@link IndexSearcher} with {@link ImpactSimilarity}. When {@code <index>/positions} holds a
 * positional sidecar ({@link PositionalIndexer}) it is joined docid by docid through a {@link ParallelLeafReader}, so
 * window clauses can be scored; the dense-impacts sidecar ({@link DenseImpacts}) serves plain queries' frequent
 * terms, the text sidecar explicit exclusions. Exact per-document scores come from {@link ExactScorer}.
 * {@link BatchSearcher} is its Python bridge, {@link ShardSearcher} searches several of them as one collection.
 */
final class SingleIndexSearcher implements Closeable {
  /** Folder of the positional sidecar index inside the main index folder. */
  static final String POSITIONS_DIR = PositionalIndexer.POSITIONS_DIR;

  final Path indexPath;
  final IndexReader reader;
  final IndexSearcher searcher;
  final ExternalIds ids;
  final DenseImpacts dense; // the dense-impacts sidecar (exact search's frequent terms), null when absent
  final float maxPayload;
  private final Directory mainDir;
  private final DirectoryReader mainReader;
  private final Directory posDir;
  private final DirectoryReader posReader;
  private final Set<String> fields = new HashSet<>();
  private final String[] docIdsByDoc; // external ids by global docid (null: deleted), to check sidecars opened later
  private TextSidecar text; // the text sidecar of explicit exclusions, opened on the first spec that has one

  /** Opens the index at {@code indexDir}; {@code denseImpacts} false leaves its dense-impacts sidecar unused. */
  SingleIndexSearcher(String indexDir, boolean denseImpacts) throws IOException {
    indexPath = Paths.get(indexDir);
    if (!Files.isDirectory(indexPath)) {
      throw new NoSuchFileException(indexDir + " (no such index folder)");
    }
    mainDir = FSDirectory.open(indexPath);
    if (!DirectoryReader.indexExists(mainDir)) {
      mainDir.close();
      throw new IllegalArgumentException(indexDir + " holds no Lucene index");
    }
    mainReader = DirectoryReader.open(mainDir);
    String[] docIds = DocIds.read(mainReader, "id");
    Path pp = indexPath.resolve(POSITIONS_DIR);
    Directory pd = null;
    DirectoryReader pr = null;
    float mp = WindowQuery.UNKNOWN_MAX_PAYLOAD;
    IndexReader r = mainReader;
    if (Files.isDirectory(pp)) {
      pd = FSDirectory.open(pp);
      if (DirectoryReader.indexExists(pd)) {
        pr = DirectoryReader.open(pd);
        // an index of no documents (every vector empty) has no segment to join its empty positional field by
        r = mainReader.maxDoc() == 0 && pr.maxDoc() == 0 ? mainReader
            : PositionalSidecar.join(indexPath, mainReader, pr, docIds);
        String m = pr.getIndexCommit().getUserData().get(PositionalIndexer.MAX_PAYLOAD_KEY);
        if (m != null) {
          mp = Float.parseFloat(m);
        }
      } else {
        pd.close();
        pd = null;
      }
    }
    posDir = pd;
    posReader = pr;
    maxPayload = mp;
    reader = r;
    for (LeafReaderContext ctx : reader.leaves()) {
      for (FieldInfo fi : ctx.reader().getFieldInfos()) {
        fields.add(fi.name);
      }
    }
    ids = new ExternalIds(docIds);
    docIdsByDoc = docIds;
    searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new ImpactSimilarity()); // scores boost x impact
    searcher.setQueryCache(null); // every query is new
    // its rows follow the main index's docids, as do the joined reader's leaves (same ords, same maxDoc)
    dense = denseImpacts ? DenseImpacts.open(indexPath, mainReader) : null;
  }

  /** Whether the positional sidecar is present (window clauses possible). */
  boolean hasPositions() {
    return posReader != null;
  }

  static float checkHeapFactor(float h) {
    if (!(h > 0f && h <= 1f)) {
      throw new IllegalArgumentException("heap factor must be in (0, 1], got " + h);
    }
    return h;
  }

  static void checkK(int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
  }

  /** Fails (one line naming what is missing) when this index cannot search {@code spec}. */
  void checkSpec(QuerySpec spec) {
    // an index of no documents (every vector empty, e.g. one shard of a collection) has no fields: no hits, no error
    if (!fields.contains(spec.field) && reader.maxDoc() > 0) {
      List<String> known = new ArrayList<>(fields);
      Collections.sort(known);
      throw new QuerySpecException(spec.label() + ": field '" + spec.field + "' is not in the index (fields: " + known + ")");
    }
    if (spec.exclude != null && reader.maxDoc() > 0) {
      try {
        textSidecar(); // a missing text field fails before any search (one error line naming what to build)
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    if (!spec.windows.isEmpty() && posReader == null) {
      throw new QuerySpecException(spec.label() + ": windows need the positional field, but "
          + indexPath.resolve(POSITIONS_DIR) + " does not exist; build it first (PositionalIndexer)");
    }
  }

  /** The documents a spec's {@code exclude} filter removes (global docids), null when it has none. */
  private FixedBitSet excluded(QuerySpec spec) throws IOException {
    if (spec.exclude == null || reader.maxDoc() == 0) {
      return null;
    }
    return textSidecar().matches(spec.exclude);
  }

  /** The text sidecar, opened (and checked against the index) on first use; one error line when it is missing. */
  private synchronized TextSidecar textSidecar() throws IOException {
    if (text == null) {
      text = TextSidecar.open(indexPath, docIdsByDoc);
    }
    return text;
  }

  /** The documents of this index a text filter expression (JSON, {@link TextFilter}) removes. */
  FixedBitSet excludedBy(String filterJson) throws IOException {
    if (reader.maxDoc() == 0) {
      return new FixedBitSet(1);
    }
    try {
      return textSidecar().matches(TextFilter.query(Json.MAPPER.readTree(filterJson), "exclude"));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new QuerySpecException("exclude: malformed JSON (" + e.getOriginalMessage() + ")");
    }
  }

  /**
   * Searches one parsed spec for its top k, signed parts shifted by {@code collectionMaxImpacts} (term &rarr; max
   * impact in the whole collection; null: this index's own) when this index is one shard of a collection; plain
   * queries with heap factor {@code h} (1: exact; below 1, {@link BatchSearcher#setHeapFactor}).
   */
  Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts, float h) throws IOException {
    return search(spec, k, collectionMaxImpacts, h, null);
  }

  /**
   * As above, exact search ({@code h} 1) on one shard of a collection with the queue of the shards already searched
   * ({@link ShardSearcher}): {@code carried}, the k best exact scores found there (descending; null or fewer than k:
   * none), start the collector's queue ({@link TopKCollector#carry}), in its float score space and lowered by its
   * rounding margin, so that it skips documents that cannot enter the collection's top k (ties with the k-th still
   * compete). A window rerank, and a spec too small for float scores (every match scored in double), carry nothing.
   * The hits may include documents below the carried k-th score.
   */
  Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts, float h, double[] carried)
      throws IOException {
    checkHeapFactor(h);
    checkSpec(spec);
    FixedBitSet ex = excluded(spec);
    Query direct = collectionMaxImpacts == null && spec.floatSafe
        ? PlainTerms.query(reader, spec, dense, h) : null;
    if (direct != null) { // no signed rewrite: the query is the plain one the branch below would pick
      return plainTopK(direct, k, carried, ex);
    }
    boolean rerank = spec.reranks();
    if (rerank) {
      carried = null; // the first stage keeps its top n by first-stage scores, not final ones
    }
    int n = rerank ? Math.max(k, spec.rerank) : k;
    Query q = searcher.rewrite(spec.firstStage(PositionalIndexer.FIELD, maxPayload, collectionMaxImpacts));
    if (!spec.floatSafe) {
      // a weight too small for float scores (rounding to zero or subnormal): every match scored in double
      return rescored(spec, allMatches(q, ex), k);
    }
    double shift = q instanceof SignedImpactQuery.Shifted ? ((SignedImpactQuery.Shifted) q).getShift() : 0.0;
    if (shift == 0 && collectionMaxImpacts == null && PlainTerms.integralBelowFloatLimit(reader, spec)) {
      // every score is an integer below 2^24: the float first phase is exact, nothing to rescore
      Query plain = PlainTerms.positiveQuery(spec, dense, h);
      return plainTopK(plain != null ? plain : q, k, carried, ex);
    }
    // float first phase: the top n plus every hit within float rounding error of the n-th, rescored in double
    int clauses = spec.terms.size() + spec.pairs.size() + spec.windows.size();
    double relErr = (clauses + 4) * 0x1p-22;
    TopKCollector c = new TopKCollector(n, ids.idOrd, ids.ordToDoc, relErr, shift);
    if (carried != null) {
      c.carry(carriedFloats(carried, shift, relErr), k);
    }
    searcher.search(q, TextFilter.excluding(c, ex));
    int[] band = c.band();
    int[] top = c.sorted(new float[c.size()]);
    int[] docs = Arrays.copyOf(top, top.length + band.length);
    System.arraycopy(band, 0, docs, top.length, band.length);
    return rescored(spec, docs, k);
  }

  /**
   * The top k of candidate documents by exact score, ties by docid: candidates that hold the exact top k (the
   * exact first stage's top max(k, rerank) of a window rerank, which alone get the windows added).
   */
  private Hits rescored(QuerySpec spec, int[] docs, int k) throws IOException {
    if (spec.reranks()) {
      Hits pool = ranked(docs, ExactScorer.score(reader, spec, docs, false), Math.max(k, spec.rerank));
      double[] scores = pool.scores.clone();
      new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, pool.docs,
          WindowRescorer.docOrder(pool.docs), scores);
      return ranked(pool.docs, scores, k);
    }
    return ranked(docs, ExactScorer.score(reader, spec, docs), k); // windows included: they are part of the query
  }

  /**
   * The carried exact scores in a collector's float space (shift + score), each lowered by twice the rounding margin
   * {@code relErr} its cut() allows between two documents' float scores: below a document's float score, had it
   * been scored here ({@link TopKCollector#carry}).
   */
  private static float[] carriedFloats(double[] carried, double shift, double relErr) {
    float[] best = new float[carried.length];
    for (int i = 0; i < best.length; i++) {
      double shifted = carried[i] + shift;
      best[i] = floatAtMost(shifted - 2 * relErr * (Math.abs(shifted) + shift));
    }
    return best;
  }

  /** The largest float at most {@code x} (-&infin; stays -&infin;). */
  private static float floatAtMost(double x) {
    float f = (float) x;
    return f > x ? Math.nextDown(f) : f;
  }

  /**
   * The top k of a query whose float scores are exact integers (nothing to rescore), ties by docid; the queue
   * started with the {@code carried} scores of shards searched before (null: none).
   */
  private Hits plainTopK(Query q, int k, double[] carried, FixedBitSet excluded) throws IOException {
    TopKCollector c = new TopKCollector(k, ids.idOrd, ids.ordToDoc);
    if (carried != null) {
      c.carry(carriedFloats(carried, 0, 0), k); // exact integer scores: no shift, no rounding margin
    }
    searcher.search(q, TextFilter.excluding(c, excluded));
    float[] fs = new float[c.size()];
    int[] docs = c.sorted(fs);
    double[] scores = new double[fs.length];
    for (int i = 0; i < fs.length; i++) {
      scores[i] = fs[i];
    }
    return new Hits(docs, scores);
  }

  /** Every document a (rewritten) query matches, global docids, unscored. */
  private int[] allMatches(Query q, FixedBitSet excluded) throws IOException {
    Matches m = new Matches();
    searcher.search(q, TextFilter.excluding(m, excluded));
    return Arrays.copyOf(m.docs, m.size);
  }

  /** Collects every match (no scores, no top k). */
  private static final class Matches extends SimpleCollector {
    int[] docs = new int[64];
    int size;
    private int base;

    @Override
    protected void doSetNextReader(LeafReaderContext ctx) {
      base = ctx.docBase;
    }

    @Override
    public void collect(int doc) {
      if (size == docs.length) {
        docs = Arrays.copyOf(docs, size * 2);
      }
      docs[size++] = base + doc;
    }

    @Override
    public ScoreMode scoreMode() {
      return ScoreMode.COMPLETE_NO_SCORES;
    }
  }

  /** The top k of documents by their exact scores, ties by docid. */
  Hits ranked(int[] docs, double[] scores, int k) {
    final int[] cand = docs;
    Integer[] order = new Integer[cand.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> {
      int cmp = Double.compare(scores[b], scores[a]);
      return cmp != 0 ? cmp : Integer.compare(ids.idOrd[cand[a]], ids.idOrd[cand[b]]);
    });
    int m = Math.min(k, cand.length);
    int[] d2 = new int[m];
    double[] s2 = new double[m];
    for (int i = 0; i < m; i++) {
      d2[i] = cand[order[i]];
      s2[i] = scores[order[i]];
    }
    return new Hits(d2, s2);
  }

  /**
   * The first-stage {@code scores} of {@code docs} (Lucene docids) with the window scores of {@code spec} added: the
   * second phase of a window rerank over shards, in input order.
   */
  double[] withWindows(QuerySpec spec, int[] docs, double[] scores) throws IOException {
    double[] out = scores.clone();
    new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, docs, WindowRescorer.docOrder(docs), out);
    return out;
  }

  @Override
  public void close() throws IOException {
    if (reader != mainReader) {
      reader.close();
    }
    mainReader.close();
    if (dense != null) {
      dense.close();
    }
    if (posReader != null) {
      posReader.close();
    }
    synchronized (this) {
      if (text != null) {
        text.close();
      }
    }
    if (posDir != null) {
      posDir.close();
    }
    mainDir.close();
  }
}
