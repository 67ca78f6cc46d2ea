package io.github.lsrlucene.search;

import io.github.lsrlucene.query.ImpactBounds;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.FixedBitSet;

/**
 * The Python bridge of search (the methods pyjnius calls, {@code lsr_lucene.search.spec_searcher}): query specs as
 * JSON or parallel arrays in, hits as packed bytes or newline-separated columns out, one crossing per call. Search
 * itself is {@link SingleIndexSearcher}'s (one index) and {@link ShardSearcher}'s (several shards); a batch from a
 * spec file is written as a TREC run (score descending, ties by docid ascending, input query order) by
 * {@link RunWriter} on a fixed thread pool.
 */
public final class BatchSearcher implements Closeable {
  /** Folder of the positional sidecar index inside the main index folder. */
  public static final String POSITIONS_DIR = SingleIndexSearcher.POSITIONS_DIR;

  private final SingleIndexSearcher index;
  private volatile float heapFactor = 1f; // plain queries' block-max pruning: 1 exact, less approximate

  public BatchSearcher(String indexDir) throws IOException {
    this(indexDir, true);
  }

  /** As above; {@code denseImpacts} false leaves the dense-impacts sidecar unused (exact search on postings alone). */
  public BatchSearcher(String indexDir, boolean denseImpacts) throws IOException {
    index = new SingleIndexSearcher(indexDir, denseImpacts);
  }

  /** Why the dense-impacts sidecar is not used ("" when it is, "absent" when there is none). */
  public String denseImpactsProblem() {
    return index.dense == null ? "absent" : index.dense.problem == null ? "" : index.dense.problem;
  }

  /** Where the dense-impacts rows are read from: "mapped" (the files, off the heap), "heap", or "" when unused. */
  public String denseImpactsLayout() {
    return index.dense == null || index.dense.problem != null ? "" : index.dense.mapped() ? "mapped" : "heap";
  }

  /**
   * Sets the heap factor of plain queries (positive integral weights; every other query is searched exactly): 1, the
   * default, searches exactly; h in (0, 1) prunes windows and blocks of documents against threshold / h (BMP's and
   * Seismic's parameter of the kind), faster, and may miss documents that would only just enter the top k. Hits keep
   * their exact scores.
   */
  public void setHeapFactor(float h) {
    heapFactor = SingleIndexSearcher.checkHeapFactor(h);
  }

  /** The heap factor of plain queries ({@link #setHeapFactor}). */
  public float getHeapFactor() {
    return heapFactor;
  }

  /** Number of live documents. */
  public int numDocs() {
    return index.reader.numDocs();
  }

  /** Whether the positional sidecar is present (window clauses possible). */
  public boolean hasPositions() {
    return index.hasPositions();
  }

  /** Largest payload of the positional field (bound for window scores). */
  public float getMaxPayload() {
    return index.maxPayload;
  }

  /** External id of a Lucene docid. */
  public String docid(int luceneDocid) {
    return index.ids.ids[luceneDocid];
  }

  /** Every external id, in Lucene docid order, one per line (fetched once by Python to name hits). */
  public String docidsText() {
    return String.join("\n", index.ids.ids);
  }

  /** Lucene docids of external docids (-1 for an id not in the index), for hits handed to Python. */
  public int[] luceneDocids(String[] docids) {
    Map<String, Integer> map = index.ids.idMap();
    int[] out = new int[docids.length];
    for (int i = 0; i < docids.length; i++) {
      Integer d = map.get(docids[i]);
      out[i] = d == null ? -1 : d;
    }
    return out;
  }

  /** A stored field of a document by Lucene docid (e.g. Anserini's "raw"); null when not stored. */
  public String storedField(int luceneDocid, String field) throws IOException {
    if (luceneDocid < 0 || luceneDocid >= index.reader.maxDoc()) {
      throw new IllegalArgumentException("no document with Lucene docid " + luceneDocid);
    }
    return index.reader.storedFields().document(luceneDocid, Set.of(field)).get(field);
  }

  /**
   * The stored texts of many documents by Lucene docid ({@link StoredTexts#contents}), as an instance method: pyjnius
   * resolves a static method's id per call, and that is not safe when several threads call it at once (a JVM crash
   * in GetStaticMethodID was seen), while an instance's methods are.
   */
  public String[] storedContents(int[] luceneDocids, String field) throws IOException {
    return StoredTexts.contents(index.reader, luceneDocids, field);
  }

  public IndexSearcher getSearcher() {
    return index.searcher;
  }

  /** How many documents of this index a text filter expression (JSON) removes. */
  public int excludedCount(String filterJson) throws IOException {
    return index.excludedBy(filterJson).cardinality();
  }

  /** Whether each external docid (unknown: false) is one a text filter expression (JSON) removes. */
  public boolean[] excludedAmong(String filterJson, String[] docids) throws IOException {
    FixedBitSet ex = index.excludedBy(filterJson);
    int[] docs = luceneDocids(docids);
    boolean[] out = new boolean[docids.length];
    for (int i = 0; i < docids.length; i++) {
      out[i] = docs[i] >= 0 && docs[i] < ex.length() && ex.get(docs[i]);
    }
    return out;
  }

  /**
   * Top k of one query spec: a plain query of signed terms given as parallel arrays ({@code json} null) or a spec as
   * JSON, with heap factor {@code heap}; the hits packed into one array that crosses to Python in one copy: the n
   * Lucene docids as little-endian 32-bit integers, then their n exact scores as little-endian doubles (pyjnius
   * copies an int[] and a double[] element by element: at k = 1000 that took a quarter of a wiki2015 query's time).
   */
  public byte[] searchPacked(String json, String[] terms, double[] weights, int k, float heap) throws IOException {
    SingleIndexSearcher.checkK(k);
    QuerySpec spec = json == null ? QuerySpec.ofTerms("q", "contents", terms, weights) : QuerySpec.parse(json, "");
    Hits h = index.search(spec, k, null, heap);
    ByteBuffer b = ByteBuffer.allocate(12 * h.docs.length).order(ByteOrder.LITTLE_ENDIAN);
    b.asIntBuffer().put(h.docs);
    b.position(4 * h.docs.length);
    b.slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().put(h.scores);
    return b.array();
  }

  /** Exact scores of one query spec (JSON) for the given external docids (any document, matching or not). */
  public double[] scoreDocs(String queryJson, String[] docids) throws IOException {
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    index.checkSpec(spec);
    return ExactScorer.score(index.reader, index.ids, spec, docids);
  }

  /**
   * Searches one query spec (JSON) for its top k, best first, as three columns of newline-separated values:
   * docids, scores as the run file writes them, and the exact scores ({@link Double#toString}), which order hits
   * of several shard indexes exactly as one index would. On one shard of a collection, {@code terms[i]}'s max
   * impact in the whole collection is {@code maxImpacts[i]} (from {@link #maxImpacts} of every shard; none: this
   * index's own), so that signed queries are shifted, and scored to the bit, as on one index of the collection.
   */
  public String[] searchColumns(String queryJson, int k, String[] terms, long[] maxImpacts) throws IOException {
    return searchColumns(queryJson, k, terms, maxImpacts, heapFactor);
  }

  /** As {@link #searchColumns(String, int, String[], long[])} with heap factor {@code h} ({@link #setHeapFactor}). */
  public String[] searchColumns(String queryJson, int k, String[] terms, long[] maxImpacts, float h)
      throws IOException {
    SingleIndexSearcher.checkK(k);
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
    Hits hits = index.search(QuerySpec.parse(queryJson, ""), k, collection, h);
    return columns(hits.docs, hits.scores);
  }

  /**
   * Second phase of a window {@code rerank} over shards: adds the spec's window scores to the first-stage
   * {@code scores} of {@code docids} (the collection's first-stage top N held by this shard) and returns them
   * as {@link #searchColumns} does, in input order; the caller sorts the shards' hits together.
   */
  public String[] rescoreColumns(String queryJson, String[] docids, double[] scores) throws IOException {
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    index.checkSpec(spec);
    if (docids.length != scores.length) {
      throw new IllegalArgumentException(docids.length + " docids but " + scores.length + " scores");
    }
    int[] docs = luceneDocids(docids);
    for (int i = 0; i < docs.length; i++) {
      if (docs[i] < 0) {
        throw new IllegalArgumentException("document " + docids[i] + " is not in " + index.indexPath);
      }
    }
    return columns(docs, index.withWindows(spec, docs, scores));
  }

  /** Docids, scores as written and exact scores, each column newline-separated (see {@link #searchColumns}). */
  private String[] columns(int[] docs, double[] scores) {
    StringBuilder docids = new StringBuilder(docs.length * (index.ids.maxIdLength + 1));
    StringBuilder shown = new StringBuilder(docs.length * 16);
    StringBuilder exact = new StringBuilder(docs.length * 24);
    RunBuffer score = new RunBuffer(32);
    for (int i = 0; i < docs.length; i++) {
      String sep = i == 0 ? "" : "\n";
      score.length = 0;
      score.putScore(scores[i]);
      docids.append(sep).append(index.ids.ids[docs[i]]);
      shown.append(sep).append(new String(score.bytes, 0, score.length, StandardCharsets.UTF_8));
      exact.append(sep).append(Double.toString(scores[i]));
    }
    return new String[] {docids.toString(), shown.toString(), exact.toString()};
  }

  /** Max impact of every term of {@code field} in this index, one {@code term<TAB>max} line each. */
  public String maxImpacts(String field) throws IOException {
    Map<String, Long> max = new TreeMap<>();
    for (LeafReaderContext ctx : index.reader.leaves()) {
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
    for (String term : new TreeSet<>(Arrays.asList(terms))) {
      long max = ImpactBounds.maxFreq(index.reader, field, term);
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
    for (LeafReaderContext ctx : index.reader.leaves()) {
      if (ImpactBounds.hasTermWithPrefix(ctx.reader(), field, prefix)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Searches every query of a query-spec JSONL file with {@code threads} threads and writes a TREC
   * run to {@code runPath} in input order; returns the number of queries. All lines are parsed
   * before searching, so a bad line fails before any output is written.
   */
  public int search(String queriesJsonl, String runPath, int k, int threads, String tag) throws IOException {
    return search(queriesJsonl, runPath, k, threads, tag, heapFactor);
  }

  /** As {@link #search(String, String, int, int, String)} with heap factor {@code h} ({@link #setHeapFactor}). */
  public int search(String queriesJsonl, String runPath, int k, int threads, String tag, float h) throws IOException {
    SingleIndexSearcher.checkK(k);
    SingleIndexSearcher.checkHeapFactor(h);
    RunWriter.checkArgs(threads, tag);
    List<QuerySpec> specs = QuerySpec.parseFile(queriesJsonl, index::checkSpec);
    return new RunWriter(index).write(specs, runPath, k, threads, tag, h);
  }

  /**
   * A batch of query specs (JSONL text, one spec a line) searched on several indexes held by one process (one JVM
   * for them all), each index's top k packed ({@link ShardSearcher#search}: its bounds, heap factor and threads).
   */
  public static ShardSearcher.ShardBatch searchShards(BatchSearcher[] shards, String specsJsonl, int k,
                                                      int[] boundCounts, String[] boundTerms, long[] boundValues,
                                                      float h, int threads) throws IOException {
    SingleIndexSearcher[] indexes = new SingleIndexSearcher[shards.length];
    for (int i = 0; i < shards.length; i++) {
      indexes[i] = shards[i].index;
    }
    return ShardSearcher.search(indexes, specsJsonl, k, boundCounts, boundTerms, boundValues, h, threads);
  }

  @Override
  public void close() throws IOException {
    index.close();
  }
}
