package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.TermState;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The top-k bulk scorer of {@link ImpactMaxScoreQuery} on a segment with a {@link DenseImpacts} sidecar: block-max
 * pruning over blocks of {@link DenseImpacts#BLOCK} docids (as BMP does), window by window of docids.
 *
 * <p>A window's bound is the largest of its blocks' dense bounds (the query's dense terms' block maxima from the
 * sidecar times their weights) plus its other (sparse) terms' block-max impacts; the windows of largest bound are
 * scored first, so that the threshold is high when the others are visited in docid order (unless the collector
 * hands a threshold already), and a window whose bound cannot reach it is skipped untouched. In a scored window the
 * sparse terms' postings, a small share of the query's, are decoded into the window's score array, and each block's
 * exact largest sparse sum is read from it; only the blocks whose sparse sum plus dense bound can reach the threshold
 * get their dense rows summed in (array loops) and are collected.
 *
 * <p>{@code heapFactor} h &lt; 1 makes it approximate, as BMP's and Seismic's parameter of the kind: windows and
 * blocks are pruned against threshold / h, so documents that could only just enter the top k may be missed; every
 * document collected has its exact score. h = 1 is exact.
 */
final class DenseBlockMaxScorer extends BulkScorer {
  static final int WINDOW = DenseImpacts.WINDOW;
  static final int BLOCK = DenseImpacts.BLOCK;
  private static final int BLOCKS = WINDOW / BLOCK; // blocks per window
  /** How many windows of largest bound are scored before the rest. */
  static final int FIRST_WINDOWS = 8;

  private final byte[][] dense; // per dense term: its row on the heap, null when read from the mapped file
  private final IndexInput file; // this scorer's clone of the segment's mapped sidecar file, null on the heap
  private final long[] denseOffsets; // per dense term: where its row starts in that file
  private final byte[][] denseMaxima; // per dense term: its largest impact per block
  private final int[] denseWeights;
  private final TermsEnum termsEnum; // positioned afresh for each pass over the sparse terms' postings
  private final BytesRef[] sparseTerms;
  private final TermState[] sparseStates;
  private PostingsEnum[] sparse; // the sparse terms' postings of the current pass
  private final int[] sparseWeights;
  private final long[] sparseMax; // per sparse term: weight x its largest impact in the segment
  private final float heapFactor;
  private final int maxDoc;
  private final long cost;
  private Scratch scratch; // the scoring thread's working arrays, during a score call

  /**
   * A thread's working arrays, lent to each scorer for one {@code score} call: a thread runs one call at a time, and a
   * call fills what it reads. Allocated per scorer (every shard of every query has one), they cost about 8 % of a
   * 4-shard search (wiki2015 666k, k=10, alternating rounds in one JVM) and 5 % of one index's.
   */
  private static final class Scratch {
    final int[] acc = new int[WINDOW]; // the window's scores
    final int[] blockSparse = new int[BLOCKS + 1]; // per block of the window: its largest sparse sum
    int[] blockBounds = new int[0]; // per block of the segment: its dense terms' bound
    long[] sparseBounds = new long[0]; // per window w and sparse term i: [w * sparseTerms.length + i]
    byte[] rowBytes = new byte[0]; // mapped rows: per dense term j, its bytes of the window at [j * WINDOW, ...)
  }

  private static final ThreadLocal<Scratch> SCRATCHES = ThreadLocal.withInitial(Scratch::new);
  private final ImpactMaxScoreQuery.Hit hit = new ImpactMaxScoreQuery.Hit();

  private DenseBlockMaxScorer(byte[][] dense, IndexInput file, long[] denseOffsets, byte[][] denseMaxima,
                              int[] denseWeights, TermsEnum termsEnum, BytesRef[] sparseTerms,
                              TermState[] sparseStates, int[] sparseWeights, long[] sparseMax, float heapFactor,
                              int maxDoc, long cost) {
    this.dense = dense;
    this.file = file;
    this.denseOffsets = denseOffsets;
    this.denseMaxima = denseMaxima;
    this.denseWeights = denseWeights;
    this.termsEnum = termsEnum;
    this.sparseTerms = sparseTerms;
    this.sparseStates = sparseStates;
    this.sparseWeights = sparseWeights;
    this.sparseMax = sparseMax;
    this.heapFactor = heapFactor;
    this.maxDoc = maxDoc;
    this.cost = cost;
  }

  /**
   * The scorer of the query's terms present in the segment (dense ones from {@code di}); null when none is dense.
   * {@code heapFactor} in (0, 1]: 1 exact, less prunes against threshold / heapFactor.
   */
  static DenseBlockMaxScorer create(LeafReaderContext ctx, DenseImpacts di, String field, String[] terms,
                                    int[] weights, float heapFactor) throws IOException {
    Terms fieldTerms = ctx.reader().terms(field);
    if (fieldTerms == null) {
      return null;
    }
    TermsEnum te = fieldTerms.iterator();
    List<byte[]> rows = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    List<byte[]> maxima = new ArrayList<>();
    List<Integer> dw = new ArrayList<>();
    List<BytesRef> st = new ArrayList<>();
    List<TermState> ss = new ArrayList<>();
    List<Integer> sw = new ArrayList<>();
    List<Long> sm = new ArrayList<>();
    long cost = 0;
    for (int i = 0; i < terms.length; i++) {
      DenseImpacts.Row row = di.row(ctx, field, terms[i]);
      if (row != null) {
        rows.add(row.heap);
        offsets.add(row.offset);
        maxima.add(row.maxima);
        dw.add(weights[i]);
        cost += ctx.reader().maxDoc();
        continue;
      }
      BytesRef bytes = new BytesRef(terms[i]); // a sparse term's postings are looked up
      if (te.seekExact(bytes)) {
        st.add(bytes);
        ss.add(te.termState());
        sw.add(weights[i]);
        sm.add((long) weights[i] * ImpactBounds.maxFreq(ctx.reader(), field, terms[i]));
        cost += te.docFreq();
      }
    }
    if (rows.isEmpty()) {
      return null;
    }
    return new DenseBlockMaxScorer(rows.toArray(new byte[0][]), di.file(ctx),
        offsets.stream().mapToLong(Long::longValue).toArray(), maxima.toArray(new byte[0][]),
        dw.stream().mapToInt(Integer::intValue).toArray(), te, st.toArray(new BytesRef[0]),
        ss.toArray(new TermState[0]), sw.stream().mapToInt(Integer::intValue).toArray(),
        sm.stream().mapToLong(Long::longValue).toArray(), heapFactor, ctx.reader().maxDoc(), cost);
  }

  @Override
  public int score(LeafCollector collector, Bits acceptDocs, int min, int max) throws IOException {
    collector.setScorer(hit);
    scratch = SCRATCHES.get();
    int end = Math.min(max, maxDoc);
    if (min >= end) {
      return end >= maxDoc ? DocIdSetIterator.NO_MORE_DOCS : end;
    }
    int w0 = min / WINDOW;
    int windows = (end - 1) / WINDOW + 1 - w0;
    long[] bounds = windowBounds(min, end, w0, windows);
    int first = Math.min(FIRST_WINDOWS, windows);
    boolean[] done = new boolean[windows];
    // a collector that hands a threshold already (a queue carried from earlier segments or shards) needs no best
    // windows first: one pass over the postings in docid order costs less than two (4 wiki2015 shards, k=10: -11%)
    if (first < windows && !(hit.threshold > 0)) {
      long[] keys = new long[windows]; // bound, then window: the largest keys are the windows of largest bound
      for (int w = 0; w < windows; w++) {
        keys[w] = (bounds[w] << 20) | w;
      }
      Arrays.sort(keys);
      int[] picked = new int[first];
      for (int j = 0; j < first; j++) {
        picked[j] = (int) (keys[windows - 1 - j] & 0xFFFFF);
      }
      Arrays.sort(picked); // postings go forward: the picked windows in docid order
      sparse = freshPostings();
      for (int w : picked) {
        done[w] = true;
        if (bounds[w] >= cut(need())) {
          scoreWindow(collector, acceptDocs, w, w0, min, end);
        }
      }
    }
    sparse = freshPostings();
    for (int w = 0; w < windows; w++) {
      if (!done[w] && bounds[w] >= cut(need())) {
        scoreWindow(collector, acceptDocs, w, w0, min, end);
      }
    }
    return end >= maxDoc ? DocIdSetIterator.NO_MORE_DOCS : end;
  }

  /** Fresh postings of the sparse terms (each pass over them goes forward from the start). */
  private PostingsEnum[] freshPostings() throws IOException {
    PostingsEnum[] out = new PostingsEnum[sparseTerms.length];
    for (int i = 0; i < out.length; i++) {
      termsEnum.seekExact(sparseTerms[i], sparseStates[i]);
      out[i] = termsEnum.postings(null, PostingsEnum.FREQS);
    }
    return out;
  }

  /**
   * Each window's bound on the score of its documents: the largest dense bound of its blocks (kept per block in
   * {@link Scratch#blockBounds}) plus the sparse terms' block-max bounds (kept per window and term in
   * {@link Scratch#sparseBounds}).
   */
  private long[] windowBounds(int min, int end, int w0, int windows) throws IOException {
    int firstBlock = min / BLOCK;
    int lastBlock = (end - 1) / BLOCK + 1;
    if (scratch.blockBounds.length < lastBlock) {
      scratch.blockBounds = new int[lastBlock];
    }
    int[] bb = scratch.blockBounds;
    Arrays.fill(bb, firstBlock, lastBlock, 0);
    for (int j = 0; j < dense.length; j++) {
      byte[] m = denseMaxima[j];
      int w = denseWeights[j];
      for (int b = firstBlock; b < lastBlock; b++) {
        bb[b] += w * (m[b] & 0xFF);
      }
    }
    long[] bounds = new long[windows];
    for (int b = firstBlock; b < lastBlock; b++) {
      int x = b / BLOCKS - w0;
      bounds[x] = Math.max(bounds[x], bb[b]);
    }
    int ns = sparseTerms.length;
    if (scratch.sparseBounds.length < windows * ns) {
      scratch.sparseBounds = new long[windows * ns];
    }
    long[] sparseBounds = scratch.sparseBounds;
    for (int i = 0; i < ns; i++) {
      termsEnum.seekExact(sparseTerms[i], sparseStates[i]);
      ImpactsEnum impacts = termsEnum.impacts(PostingsEnum.FREQS);
      for (int x = 0; x < windows; x++) {
        long b = ImpactBounds.windowBound(impacts, sparseWeights[i], sparseMax[i], Math.max(min, (w0 + x) * WINDOW),
            Math.min(end, (w0 + x + 1) * WINDOW));
        sparseBounds[x * ns + i] = b;
        bounds[x] += b;
      }
    }
    return bounds;
  }

  /** The smallest integral score that competes: every score is an integer, every match scores at least 1. */
  private int need() {
    float t = hit.threshold;
    return t <= 1 ? 1 : (int) Math.ceil(t);
  }

  /** The bound a window or block must reach to be scored: {@code need} when exact, need / heapFactor else. */
  private long cut(int need) {
    return heapFactor >= 1f ? need : (long) Math.ceil(need / (double) heapFactor);
  }

  /**
   * Scores window w: its sparse postings decoded into the score array (term at a time), then each block's largest
   * sparse sum read from it; each run of blocks whose sparse sum plus dense bound reaches the cut gets its dense rows
   * summed in, and its documents at the threshold are collected.
   */
  private void scoreWindow(LeafCollector collector, Bits acceptDocs, int w, int w0, int min, int end)
      throws IOException {
    int from = Math.max(min, (w0 + w) * WINDOW);
    int to = Math.min(end, (w0 + w + 1) * WINDOW);
    int[] acc = scratch.acc;
    int[] bs = scratch.blockSparse;
    long[] sparseBounds = scratch.sparseBounds;
    int firstBlock = from / BLOCK;
    int blocks = (to - 1) / BLOCK + 1 - firstBlock;
    int shift = from - firstBlock * BLOCK; // documents of the first block before from (min not block-aligned)
    Arrays.fill(acc, 0, to - from, 0);
    int ns = sparse.length;
    for (int i = 0; i < ns; i++) {
      if (sparseBounds[w * ns + i] == 0) {
        continue; // no posting in the window
      }
      PostingsEnum p = sparse[i];
      int wt = sparseWeights[i];
      for (int d = p.docID() < from ? p.advance(from) : p.docID(); d < to; d = p.nextDoc()) {
        acc[d - from] += wt * p.freq();
      }
    }
    for (int b = 0; b < blocks; b++) { // each block's largest sparse sum
      int max = 0;
      for (int x = Math.max(0, b * BLOCK - shift), last = Math.min(to - from, (b + 1) * BLOCK - shift); x < last;
           x++) {
        max = Math.max(max, acc[x]);
      }
      bs[b] = max;
    }
    int need = need();
    long cut = cut(need);
    int[] bb = scratch.blockBounds;
    boolean rowsRead = file == null; // whether the mapped rows of the window's competing blocks are in rowBytes
    for (int b = 0; b < blocks; ) {
      if (bs[b] + bb[firstBlock + b] < cut) {
        b++;
        continue;
      }
      int e = b + 1;
      while (e < blocks && bs[e] + bb[firstBlock + e] >= cut) {
        e++;
      }
      int lo = Math.max(from, (firstBlock + b) * BLOCK);
      int hi = Math.min(to, (firstBlock + e) * BLOCK);
      if (!rowsRead) { // the cut only grows: every later stretch lies before the last block competing now
        int last = blocks - 1;
        while (bs[last] + bb[firstBlock + last] < cut) {
          last--;
        }
        readRows(lo, Math.min(to, (firstBlock + last + 1) * BLOCK), from);
        rowsRead = true;
      }
      addDense(lo, hi, from);
      for (int x = lo - from; x < hi - from; x++) {
        if (acc[x] >= need && (acceptDocs == null || acceptDocs.get(from + x))) {
          hit.doc = from + x;
          hit.score = acc[x];
          collector.collect(from + x);
          need = need();
        }
      }
      cut = cut(need);
      b = e;
    }
  }

  /**
   * Adds the dense terms over docids [lo, hi) into the window's score array (the window starting at {@code from}); a
   * mapped row is summed from its copy in {@link Scratch#rowBytes}.
   */
  private void addDense(int lo, int hi, int from) {
    int[] acc = scratch.acc;
    int off = lo - from;
    int len = hi - lo;
    for (int j = 0; j < dense.length; j++) {
      byte[] row = dense[j];
      int at = lo;
      if (row == null) {
        row = scratch.rowBytes;
        at = j * WINDOW + off;
      }
      int wt = denseWeights[j];
      for (int x = 0; x < len; x++) {
        acc[off + x] += wt * (row[at + x] & 0xFF);
      }
    }
  }

  /**
   * Copies each dense term's mapped row over docids [lo, hi) of the window starting at {@code from} into
   * {@link Scratch#rowBytes}: one bulk read per term and window, where one per stretch cost more (at k=10 a window
   * sums some 18 stretches of 4 blocks on average, and the reads' fixed cost outweighed the copying).
   */
  private void readRows(int lo, int hi, int from) throws IOException {
    if (scratch.rowBytes.length < dense.length * WINDOW) {
      scratch.rowBytes = new byte[dense.length * WINDOW];
    }
    for (int j = 0; j < dense.length; j++) {
      file.seek(denseOffsets[j] + lo);
      file.readBytes(scratch.rowBytes, j * WINDOW + lo - from, hi - lo);
    }
  }

  @Override
  public long cost() {
    return cost;
  }
}
