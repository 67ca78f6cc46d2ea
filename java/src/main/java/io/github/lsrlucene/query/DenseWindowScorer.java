package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The exact top-k bulk scorer of {@link ImpactMaxScoreQuery} on a segment with a {@link DenseImpacts} sidecar, window
 * by window of docids: the query's dense terms (its most frequent ones, most of its postings) are summed into the
 * window's scores by array loops over their byte rows; when the best of those sums plus the block-max bounds of the
 * other terms cannot reach the collector's threshold, the window is done without decoding a posting, else the
 * other terms' postings are added; then every document at or above the threshold is collected.
 */
final class DenseWindowScorer extends BulkScorer {
  static final int WINDOW = 4096;
  /** Advancing a postings list to a given document costs about as much as decoding this many postings. */
  static final int ADVANCE_COST = ImpactMaxScoreQuery.ADVANCE_COST;

  private final byte[][] dense;
  private final int[] denseWeights;
  private final ImpactsEnum[] sparse;
  private final int[] sparseWeights;
  private final long[] sparseMax; // per sparse term: weight x its largest impact in the segment
  private final int maxDoc;
  private final long cost;
  private final int[] acc = new int[WINDOW];
  private final int[] candidates = new int[WINDOW]; // window offsets of the documents that can still compete
  private final long[] bounds;
  private final int[] sparseDf;
  private final ImpactMaxScoreQuery.Hit hit = new ImpactMaxScoreQuery.Hit();

  private DenseWindowScorer(byte[][] dense, int[] denseWeights, ImpactsEnum[] sparse, int[] sparseWeights,
                            long[] sparseMax, int[] sparseDf, int maxDoc, long cost) {
    this.sparseDf = sparseDf;
    this.bounds = new long[sparse.length];
    this.dense = dense;
    this.denseWeights = denseWeights;
    this.sparse = sparse;
    this.sparseWeights = sparseWeights;
    this.sparseMax = sparseMax;
    this.maxDoc = maxDoc;
    this.cost = cost;
  }

  /** The scorer of the query's terms present in the segment (dense ones from {@code di}); null when none is dense. */
  static DenseWindowScorer create(LeafReaderContext ctx, DenseImpacts di, String field, String[] terms, int[] weights)
      throws IOException {
    Terms fieldTerms = ctx.reader().terms(field);
    if (fieldTerms == null) {
      return null;
    }
    TermsEnum te = fieldTerms.iterator();
    List<byte[]> rows = new ArrayList<>();
    List<Integer> dw = new ArrayList<>();
    List<ImpactsEnum> enums = new ArrayList<>();
    List<Integer> sw = new ArrayList<>();
    List<Long> sm = new ArrayList<>();
    List<Integer> df = new ArrayList<>();
    long cost = 0;
    for (int i = 0; i < terms.length; i++) {
      byte[] row = di.impacts(ctx, field, terms[i]);
      if (row != null) {
        rows.add(row);
        dw.add(weights[i]);
        cost += ctx.reader().maxDoc();
      } else if (te.seekExact(new BytesRef(terms[i]))) {
        enums.add(te.impacts(PostingsEnum.FREQS));
        sw.add(weights[i]);
        sm.add((long) weights[i] * ImpactBounds.maxFreq(ctx.reader(), field, terms[i]));
        df.add(te.docFreq());
        cost += te.docFreq();
      }
    }
    if (rows.isEmpty()) {
      return null;
    }
    return new DenseWindowScorer(rows.toArray(new byte[0][]), dw.stream().mapToInt(Integer::intValue).toArray(),
        enums.toArray(new ImpactsEnum[0]), sw.stream().mapToInt(Integer::intValue).toArray(),
        sm.stream().mapToLong(Long::longValue).toArray(), df.stream().mapToInt(Integer::intValue).toArray(),
        ctx.reader().maxDoc(), cost);
  }

  @Override
  public int score(LeafCollector collector, Bits acceptDocs, int min, int max) throws IOException {
    collector.setScorer(hit);
    int end = Math.min(max, maxDoc);
    for (int from = min; from < end; from += WINDOW) {
      scoreWindow(collector, acceptDocs, from, Math.min(end, from + WINDOW));
    }
    return end >= maxDoc ? DocIdSetIterator.NO_MORE_DOCS : end;
  }

  /** The smallest integral score that competes: every score is an integer, every match scores at least 1. */
  private int need() {
    float t = hit.threshold;
    return t <= 1 ? 1 : (int) Math.ceil(t);
  }

  private void scoreWindow(LeafCollector collector, Bits acceptDocs, int from, int to) throws IOException {
    int len = to - from;
    int[] acc = this.acc;
    if (dense.length == 0) {
      java.util.Arrays.fill(acc, 0, len, 0);
    } else {
      byte[] b = dense[0];
      int w = denseWeights[0];
      for (int x = 0; x < len; x++) {
        acc[x] = w * (b[from + x] & 0xFF);
      }
      for (int j = 1; j < dense.length; j++) {
        b = dense[j];
        w = denseWeights[j];
        for (int x = 0; x < len; x++) {
          acc[x] += w * (b[from + x] & 0xFF);
        }
      }
    }
    long rest = 0;
    for (int i = 0; i < sparse.length; i++) {
      bounds[i] = ImpactBounds.windowBound(sparse[i], sparseWeights[i], sparseMax[i], from, to);
      rest += bounds[i];
    }
    int need = need();
    if (rest > 0) {
      if (rest >= need) {
        for (int i = 0; i < sparse.length; i++) {
          addPostings(i, from, to); // any document may still compete: every posting counts
        }
      } else {
        // only documents whose dense sum plus every other term's bound reaches the threshold can compete: the
        // other terms are added to those alone (by advancing to them, or by decoding when they are many)
        long low = need - rest;
        int n = 0;
        for (int x = 0; x < len; x++) {
          if (acc[x] >= low) {
            candidates[n++] = x;
          }
        }
        for (int i = 0; i < sparse.length && n > 0; i++) {
          if (bounds[i] == 0) {
            continue;
          }
          double expected = (double) sparseDf[i] * len / maxDoc; // the term's postings in this window
          if (n * ADVANCE_COST > expected) {
            addPostings(i, from, to); // non-candidates gain harmless sums: they stay below the threshold
            continue;
          }
          ImpactsEnum p = sparse[i];
          int w = sparseWeights[i];
          for (int c = 0; c < n; c++) {
            int doc = from + candidates[c];
            int d = p.docID() < doc ? p.advance(doc) : p.docID();
            if (d == doc) {
              acc[candidates[c]] += w * p.freq();
            }
          }
        }
      }
    }
    for (int x = 0; x < len; x++) {
      if (acc[x] >= need) {
        int doc = from + x;
        if (acceptDocs == null || acceptDocs.get(doc)) {
          hit.doc = doc;
          hit.score = acc[x];
          collector.collect(doc);
          need = need();
        }
      }
    }
  }

  /** Adds sparse term i's scores over [from, to) into the window. */
  private void addPostings(int i, int from, int to) throws IOException {
    ImpactsEnum p = sparse[i];
    int w = sparseWeights[i];
    for (int d = p.docID() < from ? p.advance(from) : p.docID(); d < to; d = p.nextDoc()) {
      acc[d - from] += w * p.freq();
    }
  }

  @Override
  public long cost() {
    return cost;
  }
}
