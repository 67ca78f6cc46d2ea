package io.github.lsrlucene.search;

import io.github.lsrlucene.Json;
import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.DocIds;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.index.PositionalSidecar;
import io.github.lsrlucene.query.DenseImpacts;
import io.github.lsrlucene.query.ImpactBounds;
import io.github.lsrlucene.query.ImpactSimilarity;
import io.github.lsrlucene.query.SignedImpactQuery;
import io.github.lsrlucene.query.WindowQuery;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ParallelLeafReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.FixedBitSet;
import org.apache.lucene.util.BytesRef;

/**
 * Multi-threaded batch search of query specs ({@link QuerySpec}) over an Anserini impact index,
 * writing a TREC run file (score descending, ties by docid ascending) in input query order. One
 * shared {@link IndexSearcher} with {@link ImpactSimilarity}; a fixed thread pool over queries.
 * When {@code <index>/positions} holds a positional sidecar ({@link PositionalIndexer}) it is joined
 * docid by docid through a {@link ParallelLeafReader}, so window clauses can be scored. Run lines
 * are written by {@link RunWriter}, exact per-document scores computed by {@link ExactScorer}.
 */
public final class BatchSearcher implements Closeable {
  /** Folder of the positional sidecar index inside the main index folder. */
  public static final String POSITIONS_DIR = PositionalIndexer.POSITIONS_DIR;

  private final Path indexPath;
  private final Directory mainDir;
  private final DirectoryReader mainReader;
  private final Directory posDir;
  private final DirectoryReader posReader;
  private final IndexReader reader;
  private final IndexSearcher searcher;
  private final ExternalIds ids;
  private final Set<String> fields = new HashSet<>();
  private final float maxPayload;
  private final TopPostings top; // the top-postings sidecar (approximate first phase), null when absent
  private final DenseImpacts dense; // the dense-impacts sidecar (exact search's frequent terms), null when absent
  private volatile float heapFactor = 1f; // plain queries' block-max pruning: 1 exact, less approximate
  private final String[] docIdsByDoc; // external ids by global docid (null: deleted), to check sidecars opened later
  private TextSidecar text; // the text sidecar of explicit exclusions, opened on the first spec that has one

  public BatchSearcher(String indexDir) throws IOException {
    this(indexDir, true);
  }

  /** As above; {@code denseImpacts} false leaves the dense-impacts sidecar unused (exact search on postings alone). */
  public BatchSearcher(String indexDir, boolean denseImpacts) throws IOException {
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
    searcher = impactSearcher(reader);
    top = TopPostings.open(indexPath, mainReader, docIds);
    // its rows follow the main index's docids, as do the joined reader's leaves (same ords, same maxDoc)
    dense = denseImpacts ? DenseImpacts.open(indexPath, mainReader) : null;
  }

  /** Why the dense-impacts sidecar is not used ("" when it is, "absent" when there is none). */
  public String denseImpactsProblem() {
    return dense == null ? "absent" : dense.problem == null ? "" : dense.problem;
  }

  /** Where the dense-impacts rows are read from: "mapped" (the files, off the heap), "heap", or "" when unused. */
  public String denseImpactsLayout() {
    return dense == null || dense.problem != null ? "" : dense.mapped() ? "mapped" : "heap";
  }

  /** An IndexSearcher scoring boost &times; impact, with no query cache (every query is new). */
  static IndexSearcher impactSearcher(IndexReader r) {
    IndexSearcher s = new IndexSearcher(r);
    s.setSimilarity(new ImpactSimilarity());
    s.setQueryCache(null);
    return s;
  }

  /**
   * Sets the heap factor of plain queries (positive integral weights; every other query is searched exactly): 1, the
   * default, searches exactly; h in (0, 1) prunes windows and blocks of documents against threshold / h (BMP's and
   * Seismic's parameter of the kind), faster, and may miss documents that would only just enter the top k. Hits keep
   * their exact scores.
   */
  public void setHeapFactor(float h) {
    heapFactor = checkHeapFactor(h);
  }

  private static float checkHeapFactor(float h) {
    if (!(h > 0f && h <= 1f)) {
      throw new IllegalArgumentException("heap factor must be in (0, 1], got " + h);
    }
    return h;
  }

  /** The heap factor of plain queries ({@link #setHeapFactor}). */
  public float getHeapFactor() {
    return heapFactor;
  }

  /** Whether the top-postings sidecar is present (approximate search possible). */
  public boolean hasTopPostings() {
    return top != null && top.problem == null;
  }

  /** Number of live documents. */
  public int numDocs() {
    return reader.numDocs();
  }

  /** Whether the positional sidecar is present (window clauses possible). */
  public boolean hasPositions() {
    return posReader != null;
  }

  /** Largest payload of the positional field (bound for window scores). */
  public float getMaxPayload() {
    return maxPayload;
  }

  /** External id of a Lucene docid. */
  public String docid(int luceneDocid) {
    return ids.ids[luceneDocid];
  }

  /** Lucene docids of external docids (-1 for an id not in the index), for hits handed to Python. */
  public int[] luceneDocids(String[] docids) {
    Map<String, Integer> map = ids.idMap();
    int[] out = new int[docids.length];
    for (int i = 0; i < docids.length; i++) {
      Integer d = map.get(docids[i]);
      out[i] = d == null ? -1 : d;
    }
    return out;
  }

  /** A stored field of a document by Lucene docid (e.g. Anserini's "raw"); null when not stored. */
  public String storedField(int luceneDocid, String field) throws IOException {
    if (luceneDocid < 0 || luceneDocid >= reader.maxDoc()) {
      throw new IllegalArgumentException("no document with Lucene docid " + luceneDocid);
    }
    return reader.storedFields().document(luceneDocid, java.util.Set.of(field)).get(field);
  }

  public IndexSearcher getSearcher() {
    return searcher;
  }

  /** Hits of one query: Lucene docids and true (unshifted) scores, best first. */
  public static final class Hits {
    public final int[] docs;
    public final double[] scores;

    Hits(int[] docs, double[] scores) {
      this.docs = docs;
      this.scores = scores;
    }
  }

  private void checkSpec(QuerySpec spec) {
    // an index of no documents (every vector empty, e.g. one shard of a collection) has no fields: no hits, no error
    if (!fields.contains(spec.field) && reader.maxDoc() > 0) {
      List<String> known = new ArrayList<>(fields);
      java.util.Collections.sort(known);
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
  private FixedBitSet excludedBy(String filterJson) throws IOException {
    if (reader.maxDoc() == 0) {
      return new FixedBitSet(1);
    }
    try {
      return textSidecar().matches(TextFilter.query(Json.MAPPER.readTree(filterJson), "exclude"));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new QuerySpecException("exclude: malformed JSON (" + e.getOriginalMessage() + ")");
    }
  }

  /** How many documents of this index a text filter expression (JSON) removes. */
  public int excludedCount(String filterJson) throws IOException {
    return excludedBy(filterJson).cardinality();
  }

  /** Whether each external docid (unknown: false) is one a text filter expression (JSON) removes. */
  public boolean[] excludedAmong(String filterJson, String[] docids) throws IOException {
    FixedBitSet ex = excludedBy(filterJson);
    int[] docs = luceneDocids(docids);
    boolean[] out = new boolean[docids.length];
    for (int i = 0; i < docids.length; i++) {
      out[i] = docs[i] >= 0 && docs[i] < ex.length() && ex.get(docs[i]);
    }
    return out;
  }

  /** Searches one parsed spec for its top k. */
  public Hits search(QuerySpec spec, int k) throws IOException {
    return search(spec, k, null);
  }

  /**
   * Searches one parsed spec for its top k, signed parts shifted by {@code collectionMaxImpacts} (term &rarr; max
   * impact in the whole collection; null: this index's own) when this index is one shard of a collection.
   */
  public Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts) throws IOException {
    return search(spec, k, collectionMaxImpacts, 0, 0);
  }

  /**
   * As {@link #search(QuerySpec, int, Map)}; {@code approximate} &gt; 0 searches approximately: the top
   * max(k, approximate) documents of the top-postings sidecar, rescored exactly (0: exact search), found with the
   * {@code queryCut} terms of largest weight &times; max impact (0: all terms; plain queries only).
   */
  public Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts, int approximate, int queryCut)
      throws IOException {
    return search(spec, k, collectionMaxImpacts, approximate, queryCut, heapFactor);
  }

  /** As above with this search's heap factor {@code h}, not the searcher's: threads sharing it may differ. */
  public Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts, int approximate, int queryCut,
                     float h) throws IOException {
    return search(spec, k, collectionMaxImpacts, approximate, queryCut, h, null);
  }

  /**
   * As above, exact search ({@code approximate} 0, {@code h} 1) on one shard of a collection with the queue of the
   * shards already searched ({@link #searchShards}): {@code carried}, the k best exact scores found there
   * (descending; null or fewer than k: none), start the collector's queue ({@link TopKCollector#carry}), in its
   * float score space and lowered by its rounding margin, so that it skips documents that cannot enter the
   * collection's top k (ties with the k-th still compete). A window rerank, and a spec too small for float scores
   * (every match scored in double), carry nothing. The hits may include documents below the carried k-th score.
   */
  private Hits search(QuerySpec spec, int k, Map<String, Long> collectionMaxImpacts, int approximate, int queryCut,
                      float h, double[] carried) throws IOException {
    checkHeapFactor(h);
    checkSpec(spec);
    FixedBitSet ex = excluded(spec);
    if (approximate < 0 || queryCut < 0) {
      throw new IllegalArgumentException("approximate (" + approximate + ") and queryCut (" + queryCut
          + ") must be 0 or positive");
    }
    if (approximate > 0) {
      if (!spec.windows.isEmpty()) {
        throw new QuerySpecException(spec.label() + ": approximate search takes terms and pairs; windows need exact search");
      }
      if (top == null && reader.maxDoc() == 0) {
        return new Hits(new int[0], new double[0]); // an index of no documents (a shard) has nothing to prune
      }
      if (top == null) {
        throw new QuerySpecException(spec.label() + ": approximate search needs the top-postings sidecar "
            + indexPath.resolve(io.github.lsrlucene.index.TopPostingsIndexer.DIR)
            + "; build it: lsr-lucene index --index " + indexPath + " --top-postings N");
      }
      QuerySpec first = heaviestTerms(spec, queryCut);
      Query plain = collectionMaxImpacts == null ? PlainTerms.query(reader, first, null, 1f) : null;
      // approximate: the excluded documents leave the candidates (fewer than k may remain)
      int[] docs = TextFilter.kept(top.candidates(first, plain, Math.max(k, approximate), collectionMaxImpacts, ids), ex);
      double[] scores = top.forwardScores(spec, docs);
      return ranked(docs, scores != null ? scores : ExactScorer.score(reader, spec, docs), k);
    }
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
  private static final class Matches extends org.apache.lucene.search.SimpleCollector {
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
    public org.apache.lucene.search.ScoreMode scoreMode() {
      return org.apache.lucene.search.ScoreMode.COMPLETE_NO_SCORES;
    }
  }

  /** The top k of documents by their exact scores, ties by docid. */
  private Hits ranked(int[] docs, double[] scores, int k) {
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
   * Top k of a plain query of signed terms, given as parallel arrays (no JSON): Lucene docids and scores;
   * {@code approximate} and heap factor {@code h} as in {@link #search(QuerySpec, int, Map, int, int, float)}.
   */
  public Hits searchTerms(String[] terms, double[] weights, int k, int approximate, int queryCut, float h)
      throws IOException {
    checkK(k);
    return search(QuerySpec.ofTerms("q", "contents", terms, weights), k, null, approximate, queryCut, h);
  }

  /**
   * The spec's {@code cut} terms of largest |weight| &times; max impact (of the term or its {@code neg_} twin), the
   * first phase of approximate search; the spec itself when it has no more terms, or pairs or windows.
   */
  private QuerySpec heaviestTerms(QuerySpec spec, int cut) throws IOException {
    if (cut <= 0 || spec.exactTerms.size() <= cut || !spec.pairs.isEmpty() || !spec.windows.isEmpty()) {
      return spec;
    }
    List<Map.Entry<String, Double>> terms = new ArrayList<>(spec.exactTerms.entrySet());
    Map<String, Double> bound = new HashMap<>();
    for (Map.Entry<String, Double> e : terms) {
      bound.put(e.getKey(), Math.abs(e.getValue()) * ImpactBounds.signedMaxFreq(reader, spec.field, e.getKey()));
    }
    terms.sort((a, b) -> Double.compare(bound.get(b.getKey()), bound.get(a.getKey())));
    String[] t = new String[cut];
    double[] w = new double[cut];
    for (int i = 0; i < cut; i++) {
      t[i] = terms.get(i).getKey();
      w[i] = terms.get(i).getValue();
    }
    return QuerySpec.ofTerms(spec.qid, spec.field, t, w, spec.booleanMode);
  }

  /** Top k of one query spec (JSON): Lucene docids and exact scores, best first (no run text to parse back). */
  public Hits searchSpec(String queryJson, int k, int approximate, int queryCut, float h) throws IOException {
    checkK(k);
    return search(QuerySpec.parse(queryJson, ""), k, null, approximate, queryCut, h);
  }


  /**
   * {@link #searchTerms} (with {@code json} null) or {@link #searchSpec}, the hits packed into one array that crosses
   * to Python in one copy: the n Lucene docids as little-endian 32-bit integers, then their n scores as
   * little-endian doubles (pyjnius copies an int[] and a double[] element by element: at k = 1000 that took a
   * quarter of a wiki2015 query's time).
   */
  public byte[] searchPacked(String json, String[] terms, double[] weights, int k, int approximate, int queryCut,
                             float heap) throws IOException {
    Hits h = json == null ? searchTerms(terms, weights, k, approximate, queryCut, heap)
        : searchSpec(json, k, approximate, queryCut, heap);
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(12 * h.docs.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.asIntBuffer().put(h.docs);
    b.position(4 * h.docs.length);
    b.slice().order(java.nio.ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().put(h.scores);
    return b.array();
  }

  /** Every external id, in Lucene docid order, one per line (fetched once by Python to name hits). */
  public String docidsText() {
    return String.join("\n", ids.ids);
  }

  /** Exact scores of one query spec (JSON) for the given external docids (any document, matching or not). */
  public double[] scoreDocs(String queryJson, String[] docids) throws IOException {
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    checkSpec(spec);
    return ExactScorer.score(reader, ids, spec, docids);
  }

  /**
   * Searches one query spec (JSON) for its top k, best first, as three columns of newline-separated values:
   * docids, scores as the run file writes them, and the exact scores ({@link Double#toString}), which order hits
   * of several shard indexes exactly as one index would. On one shard of a collection, {@code terms[i]}'s max
   * impact in the whole collection is {@code maxImpacts[i]} (from {@link #maxImpacts} of every shard; none: this
   * index's own), so that signed queries are shifted, and scored to the bit, as on one index of the collection.
   */
  public String[] searchColumns(String queryJson, int k, String[] terms, long[] maxImpacts) throws IOException {
    return searchColumns(queryJson, k, terms, maxImpacts, 0, 0, heapFactor);
  }

  /**
   * As {@link #searchColumns(String, int, String[], long[])}, approximate and heap factor {@code h} as
   * {@link #search(QuerySpec, int, Map, int, int, float)}.
   */
  public String[] searchColumns(String queryJson, int k, String[] terms, long[] maxImpacts, int approximate,
                                int queryCut, float h) throws IOException {
    checkK(k);
    if (terms.length != maxImpacts.length) {
      throw new IllegalArgumentException(terms.length + " terms but " + maxImpacts.length + " max impacts");
    }
    Map<String, Long> collection = null;
    if (terms.length > 0) {
      collection = new HashMap<>(terms.length * 2);
      for (int i = 0; i < terms.length; i++) {
        collection.put(terms[i], maxImpacts[i]);
      }
    }
    Hits hits = search(QuerySpec.parse(queryJson, ""), k, collection, approximate, queryCut, h);
    return columns(hits.docs, hits.scores);
  }

  /**
   * Searches a batch of query specs (JSONL text, one spec a line) for their top k each, as one shard of a
   * collection, with {@code threads} threads, and packs every query's hits into one array ({@link ShardHits}):
   * the fast path of distributed search, one call and one copy per batch. Spec i subtracts the collection's max
   * impacts {@code boundTerms}/{@code boundValues} of its {@code boundCounts[i]} entries, which follow spec i - 1's
   * (none: the index's own, searched exactly as one index searches it); approximate and heap factor {@code h} as
   * {@link #search(QuerySpec, int, Map, int, int, float)}.
   */
  public byte[] searchBatch(String specsJsonl, int k, int[] boundCounts, String[] boundTerms, long[] boundValues,
                            int approximate, int queryCut, float h, int threads) throws IOException {
    RunWriter.checkArgs(threads, "batch");
    List<QuerySpec> specs = parseBatch(specsJsonl, new BatchSearcher[] {this});
    return searchParsed(specs, batchBounds(specs.size(), boundCounts, boundTerms, boundValues), k, approximate,
        queryCut, h, threads);
  }

  /** {@link #searchBatch} of specs already parsed and checked against this index, with their bounds. */
  private byte[] searchParsed(List<QuerySpec> specs, List<Map<String, Long>> bounds, int k, int approximate,
                              int queryCut, float h, int threads) throws IOException {
    checkK(k);
    checkHeapFactor(h);
    Hits[] hits = new Hits[specs.size()];
    runEach(hits.length, threads, i -> hits[i] = search(specs.get(i), k, bounds.get(i), approximate, queryCut, h));
    return ShardHits.pack(hits, ids);
  }

  /** The specs of a batch (JSONL text, one spec a line), each checked against every index of {@code shards}. */
  private static List<QuerySpec> parseBatch(String specsJsonl, BatchSearcher[] shards) {
    List<QuerySpec> specs = new ArrayList<>();
    for (String line : specsJsonl.split("\n")) {
      if (!line.isBlank()) {
        QuerySpec spec = QuerySpec.parse(line, "");
        for (BatchSearcher shard : shards) {
          shard.checkSpec(spec);
        }
        specs.add(spec);
      }
    }
    return specs;
  }

  /** Each spec's collection max impacts ({@link #searchBatch}'s layout; null: none). */
  private static List<Map<String, Long>> batchBounds(int specs, int[] boundCounts, String[] boundTerms,
                                                     long[] boundValues) {
    if (boundCounts.length != specs || boundTerms.length != boundValues.length) {
      throw new IllegalArgumentException(specs + " specs, " + boundCounts.length + " bound counts, "
          + boundTerms.length + " bound terms and " + boundValues.length + " values");
    }
    List<Map<String, Long>> bounds = new ArrayList<>(specs);
    int at = 0;
    for (int count : boundCounts) {
      Map<String, Long> map = null;
      if (count > 0) {
        map = new HashMap<>(count * 2);
        for (int j = at; j < at + count; j++) {
          map.put(boundTerms[j], boundValues[j]);
        }
      }
      bounds.add(map);
      at += count;
    }
    return bounds;
  }

  /** The packed hits of one batch on several shards ({@link #searchShards}), and each shard's seconds. */
  public static final class ShardBatch {
    private final byte[][] packs;
    public final double[] seconds;

    ShardBatch(byte[][] packs, double[] seconds) {
      this.packs = packs;
      this.seconds = seconds;
    }

    /** Shard {@code i}'s hits ({@link ShardHits} layout). */
    public byte[] pack(int i) {
      return packs[i];
    }
  }

  /**
   * {@link #searchBatch} of the same batch on several shards held by one process (one JVM for them all). Exact
   * search ({@code approximate} 0, {@code h} 1) of several shards carries each spec's threshold across them, as one
   * index carries its collector's queue across its segments ({@link #searchCarried}); approximate search searches
   * the shards side by side on {@code threads} threads (each shard's batch on one; one shard: on them all).
   */
  public static ShardBatch searchShards(BatchSearcher[] shards, String specsJsonl, int k, int[] boundCounts,
                                        String[] boundTerms, long[] boundValues, int approximate, int queryCut,
                                        float h, int threads) throws IOException {
    RunWriter.checkArgs(threads, "batch");
    List<QuerySpec> specs = parseBatch(specsJsonl, shards); // once for all shards, checked against each
    List<Map<String, Long>> bounds = batchBounds(specs.size(), boundCounts, boundTerms, boundValues);
    if (shards.length > 1 && approximate == 0 && checkHeapFactor(h) == 1f && specs.size() >= threads) {
      return searchCarried(shards, specs, bounds, k, threads);
    }
    byte[][] packs = new byte[shards.length][];
    double[] seconds = new double[shards.length];
    runEach(shards.length, threads, s -> {
      long started = System.nanoTime();
      packs[s] = shards[s].searchParsed(specs, bounds, k, approximate, queryCut, h, shards.length == 1 ? threads : 1);
      seconds[s] = (System.nanoTime() - started) / 1e9;
    });
    return new ShardBatch(packs, seconds);
  }

  /**
   * Exact search of a batch on several shards with each spec's queue carried across them (a batch of at least as
   * many specs as threads: one spec searched shard after shard is slower than its shards side by side on idle threads,
   * so a smaller batch, a single query say, is searched side by side): each spec searched on one
   * thread (threads over the batch's specs), shard after shard, the largest first; once the shards searched return
   * k hits together, their k best exact scores start the next shard's queue ({@link TopKCollector#carry}), so it
   * skips what cannot enter the collection's top k, as one index skips across its segments: its k-th best F is a
   * floor (the collection's top k holds k documents of at least F; ties at F still compete), and a later shard
   * returns only its hits of at least F. Once every shard is searched, each returns only its hits of at least the
   * node's k-th best score (the earlier shards' lists cut too): at k=1,000 on 4 shards about half what they found.
   * The merged top k is the one of every shard's full top k.
   */
  private static ShardBatch searchCarried(BatchSearcher[] shards, List<QuerySpec> specs,
                                          List<Map<String, Long>> bounds, int k, int threads) throws IOException {
    checkK(k);
    Integer[] order = new Integer[shards.length]; // largest first (its k-th score is the highest floor), then by number
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> shards[a].reader.maxDoc() != shards[b].reader.maxDoc()
        ? Integer.compare(shards[b].reader.maxDoc(), shards[a].reader.maxDoc()) : Integer.compare(a, b));
    Hits[][] hits = new Hits[shards.length][specs.size()];
    java.util.concurrent.atomic.AtomicLongArray nanos = new java.util.concurrent.atomic.AtomicLongArray(shards.length);
    runEach(specs.size(), threads, q -> {
      QuerySpec spec = specs.get(q);
      boolean carries = !spec.reranks(); // a rerank's final scores are no floor
      double[] best = new double[0]; // the best k exact scores of the shards searched so far, descending
      for (int s : order) {
        long started = System.nanoTime();
        boolean full = carries && best.length == k;
        Hits found = shards[s].search(spec, k, bounds.get(q), 0, 0, 1f, full ? best : null);
        hits[s][q] = full ? atLeast(found, best[k - 1]) : found;
        best = bestScores(best, hits[s][q].scores, k);
        nanos.addAndGet(s, System.nanoTime() - started);
      }
      if (carries && best.length == k) { // the node's k-th best: a hit below it is not in the collection's top k
        for (int s : order) {
          hits[s][q] = atLeast(hits[s][q], best[k - 1]);
        }
      }
    });
    byte[][] packs = new byte[shards.length][];
    double[] seconds = new double[shards.length];
    for (int s = 0; s < shards.length; s++) {
      packs[s] = ShardHits.pack(hits[s], shards[s].ids);
      seconds[s] = nanos.get(s) / 1e9;
    }
    return new ShardBatch(packs, seconds);
  }

  /** A task of {@link #runEach}. */
  private interface NumberedTask {
    void run(int i) throws IOException;
  }

  /**
   * Runs {@code task} for 0 .. n - 1 on {@code threads} daemon threads (one thread or one task: on this one), and
   * rethrows the first failure as the task threw it.
   */
  private static void runEach(int n, int threads, NumberedTask task) throws IOException {
    if (threads == 1 || n < 2) {
      for (int i = 0; i < n; i++) {
        task.run(i);
      }
      return;
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
        Math.min(threads, n), r -> {
          Thread t = new Thread(r, "lsr-shard-search");
          t.setDaemon(true);
          return t;
        });
    try {
      List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        final int at = i;
        futures.add(pool.submit(() -> {
          try {
            task.run(at);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }));
      }
      for (java.util.concurrent.Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while searching a batch", e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof java.io.UncheckedIOException) {
        throw ((java.io.UncheckedIOException) c).getCause();
      }
      if (c instanceof RuntimeException) {
        throw (RuntimeException) c;
      }
      throw new IOException(c);
    } finally {
      pool.shutdownNow();
    }
  }

  /** The hits of at least {@code floor} (best first: a prefix). */
  private static Hits atLeast(Hits hits, double floor) {
    int m = 0;
    while (m < hits.scores.length && hits.scores[m] >= floor) {
      m++;
    }
    return m == hits.scores.length ? hits
        : new Hits(Arrays.copyOf(hits.docs, m), Arrays.copyOf(hits.scores, m));
  }

  /** The best k of two descending score lists, descending. */
  private static double[] bestScores(double[] a, double[] b, int k) {
    double[] out = new double[Math.min(k, a.length + b.length)];
    int i = 0;
    int j = 0;
    for (int o = 0; o < out.length; o++) {
      out[o] = j >= b.length || (i < a.length && a[i] >= b[j]) ? a[i++] : b[j++];
    }
    return out;
  }

  /**
   * Second phase of a window {@code rerank} over shards: adds the spec's window scores to the first-stage
   * {@code scores} of {@code docids} (the collection's first-stage top N held by this shard) and returns them
   * as {@link #searchColumns} does, in input order; the caller sorts the shards' hits together.
   */
  public String[] rescoreColumns(String queryJson, String[] docids, double[] scores) throws IOException {
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    checkSpec(spec);
    if (docids.length != scores.length) {
      throw new IllegalArgumentException(docids.length + " docids but " + scores.length + " scores");
    }
    int[] docs = luceneDocids(docids);
    for (int i = 0; i < docs.length; i++) {
      if (docs[i] < 0) {
        throw new IllegalArgumentException("document " + docids[i] + " is not in " + indexPath);
      }
    }
    double[] out = scores.clone();
    new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, docs, WindowRescorer.docOrder(docs), out);
    return columns(docs, out);
  }

  /** Max impact of every term of {@code field} in this index, one {@code term<TAB>max} line each. */
  public String maxImpacts(String field) throws IOException {
    Map<String, Long> max = new TreeMap<>();
    for (LeafReaderContext ctx : reader.leaves()) {
      Terms terms = ctx.reader().terms(field);
      if (terms == null) {
        continue;
      }
      TermsEnum te = terms.iterator();
      for (BytesRef t = te.next(); t != null; t = te.next()) {
        String term = t.utf8ToString();
        max.merge(term, ImpactBounds.maxFreq(ctx.reader(), field, term), Math::max);
      }
    }
    StringBuilder out = new StringBuilder(max.size() * 16);
    for (Map.Entry<String, Long> e : max.entrySet()) {
      out.append(e.getKey()).append('\t').append(e.getValue()).append('\n');
    }
    return out.toString();
  }

  /**
   * As {@link #maxImpacts(String)} for the given terms only (a term in no segment is left out): what a distributed
   * search needs of a shard for its queries' subtracted terms, without reading the whole vocabulary.
   */
  public String maxImpacts(String field, String[] terms) throws IOException {
    StringBuilder out = new StringBuilder(terms.length * 16);
    for (String term : new java.util.TreeSet<>(Arrays.asList(terms))) {
      long max = ImpactBounds.maxFreq(reader, field, term);
      if (max > 0) {
        out.append(term).append('\t').append(max).append('\n');
      }
    }
    return out.toString();
  }

  /**
   * Whether {@code field} holds a term starting with {@code prefix} (e.g. {@code neg_}: when no shard holds one,
   * positive query weights subtract nothing, and a distributed search need not ask for their max impacts).
   */
  public boolean hasTermWithPrefix(String field, String prefix) throws IOException {
    for (LeafReaderContext ctx : reader.leaves()) {
      if (ImpactBounds.hasTermWithPrefix(ctx.reader(), field, prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Docids, scores as written and exact scores, each column newline-separated (see {@link #searchColumns}). */
  private String[] columns(int[] docs, double[] scores) {
    StringBuilder docids = new StringBuilder(docs.length * (ids.maxIdLength + 1));
    StringBuilder shown = new StringBuilder(docs.length * 16);
    StringBuilder exact = new StringBuilder(docs.length * 24);
    RunBuffer score = new RunBuffer(32);
    for (int i = 0; i < docs.length; i++) {
      String sep = i == 0 ? "" : "\n";
      score.length = 0;
      score.putScore(scores[i]);
      docids.append(sep).append(ids.ids[docs[i]]);
      shown.append(sep).append(new String(score.bytes, 0, score.length, StandardCharsets.UTF_8));
      exact.append(sep).append(Double.toString(scores[i]));
    }
    return new String[] {docids.toString(), shown.toString(), exact.toString()};
  }

  private static void checkK(int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
  }

  /**
   * Searches every query of a query-spec JSONL file with {@code threads} threads and writes a TREC
   * run to {@code runPath} in input order; returns the number of queries. All lines are parsed
   * before searching, so a bad line fails before any output is written.
   */
  public int search(String queriesJsonl, String runPath, int k, int threads, String tag) throws IOException {
    return search(queriesJsonl, runPath, k, threads, tag, 0, 0, heapFactor);
  }

  /**
   * As {@link #search(String, String, int, int, String)}, approximate and heap factor {@code h} as
   * {@link #search(QuerySpec, int, Map, int, int, float)}.
   */
  public int search(String queriesJsonl, String runPath, int k, int threads, String tag, int approximate, int queryCut,
                    float h) throws IOException {
    checkK(k);
    checkHeapFactor(h);
    RunWriter.checkArgs(threads, tag);
    List<QuerySpec> specs = QuerySpec.parseFile(queriesJsonl, this::checkSpec);
    return new RunWriter(this, ids).write(specs, runPath, k, threads, tag, approximate, queryCut, h);
  }

  @Override
  public void close() throws IOException {
    if (reader != mainReader) {
      reader.close();
    }
    mainReader.close();
    if (top != null) {
      top.close();
    }
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
