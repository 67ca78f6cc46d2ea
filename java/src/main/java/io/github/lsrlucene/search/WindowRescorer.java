package io.github.lsrlucene.search;

import io.github.lsrlucene.query.WindowQuery;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * Adds the scores of several window clauses to given documents in one pass: each distinct term's
 * positions and payloads are read once per document and shared by every window that uses it (an
 * ordered bigram and its unordered window, neighbouring bigrams). Scores are {@link WindowQuery}'s computed in double
 * from the weights as written (the query's float weights and scores differ by rounding only).
 */
final class WindowRescorer {
  private final String field;
  private final List<QuerySpec.Window> windows;
  private final String[] terms;
  private final int[][] slots;
  private final double[][] qs;

  WindowRescorer(String field, List<QuerySpec.Window> windows) {
    this.field = field;
    this.windows = windows;
    Map<String, Integer> index = new LinkedHashMap<>();
    slots = new int[windows.size()][];
    qs = new double[windows.size()][];
    for (int w = 0; w < windows.size(); w++) {
      QuerySpec.Window win = windows.get(w);
      slots[w] = new int[win.terms.length];
      qs[w] = new double[win.terms.length];
      for (int i = 0; i < win.terms.length; i++) {
        slots[w][i] = index.computeIfAbsent(win.terms[i], t -> index.size());
        qs[w][i] = win.exactFactors[i]; // q_i x window weight in double, as written
      }
    }
    terms = index.keySet().toArray(new String[0]);
  }

  /** Adds the window scores of {@code docs} (visited in {@code order}: increasing docid) to {@code out}. */
  void addScores(IndexReader reader, int[] docs, int[] order, double[] out) throws IOException {
    List<LeafReaderContext> leaves = reader.leaves();
    int n = terms.length;
    int[][] pos = new int[n][16];
    float[][] pay = new float[n][16];
    int[] len = new int[n];
    int[] loadedFor = new int[n];
    PostingsEnum[] pe = new PostingsEnum[n];
    int leaf = -1;
    LeafReaderContext ctx = null;
    for (int idx : order) {
      int doc = docs[idx];
      int li = leaves.size() == 1 ? 0 : ReaderUtil.subIndex(doc, leaves);
      if (li != leaf) {
        leaf = li;
        ctx = leaves.get(li);
        Terms t = ctx.reader().terms(field);
        TermsEnum te = t == null ? null : t.iterator();
        for (int i = 0; i < n; i++) {
          pe[i] = te != null && te.seekExact(new BytesRef(terms[i])) ? te.postings(null, PostingsEnum.PAYLOADS) : null;
          loadedFor[i] = -1;
        }
      }
      int local = doc - ctx.docBase;
      for (int w = 0; w < slots.length; w++) {
        boolean all = true;
        for (int s : slots[w]) {
          if (!load(pe, s, local, pos, pay, len, loadedFor)) {
            all = false;
            break;
          }
        }
        if (all) {
          QuerySpec.Window win = windows.get(w);
          double best = WindowQuery.bestMatch(pos, pay, len, slots[w], qs[w], win.ordered, win.ordered ? win.terms.length : win.width);
          if (best != Double.NEGATIVE_INFINITY) {
            out[idx] += best; // window by window, in spec order: the brute force's sum, to the bit
          }
        }
      }
    }
  }

  /** Positions term slot {@code s} on {@code doc} and reads its positions once; false when absent. */
  private static boolean load(PostingsEnum[] pe, int s, int doc, int[][] pos, float[][] pay, int[] len, int[] loadedFor)
      throws IOException {
    if (loadedFor[s] == doc) {
      return len[s] > 0;
    }
    loadedFor[s] = doc;
    len[s] = 0;
    PostingsEnum e = pe[s];
    if (e == null) {
      return false;
    }
    int d = e.docID();
    if (d < doc) {
      d = e.advance(doc);
    }
    if (d != doc) {
      return false;
    }
    len[s] = WindowQuery.readPositions(e, pos, pay, s);
    return len[s] > 0;
  }

  /** Indices of {@code docs} in increasing docid order (the order {@link #addScores} takes). */
  static int[] docOrder(int[] docs) {
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
}
