package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * Sum of the negative contributions at increasing docids of one segment, in windows of 4096
 * docids. Where candidates come sparsely, the negative term postings sit in a min-heap on their
 * current docid, so a candidate advances only the postings positioned before it (like Lucene's
 * disjunction queue). Where they come densely (the previous window had at least one candidate per
 * {@link #DENSE_RATIO} expected negative postings), the window's negative postings are decoded in
 * one sequential pass into an array, as Lucene's BooleanScorer does for disjunctions.
 */
final class NegSum {
  static final int WINDOW_BITS = 12;
  static final int WINDOW = 1 << WINDOW_BITS;
  static final int DENSE_RATIO = 16;
  private final double[] acc = new double[WINDOW];
  private double postingsPerWindow;
  private int window = -1;
  private boolean dense;
  private int seenInWindow;
  private final LeafReader reader;
  private final String field;
  private final String[] negTerms;
  private final float[] negWeights;
  private final List<SignedImpactQuery.SignedPair> negPairs;
  private PostingsEnum[] termEnums;
  private float[] termW;
  private int[] cur;
  private int[] heap;
  private int[] stack;
  private PostingsEnum[][] pairEnums;
  private int last = -1;
  private final double scale;

  NegSum(LeafReader reader, double scale, String field, String[] negTerms, float[] negWeights,
      List<SignedImpactQuery.SignedPair> negPairs) throws IOException {
    this.reader = reader;
    this.scale = scale;
    this.field = field;
    this.negTerms = negTerms;
    this.negWeights = negWeights;
    this.negPairs = negPairs;
    open();
  }

  private void open() throws IOException {
    Terms t = reader.terms(field);
    TermsEnum te = t == null ? null : t.iterator();
    List<PostingsEnum> enums = new ArrayList<>();
    List<Float> ws = new ArrayList<>();
    long postings = 0;
    for (int i = 0; i < negTerms.length; i++) {
      if (te != null && te.seekExact(new BytesRef(negTerms[i]))) {
        enums.add(te.postings(null, PostingsEnum.FREQS));
        ws.add(negWeights[i]);
        postings += te.docFreq();
      }
    }
    postingsPerWindow = (double) postings * WINDOW / Math.max(1, reader.maxDoc());
    window = -1;
    dense = false;
    seenInWindow = 0;
    int n = enums.size();
    termEnums = enums.toArray(new PostingsEnum[0]);
    termW = new float[n];
    cur = new int[n];
    heap = new int[n];
    stack = new int[n];
    for (int i = 0; i < n; i++) {
      termW[i] = ws.get(i);
      cur[i] = -1;
      heap[i] = i;
    }
    pairEnums = new PostingsEnum[negPairs.size()][];
    for (int i = 0; i < negPairs.size(); i++) {
      SignedImpactQuery.SignedPair p = negPairs.get(i);
      if (te != null && te.seekExact(new BytesRef(p.a))) {
        PostingsEnum a = te.postings(null, PostingsEnum.FREQS);
        if (te.seekExact(new BytesRef(p.b))) {
          pairEnums[i] = new PostingsEnum[] {a, te.postings(null, PostingsEnum.FREQS)};
        }
      }
    }
    last = -1;
  }

  /** Decodes the negative term postings of window {@code w}, from docid {@code from} on, into {@link #acc}. */
  private void fill(int w, int from) throws IOException {
    java.util.Arrays.fill(acc, 0.0);
    int base = w << WINDOW_BITS;
    int start = Math.max(base, from);
    int end = base + WINDOW;
    for (int i = 0; i < termEnums.length; i++) {
      PostingsEnum e = termEnums[i];
      int d = e.docID();
      if (d < start) {
        d = e.advance(start);
      }
      double tw = termW[i];
      while (d < end) {
        acc[d - base] += tw * e.freq();
        d = e.nextDoc();
      }
      cur[i] = d;
    }
    for (int h = heap.length / 2 - 1; h >= 0; h--) {
      siftDown(h);
    }
  }

  private void siftDown() {
    siftDown(0);
  }

  private void siftDown(int start) {
    int n = heap.length;
    int i = start;
    int node = heap[start];
    int key = cur[node];
    while (true) {
      int l = 2 * i + 1;
      if (l >= n) {
        break;
      }
      int r = l + 1;
      int c = (r < n && cur[heap[r]] < cur[heap[l]]) ? r : l;
      if (cur[heap[c]] < key) {
        heap[i] = heap[c];
        i = c;
      } else {
        break;
      }
    }
    heap[i] = node;
  }

  double at(int doc) throws IOException {
    return at(doc, Double.POSITIVE_INFINITY);
  }

  /**
   * Sum of the negative contributions at {@code doc}; may stop early, returning a partial sum, as
   * soon as the sum exceeds {@code stopAbove} (the document then cannot be competitive).
   */
  double at(int doc, double stopAbove) throws IOException {
    if (doc < last) {
      open();
    }
    last = doc;
    double limit = stopAbove / scale;
    double sum = 0;
    int w = doc >>> WINDOW_BITS;
    if (w != window) {
      int prev = w == window + 1 ? seenInWindow : 0;
      window = w;
      seenInWindow = 0;
      dense = heap.length > 0 && (double) prev * DENSE_RATIO >= postingsPerWindow;
      if (dense) {
        fill(w, doc);
      }
    }
    seenInWindow++;
    if (!dense && (seenInWindow & 63) == 0 && heap.length > 0) {
      // candidates denser than expected: decode the rest of this window in one pass
      int offset = (doc & (WINDOW - 1)) + 1;
      if ((double) seenInWindow * WINDOW / offset * DENSE_RATIO >= postingsPerWindow) {
        dense = true;
        fill(w, doc);
      }
    }
    if (dense) {
      sum = acc[doc & (WINDOW - 1)];
    } else if (heap.length > 0) {
      while (cur[heap[0]] < doc) {
        int i = heap[0];
        cur[i] = termEnums[i].advance(doc);
        siftDown();
      }
      if (cur[heap[0]] == doc) {
        // every entry at doc forms a subtree at the root: walk it
        int sp = 0;
        stack[sp++] = 0;
        while (sp > 0) {
          int h = stack[--sp];
          int i = heap[h];
          sum += (double) termW[i] * termEnums[i].freq();
          int l = 2 * h + 1;
          if (l < heap.length && cur[heap[l]] == doc) {
            stack[sp++] = l;
          }
          if (l + 1 < heap.length && cur[heap[l + 1]] == doc) {
            stack[sp++] = l + 1;
          }
        }
      }
    }
    for (int i = 0; i < pairEnums.length; i++) {
      if (sum > limit) {
        return sum * scale;
      }
      PostingsEnum[] pe = pairEnums[i];
      if (pe == null) {
        continue;
      }
      int da = pe[0].docID() < doc ? pe[0].advance(doc) : pe[0].docID();
      int db = pe[1].docID() < doc ? pe[1].advance(doc) : pe[1].docID();
      if (da == doc && db == doc) {
        sum += (double) negPairs.get(i).w * Math.sqrt((double) pe[0].freq() * pe[1].freq());
      }
    }
    return sum * scale;
  }
}
