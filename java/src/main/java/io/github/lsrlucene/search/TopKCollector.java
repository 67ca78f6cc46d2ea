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
 * long key per hit, kept in a min-heap of k keys (as Lucene's TopScoreDocCollector keeps its queue):
 * once it is full, every hit that enters it raises the k-th score, which becomes the scorer's minimum
 * competitive score at once (ties still compete), so MaxScore / block-max WAND skip documents as early
 * as they can (an earlier version raised it only every k/2, at least 32, competitive hits:
 * runs/scale/README.md has what the change bought).
 */
public final class TopKCollector implements Collector {
  private final int k;
  private final int[] idOrd;
  private final int[] ordToDoc;
  private final long[] heap; // min-heap of the best keys so far; heap[0] is the k-th best once full
  private int size;
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
    heap = new long[this.k];
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

  /** Adds a key to the heap; returns true when the heap is full afterwards (heap[0] is then the k-th best). */
  private boolean offer(long key) {
    if (size < k) {
      int i = size++;
      while (i > 0) { // sift up
        int parent = (i - 1) >>> 1;
        if (heap[parent] <= key) {
          break;
        }
        heap[i] = heap[parent];
        i = parent;
      }
      heap[i] = key;
      return size == k;
    }
    if (key <= heap[0]) {
      return false;
    }
    int i = 0; // replace the smallest, sift down
    while (true) {
      int child = 2 * i + 1;
      if (child >= k) {
        break;
      }
      if (child + 1 < k && heap[child + 1] < heap[child]) {
        child++;
      }
      if (heap[child] >= key) {
        break;
      }
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = key;
    return true;
  }

  @Override
  public LeafCollector getLeafCollector(LeafReaderContext context) {
    final int base = context.docBase;
    return new LeafCollector() {
      private Scorable scorer;

      @Override
      public void setScorer(Scorable scorer) throws IOException {
        this.scorer = scorer;
        if (size == k) {
          scorer.setMinCompetitiveScore(scoreOf(heap[0]));
        }
      }

      @Override
      public void collect(int doc) throws IOException {
        if (offer(key(scorer.score(), idOrd[base + doc]))) {
          float min = scoreOf(heap[0]);
          if (min > minSet) {
            minSet = min;
            scorer.setMinCompetitiveScore(min);
          }
        }
      }
    };
  }

  /** Number of hits collected so far (at most k). */
  public int size() {
    return size;
  }

  /** The hits best first (consumes the collector); returns global docids, and fills {@code outScores}. */
  public int[] sorted(float[] outScores) {
    Arrays.sort(heap, 0, size);
    int[] out = new int[size];
    for (int i = 0; i < size; i++) {
      long key = heap[size - 1 - i];
      out[i] = ordToDoc[ordOf(key)];
      outScores[i] = scoreOf(key);
    }
    return out;
  }
}
