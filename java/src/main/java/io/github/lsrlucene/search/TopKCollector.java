package io.github.lsrlucene.search;

import java.io.IOException;
import java.util.Arrays;
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
  private float floor = Float.NEGATIVE_INFINITY; // no hit below it is collected ({@link #carry})
  private int placeholders = 0; // keys in the heap that stand for documents of shards searched before ({@link #carry})
  private static final int PLACEHOLDER_ORD = Integer.MAX_VALUE;
  private final double relErr;
  private final double shift;
  // hits that left or never entered the heap but were within float rounding error of the k-th when seen
  private int[] bandDocs = new int[16];
  private float[] bandScores = new float[16];
  private int bandSize = 0;

  /**
   * @param idOrd rank of each global Lucene docid's external id in ascending id order
   * @param ordToDoc the inverse: global Lucene docid of each id rank
   */
  public TopKCollector(int k, int[] idOrd, int[] ordToDoc) {
    this(k, idOrd, ordToDoc, 0.0, 0.0);
  }

  /**
   * A collector that also keeps every hit whose float score is within {@code relErr * (|s| + shift)} of the
   * final k-th float score s ({@link #band}), so that rescoring them in double gives the exact double top k.
   */
  public TopKCollector(int k, int[] idOrd, int[] ordToDoc, double relErr, double shift) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
    this.idOrd = idOrd;
    this.ordToDoc = ordToDoc;
    this.k = Math.min(k, Math.max(idOrd.length, 1));
    heap = new LongHeap(this.k);
    this.relErr = relErr;
    this.shift = shift;
  }

  /**
   * Starts the queue where shards already searched left it, as one index's collector carries its queue from segment
   * to segment: {@code best}, descending, are lower bounds (in this collector's score space) of the float scores of
   * the k best documents found before, the k-th of them a floor (inclusive: a hit of exactly the floor is collected,
   * and a hit ties with those documents to its advantage). They stand in the queue as placeholders of no document,
   * so its k-th score, the scorer's minimum competitive score from the start, rises as better hits push them out;
   * {@link #sorted} and {@link #band} return documents only. With fewer than k best (k not reached) nothing is
   * carried; a collector whose k was cut to its index's size keeps only the floor. Call before searching.
   */
  public void carry(float[] best, int requestedK) {
    if (best.length < requestedK) {
      return;
    }
    floor = best[requestedK - 1];
    if (k == requestedK && heap.size() == 0) {
      for (int i = 0; i < k; i++) {
        heap.push(key(best[i], PLACEHOLDER_ORD));
      }
      placeholders = k;
    }
  }

  private static boolean placeholder(long key) {
    return (int) key == 0; // id rank Integer.MAX_VALUE: below every document's of the same score
  }

  /** The scorer's minimum competitive score, given the k-th float score: never below the floor. */
  private float competitive(float kth) {
    return Math.max(cut(kth), floor);
  }

  /** Lowest float score that may still hold a document of the exact double top k, given the k-th float score. */
  private float cut(float kth) {
    if (relErr == 0) {
      return kth;
    }
    return Math.nextDown((float) (kth - relErr * (Math.abs((double) kth) + shift)));
  }

  private void addBand(int doc, float score) {
    if (bandSize == bandDocs.length) {
      float c = cut(scoreOf(heap.top()));
      int m = 0;
      for (int i = 0; i < bandSize; i++) {
        if (bandScores[i] >= c) {
          bandDocs[m] = bandDocs[i];
          bandScores[m++] = bandScores[i];
        }
      }
      bandSize = m;
      if (bandSize > bandDocs.length / 2) {
        bandDocs = Arrays.copyOf(bandDocs, bandDocs.length * 2);
        bandScores = Arrays.copyOf(bandScores, bandScores.length * 2);
      }
    }
    bandDocs[bandSize] = doc;
    bandScores[bandSize++] = score;
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
          scorer.setMinCompetitiveScore(competitive(scoreOf(heap.top())));
        } else if (floor > Float.NEGATIVE_INFINITY) {
          scorer.setMinCompetitiveScore(floor);
        }
      }

      @Override
      public void collect(int doc) throws IOException {
        // keys are distinct (the id rank is part of them): a key enters when it beats the k-th best
        float score = scorer.score();
        if (score < floor) {
          return; // (a scorer may hand out documents below its minimum competitive score)
        }
        long key = key(score, idOrd[base + doc]);
        if (heap.size() == k) {
          long out = key > heap.top() ? heap.top() : key; // the key that leaves (or never enters) the heap
          if (placeholder(out)) {
            placeholders--;
          } else if (relErr != 0) {
            float os = scoreOf(out);
            if (os >= cut(scoreOf(heap.top()))) { // the k-th only rises: band() filters by the final one
              addBand(ordToDoc[ordOf(out)], os);
            }
          }
        }
        if (heap.insertWithOverflow(key) && heap.size() == k) {
          float min = scoreOf(heap.top());
          if (min > minSet) {
            minSet = min;
            scorer.setMinCompetitiveScore(competitive(min));
          }
        }
      }
    };
  }

  /** Number of hits collected so far (at most k; placeholders of {@link #carry} not counted). */
  public int size() {
    return heap.size() - placeholders;
  }

  /**
   * Documents outside the top k whose float score is within rounding error of the k-th (global docids; call
   * before {@link #sorted}, which empties the heap).
   */
  public int[] band() {
    if (heap.size() < k) {
      return new int[0];
    }
    float c = cut(scoreOf(heap.top()));
    int[] out = new int[bandSize];
    int m = 0;
    for (int i = 0; i < bandSize; i++) {
      if (bandScores[i] >= c) {
        out[m++] = bandDocs[i];
      }
    }
    return Arrays.copyOf(out, m);
  }

  /** The hits best first (consumes the collector); returns global docids, and fills {@code outScores}. */
  public int[] sorted(float[] outScores) {
    int[] out = new int[size()];
    for (int i = out.length - 1; heap.size() > 0; ) { // the heap pops the worst first
      long key = heap.pop();
      if (!placeholder(key)) {
        out[i] = ordToDoc[ordOf(key)];
        outScores[i--] = scoreOf(key);
      }
    }
    placeholders = 0;
    return out;
  }
}
