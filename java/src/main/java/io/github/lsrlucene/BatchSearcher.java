package io.github.lsrlucene;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValuesType;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ParallelLeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TwoPhaseIterator;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * Multi-threaded batch search of query specs ({@link QuerySpec}) over an Anserini impact index,
 * writing a TREC run file (score descending, ties by docid ascending) in input query order. One
 * shared {@link IndexSearcher} with {@link ImpactSimilarity}; a fixed thread pool over queries.
 * When {@code <index>/positions} holds a positional sidecar ({@link PositionalIndexer}) it is joined
 * docid by docid through a {@link ParallelLeafReader}, so window clauses can be scored.
 */
public final class BatchSearcher implements Closeable {
  /** Folder of the positional sidecar index inside the main index folder. */
  public static final String POSITIONS_DIR = "positions";

  static {
    // Queries built from long documents (or many pairs) can exceed Lucene's default of 1024 clauses.
    if (IndexSearcher.getMaxClauseCount() < 65536) {
      IndexSearcher.setMaxClauseCount(65536);
    }
  }

  private final Path indexPath;
  private final Directory mainDir;
  private final DirectoryReader mainReader;
  private final Directory posDir;
  private final DirectoryReader posReader;
  private final IndexReader reader;
  private final IndexSearcher searcher;
  private final String[] ids;
  private final int[] idOrd;
  private final int[] ordToDoc;
  private final Set<String> fields = new HashSet<>();
  private final float maxPayload;
  private final int maxIdLength;
  private final byte[][] idBytes;
  private volatile Map<String, Integer> idToDoc;

  public BatchSearcher(String indexDir) throws IOException {
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
    ids = readIds(mainReader, "id");
    Path pp = indexPath.resolve(POSITIONS_DIR);
    Directory pd = null;
    DirectoryReader pr = null;
    float mp = WindowQuery.UNKNOWN_MAX_PAYLOAD;
    IndexReader r = mainReader;
    if (Files.isDirectory(pp)) {
      pd = FSDirectory.open(pp);
      if (DirectoryReader.indexExists(pd)) {
        pr = DirectoryReader.open(pd);
        r = joinPositions(pr);
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
    idOrd = rankIds(ids);
    ordToDoc = new int[idOrd.length];
    for (int d = 0; d < idOrd.length; d++) {
      ordToDoc[idOrd[d]] = d;
    }
    int longest = 0;
    idBytes = new byte[ids.length][];
    for (int d = 0; d < ids.length; d++) {
      idBytes[d] = ids[d] == null ? new byte[0] : ids[d].getBytes(StandardCharsets.UTF_8);
      longest = Math.max(longest, idBytes[d].length);
    }
    maxIdLength = longest;
    searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new ImpactSimilarity());
    searcher.setQueryCache(null);
  }

  private IndexReader joinPositions(DirectoryReader pr) throws IOException {
    String where = indexPath.resolve(POSITIONS_DIR).toString();
    if (mainReader.leaves().size() != 1) {
      throw new IllegalStateException(where + ": the main index has " + mainReader.leaves().size()
          + " segments, so its docids no longer match the positional field; rebuild the positional field");
    }
    if (pr.leaves().size() != 1) {
      throw new IllegalStateException(where + ": the positional index has " + pr.leaves().size() + " segments (expected 1); rebuild it");
    }
    LeafReader m = mainReader.leaves().get(0).reader();
    LeafReader p = pr.leaves().get(0).reader();
    if (m.maxDoc() != p.maxDoc()) {
      throw new IllegalStateException(where + ": holds " + p.maxDoc() + " documents but the index has " + m.maxDoc()
          + "; rebuild the positional field");
    }
    String[] pids = readIds(pr, PositionalIndexer.ID_FIELD);
    for (int d = 0; d < ids.length; d++) {
      if (ids[d] != null && !ids[d].equals(pids[d])) {
        throw new IllegalStateException(where + ": docid " + d + " is '" + ids[d] + "' in the index but '" + pids[d]
            + "' in the positional field; rebuild the positional field");
      }
    }
    return new ParallelLeafReader(false, m, p);
  }

  /** External ids by global Lucene docid (null for deleted documents). */
  static String[] readIds(IndexReader r, String field) throws IOException {
    String[] out = new String[r.maxDoc()];
    for (LeafReaderContext ctx : r.leaves()) {
      LeafReader lr = ctx.reader();
      Bits live = lr.getLiveDocs();
      FieldInfo fi = lr.getFieldInfos().fieldInfo(field);
      if (fi == null) {
        if (lr.numDocs() > 0) {
          throw new IllegalArgumentException("index has no '" + field + "' field; is it an Anserini index?");
        }
        continue;
      }
      if (fi.getDocValuesType() == DocValuesType.BINARY) {
        BinaryDocValues dv = lr.getBinaryDocValues(field);
        for (int d = dv.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = dv.nextDoc()) {
          out[ctx.docBase + d] = dv.binaryValue().utf8ToString();
        }
      } else if (fi.getDocValuesType() == DocValuesType.SORTED) {
        SortedDocValues dv = lr.getSortedDocValues(field);
        for (int d = dv.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = dv.nextDoc()) {
          out[ctx.docBase + d] = dv.lookupOrd(dv.ordValue()).utf8ToString();
        }
      }
      StoredFields sf = null;
      Set<String> only = Set.of(field);
      for (int d = 0; d < lr.maxDoc(); d++) {
        if (out[ctx.docBase + d] == null && (live == null || live.get(d))) {
          if (sf == null) {
            sf = lr.storedFields();
          }
          String id = sf.document(d, only).get(field);
          if (id == null) {
            throw new IllegalArgumentException("document " + (ctx.docBase + d) + " has no '" + field + "' value");
          }
          out[ctx.docBase + d] = id;
        }
        if (live != null && !live.get(d)) {
          out[ctx.docBase + d] = null;
        }
      }
    }
    return out;
  }

  /** Rank of each docid's external id in ascending UTF-8 byte order (= Python str order). */
  static int[] rankIds(String[] ids) {
    int n = ids.length;
    byte[][] bytes = new byte[n][];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
      bytes[i] = ids[i] == null ? null : ids[i].getBytes(StandardCharsets.UTF_8);
    }
    Arrays.sort(order, (a, b) -> {
      byte[] x = bytes[a];
      byte[] y = bytes[b];
      if (x == null || y == null) {
        return x == null ? (y == null ? Integer.compare(a, b) : 1) : -1;
      }
      int c = Arrays.compareUnsigned(x, y);
      return c != 0 ? c : Integer.compare(a, b);
    });
    int[] rank = new int[n];
    for (int i = 0; i < n; i++) {
      rank[order[i]] = i;
    }
    return rank;
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
    return ids[luceneDocid];
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
    if (!fields.contains(spec.field)) {
      List<String> known = new ArrayList<>(fields);
      java.util.Collections.sort(known);
      throw new QuerySpecException(spec.label() + ": field '" + spec.field + "' is not in the index (fields: " + known + ")");
    }
    if (!spec.windows.isEmpty() && posReader == null) {
      throw new QuerySpecException(spec.label() + ": windows need the positional field, but "
          + indexPath.resolve(POSITIONS_DIR) + " does not exist; build it first (PositionalIndexer)");
    }
  }

  /** Searches one parsed spec for its top k. */
  public Hits search(QuerySpec spec, int k) throws IOException {
    checkSpec(spec);
    boolean rerank = spec.rerank > 0 && !spec.windows.isEmpty();
    int n = rerank ? Math.max(k, spec.rerank) : k;
    Query q = searcher.rewrite(spec.firstStage(PositionalIndexer.FIELD, maxPayload));
    double shift = q instanceof SignedImpactQuery.Shifted ? ((SignedImpactQuery.Shifted) q).getShift() : 0.0;
    TopKCollector c = new TopKCollector(n, idOrd, ordToDoc);
    searcher.search(q, c);
    float[] fs = new float[c.size()];
    int[] docs = c.sorted(fs);
    double[] scores = new double[docs.length];
    for (int i = 0; i < docs.length; i++) {
      scores[i] = (double) fs[i] - shift;
    }
    if (rerank) {
      new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, docs, docOrder(docs), scores);
      Integer[] order = new Integer[docs.length];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (a, b) -> {
        int cmp = Double.compare(scores[b], scores[a]);
        return cmp != 0 ? cmp : Integer.compare(idOrd[docs[a]], idOrd[docs[b]]);
      });
      int m = Math.min(k, docs.length);
      int[] d2 = new int[m];
      double[] s2 = new double[m];
      for (int i = 0; i < m; i++) {
        d2[i] = docs[order[i]];
        s2[i] = scores[order[i]];
      }
      return new Hits(d2, s2);
    }
    return new Hits(docs, scores);
  }

  /** Indices of {@code docs} in increasing docid order. */
  private static int[] docOrder(int[] docs) {
    long[] packed = new long[docs.length];
    for (int i = 0; i < docs.length; i++) {
      packed[i] = ((long) docs[i] << 32) | i;
    }
    Arrays.sort(packed);
    int[] order = new int[docs.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = (int) packed[i];
    }
    return order;
  }

  /** Exact scores of one query spec (JSON) for the given external docids (any document, matching or not). */
  public double[] scoreDocs(String queryJson, String[] docids) throws IOException {
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    checkSpec(spec);
    Map<String, Integer> map = idMap();
    int[] docs = new int[docids.length];
    for (int i = 0; i < docids.length; i++) {
      Integer d = map.get(docids[i]);
      if (d == null) {
        throw new QuerySpecException(spec.label() + ": docid '" + docids[i] + "' is not in the index");
      }
      docs[i] = d;
    }
    double[] out = new double[docs.length];
    int[] order = docOrder(docs);
    List<LeafReaderContext> leaves = reader.leaves();
    // docs in docid order, leaf by leaf: each term's postings are looked up once per leaf and walked forward
    for (int from = 0; from < order.length; ) {
      LeafReaderContext ctx = leaves.get(ReaderUtil.subIndex(docs[order[from]], leaves));
      int end = ctx.docBase + ctx.reader().maxDoc();
      int to = from;
      while (to < order.length && docs[order[to]] < end) {
        to++;
      }
      Terms terms = ctx.reader().terms(spec.field);
      if (terms != null) {
        TermsEnum te = terms.iterator();
        for (Map.Entry<String, Float> e : spec.terms.entrySet()) {
          long[] pos = freqs(te, e.getKey(), docs, order, from, to, ctx.docBase);
          long[] neg = freqs(te, SignedImpactQuery.NEG_PREFIX + e.getKey(), docs, order, from, to, ctx.docBase);
          for (int k = from; k < to; k++) {
            out[order[k]] += (double) e.getValue() * (pos[k - from] - neg[k - from]);
          }
        }
        for (SignedImpactQuery.SignedPair p : spec.pairs) {
          long[] fa = freqs(te, p.a, docs, order, from, to, ctx.docBase);
          long[] fb = freqs(te, p.b, docs, order, from, to, ctx.docBase);
          for (int k = from; k < to; k++) {
            if (fa[k - from] > 0 && fb[k - from] > 0) {
              out[order[k]] += (double) p.w * Math.sqrt((double) fa[k - from] * fb[k - from]);
            }
          }
        }
      }
      from = to;
    }
    if (!spec.windows.isEmpty()) {
      new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, docs, order, out);
    }
    return out;
  }

  /** Impacts (term frequencies) of one term for docs[order[from..to)], all in one leaf, in docid order. */
  private static long[] freqs(TermsEnum te, String term, int[] docs, int[] order, int from, int to, int docBase)
      throws IOException {
    long[] f = new long[to - from];
    if (!te.seekExact(new BytesRef(term))) {
      return f;
    }
    PostingsEnum pe = te.postings(null, PostingsEnum.FREQS);
    for (int k = from; k < to; k++) {
      int local = docs[order[k]] - docBase;
      if (pe.docID() < local) {
        pe.advance(local);
      }
      if (pe.docID() == local) {
        f[k - from] = pe.freq();
      }
    }
    return f;
  }

  private Map<String, Integer> idMap() {
    Map<String, Integer> m = idToDoc;
    if (m == null) {
      synchronized (this) {
        if (idToDoc == null) {
          Map<String, Integer> built = new HashMap<>(ids.length * 2);
          for (int d = 0; d < ids.length; d++) {
            if (ids[d] != null) {
              built.put(ids[d], d);
            }
          }
          idToDoc = built;
        }
        m = idToDoc;
      }
    }
    return m;
  }

  /** Searches one query spec (JSON) and returns its TREC run lines. */
  public String searchToString(String queryJson, int k, String tag) throws IOException {
    checkK(k);
    QuerySpec spec = QuerySpec.parse(queryJson, "");
    RunBuffer buf = new RunBuffer(64);
    format(spec.qid, search(spec, k), tag, buf);
    return new String(buf.bytes, 0, buf.length, StandardCharsets.UTF_8);
  }

  private static void checkK(int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
  }

  /** Growable byte buffer of run lines (UTF-8), written without intermediate Strings. */
  static final class RunBuffer {
    private static final byte[] ZEROS = "000000".getBytes(StandardCharsets.US_ASCII);
    byte[] bytes;
    int length;
    private final byte[] digits = new byte[20];

    RunBuffer(int capacity) {
      bytes = new byte[Math.max(capacity, 16)];
    }

    private void ensure(int extra) {
      if (length + extra > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + extra));
      }
    }

    void put(byte[] b) {
      ensure(b.length);
      System.arraycopy(b, 0, bytes, length, b.length);
      length += b.length;
    }

    void put(byte b) {
      ensure(1);
      bytes[length++] = b;
    }

    void putLong(long v) {
      ensure(21);
      if (v < 0) {
        bytes[length++] = '-';
        v = -v;
      }
      if (v <= Integer.MAX_VALUE) {
        putInt((int) v);
        return;
      }
      int n = 0;
      do {
        digits[n++] = (byte) ('0' + (v % 10));
        v /= 10;
      } while (v > 0);
      while (n > 0) {
        bytes[length++] = digits[--n];
      }
    }

    /** Non-negative int in decimal (int division is much cheaper than long division). */
    private void putInt(int v) {
      int n = 0;
      do {
        int q = v / 10;
        digits[n++] = (byte) ('0' + (v - q * 10));
        v = q;
      } while (v > 0);
      while (n > 0) {
        bytes[length++] = digits[--n];
      }
    }

    /** {@code v} with six decimals, like Python's {@code f"{v:.6f}"} and Anserini's %.6f. */
    void putScore(double v) {
      if (!Double.isFinite(v) || Math.abs(v) >= 1e12) {
        put(String.format(Locale.ROOT, "%.6f", v).getBytes(StandardCharsets.UTF_8));
        return;
      }
      long scaled = Math.round(Math.abs(v) * 1e6);
      if (v < 0) {
        put((byte) '-');
      }
      putLong(scaled / 1000000);
      put((byte) '.');
      int frac = (int) (scaled % 1000000);
      ensure(6);
      if (frac == 0) {
        System.arraycopy(ZEROS, 0, bytes, length, 6);
        length += 6;
        return;
      }
      for (int i = 5; i >= 0; i--) {
        int q = frac / 10;
        bytes[length + i] = (byte) ('0' + (frac - q * 10));
        frac = q;
      }
      length += 6;
    }
  }

  private static final byte[] Q0 = " Q0 ".getBytes(StandardCharsets.UTF_8);

  private void format(String qid, Hits hits, String tag, RunBuffer buf) {
    byte[] q = qid.getBytes(StandardCharsets.UTF_8);
    byte[] t = tag.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < hits.docs.length; i++) {
      buf.put(q);
      buf.put(Q0);
      buf.put(idBytes[hits.docs[i]]);
      buf.put((byte) ' ');
      buf.putLong(i + 1);
      buf.put((byte) ' ');
      buf.putScore(hits.scores[i]);
      buf.put((byte) ' ');
      buf.put(t);
      buf.put((byte) '\n');
    }
  }

  /**
   * Searches every query of a query-spec JSONL file with {@code threads} threads and writes a TREC
   * run to {@code runPath} in input order; returns the number of queries. All lines are parsed
   * before searching, so a bad line fails before any output is written.
   */
  public int search(String queriesJsonl, String runPath, int k, int threads, String tag) throws IOException {
    checkK(k);
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be >= 1, got " + threads);
    }
    if (tag == null || tag.isEmpty() || tag.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException("run tag must be a non-empty word, got '" + tag + "'");
    }
    List<QuerySpec> specs = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    Path in = Paths.get(queriesJsonl);
    if (!Files.exists(in)) {
      throw new NoSuchFileException(queriesJsonl + " (no such query file)");
    }
    try (BufferedReader br = Files.newBufferedReader(in, StandardCharsets.UTF_8)) {
      String line;
      int no = 0;
      while ((line = br.readLine()) != null) {
        no++;
        if (line.isBlank()) {
          continue;
        }
        QuerySpec spec = QuerySpec.parse(line, queriesJsonl + ":" + no);
        if (!seen.add(spec.qid)) {
          throw new QuerySpecException(spec.label() + ": duplicate qid");
        }
        checkSpec(spec);
        specs.add(spec);
      }
    }
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "lsr-search-" + threadNo.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    try (java.io.OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(Paths.get(runPath)), 1 << 20)) {
      ArrayDeque<Future<RunBuffer>> pending = new ArrayDeque<>();
      ArrayDeque<QuerySpec> pendingSpecs = new ArrayDeque<>();
      int window = Math.max(4, threads * 8);
      for (QuerySpec spec : specs) {
        pending.add(pool.submit(() -> {
          RunBuffer buf = new RunBuffer(Math.min(k, ids.length) * (spec.qid.length() + tag.length() + maxIdLength + 32));
          format(spec.qid, search(spec, k), tag, buf);
          return buf;
        }));
        pendingSpecs.add(spec);
        if (pending.size() >= window) {
          RunBuffer b = take(pending.poll(), pendingSpecs.poll());
          out.write(b.bytes, 0, b.length);
        }
      }
      while (!pending.isEmpty()) {
        RunBuffer b = take(pending.poll(), pendingSpecs.poll());
        out.write(b.bytes, 0, b.length);
      }
    } finally {
      pool.shutdownNow();
    }
    return specs.size();
  }

  private static RunBuffer take(Future<RunBuffer> f, QuerySpec spec) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while searching " + spec.label(), e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof QuerySpecException) {
        throw (QuerySpecException) c;
      }
      if (c instanceof IOException || c instanceof UncheckedIOException) {
        throw new IOException(spec.label() + ": " + c, c);
      }
      throw new IllegalStateException(spec.label() + ": search failed: " + c, c);
    }
  }

  @Override
  public void close() throws IOException {
    if (reader != mainReader) {
      reader.close();
    }
    mainReader.close();
    if (posReader != null) {
      posReader.close();
    }
    if (posDir != null) {
      posDir.close();
    }
    mainDir.close();
  }
}
