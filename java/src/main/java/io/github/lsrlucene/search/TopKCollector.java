package io.github.lsrlucene.search;

import java.io.IOException;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.util.LongHeap;

/**
 * Top-k collector ordering by score descending, ties by external docid ascending (Anserini's
 * convention), given each document's rank in docid order. Score and docid rank are packed into one
 * long key per hit, kept in a min-heap of k keys (Lucene's {@link LongHeap}, as TopScoreDocCollector keeps
 * its queue): once it is full, every hit that enters it raises the k-th score, which becomes the scorer's minimum
 * competitive score at once (ties still compete), so MaxScore / block-max WAND skip documents as early
 * as they can (an earlier version raised it only every k/2, at least 32, competitive hits:
 * runs/scale/README.md has what the change bought).
 */
public final class TopKCollector implements Collector {
  private final int k;
  private final int[] idOrd;
  private final int[] ordToDoc;
  private final LongHeap heap; // min-heap of the best keys so far; its top is the k-th best once full
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
    heap = new LongHeap(this.k);
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

  @Override
  public LeafCollector getLeafCollector(LeafReaderContext context) {
    final int base = context.docBase;
    return new LeafCollector() {
      private Scorable scorer;

      @Override
      public void setScorer(Scorable scorer) throws IOException {
        this.scorer = scorer;
        if (heap.size() == k) {
          scorer.setMinCompetitiveScore(scoreOf(heap.top()));
        }
      }

      @Override
      public void collect(int doc) throws IOException {
        // keys are distinct (the id rank is part of them): a key enters when it beats the k-th best
        if (heap.insertWithOverflow(key(scorer.score(), idOrd[base + doc])) && heap.size() == k) {
          float min = scoreOf(heap.top());
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
    return heap.size();
  }

  /** The hits best first (consumes the collector); returns global docids, and fills {@code outScores}. */
  public int[] sorted(float[] outScores) {
    int[] out = new int[heap.size()];
    for (int i = out.length - 1; i >= 0; i--) { // the heap pops the worst first
      long key = heap.pop();
      out[i] = ordToDoc[ordOf(key)];
      outScores[i] = scoreOf(key);
    }
    return out;
  }
}
