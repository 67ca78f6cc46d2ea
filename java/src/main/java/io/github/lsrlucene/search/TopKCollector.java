package io.github.lsrlucene.search;

import java.io.IOException;
import java.util.Arrays;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;

/**
 * Top-k collector ordering by score descending, ties by external docid ascending (Anserini's
 * convention), given each document's rank in docid order. Score and docid rank are packed into one
 * long key per hit. Hits are appended to a buffer of about 1.5 k keys; when it fills, a selection
 * keeps the best k and the k-th score becomes the scorer's minimum competitive score (ties still
 * compete), so block-max WAND / MaxScore can skip documents. Amortised O(1) per competitive hit.
 */
public final class TopKCollector implements Collector {
  private final int k;
  private final int[] idOrd;
  private final int[] ordToDoc;
  private final long[] keys;
  private int size;
  private long threshold = Long.MIN_VALUE; // key of the k-th best hit once known
  private float minSet = Float.NEGATIVE_INFINITY;

  /**
   * @param idOrd rank of each global Lucene docid's external id in ascending id order
   * @param ordToDoc the inverse: global Lucene docid of each id rank
   */
  public TopKCollector(int k, int[] idOrd, int[] ordToDoc) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
    this.idOrd = idOrd;
    this.ordToDoc = ordToDoc;
    this.k = Math.min(k, Math.max(idOrd.length, 1));
    long cap = Math.min((long) this.k + Math.max(this.k / 2, 32), Math.max(idOrd.length, 1));
    keys = new long[(int) cap];
  }

  /** Key increasing with the score, then decreasing with the id rank. */
  static long key(float score, int ord) {
    int bits = Float.floatToIntBits(score);
    bits ^= (bits >> 31) & 0x7fffffff; // order-preserving for negative floats too
    return ((long) bits << 32) | (Integer.MAX_VALUE - ord);
  }

  static float scoreOf(long key) {
    int bits = (int) (key >> 32);
    bits ^= (bits >> 31) & 0x7fffffff;
    return Float.intBitsToFloat(bits);
  }

  static int ordOf(long key) {
    return Integer.MAX_VALUE - (int) key;
  }

  @Override
  public ScoreMode scoreMode() {
    return ScoreMode.TOP_SCORES;
  }

  /** Moves the k largest keys of the buffer to its front (any order) and drops the rest. */
  private void compact() {
    if (size <= k) {
      return;
    }
    select(keys, 0, size - 1, k);
    size = k;
    long min = Long.MAX_VALUE;
    for (int i = 0; i < k; i++) {
      min = Math.min(min, keys[i]);
    }
    threshold = min;
  }

  /** Quickselect: afterwards a[lo..lo+n) hold the n largest of a[lo..hi] (descending partition). */
  private static void select(long[] a, int lo, int hi, int n) {
    int target = lo + n - 1; // index that must hold the n-th largest
    while (hi > lo) {
      int mid = (lo + hi) >>> 1;
      // median of three as pivot
      long x = a[lo];
      long y = a[mid];
      long z = a[hi];
      long pivot = x < y ? (y < z ? y : Math.max(x, z)) : (x < z ? x : Math.max(y, z));
      int i = lo;
      int j = hi;
      while (i <= j) {
        while (a[i] > pivot) {
          i++;
        }
        while (a[j] < pivot) {
          j--;
        }
        if (i <= j) {
          long t = a[i];
          a[i] = a[j];
          a[j] = t;
          i++;
          j--;
        }
      }
      if (target <= j) {
        hi = j;
      } else if (target >= i) {
        lo = i;
      } else {
        return;
      }
    }
  }

  @Override
  public LeafCollector getLeafCollector(LeafReaderContext context) {
    final int base = context.docBase;
    return new LeafCollector() {
      private Scorable scorer;

      @Override
      public void setScorer(Scorable scorer) throws IOException {
        this.scorer = scorer;
        if (threshold != Long.MIN_VALUE) {
          scorer.setMinCompetitiveScore(scoreOf(threshold));
        }
      }

      @Override
      public void collect(int doc) throws IOException {
        long key = key(scorer.score(), idOrd[base + doc]);
        if (key > threshold) {
          keys[size++] = key;
          if (size == keys.length) {
            compact();
            float min = scoreOf(threshold);
            if (min > minSet) {
              minSet = min;
              scorer.setMinCompetitiveScore(min);
            }
          }
        }
      }
    };
  }

  /** Number of hits collected so far (at most the buffer size). */
  public int size() {
    return Math.min(size, k);
  }

  /** The hits best first (consumes the collector); returns global docids, and fills {@code outScores}. */
  public int[] sorted(float[] outScores) {
    compact();
    Arrays.sort(keys, 0, size);
    int[] out = new int[size];
    for (int i = 0; i < size; i++) {
      long key = keys[size - 1 - i];
      out[i] = ordToDoc[ordOf(key)];
      outScores[i] = scoreOf(key);
    }
    return out;
  }
}
