package io.github.lsrlucene;

import java.io.IOException;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;

/**
 * Top-k collector ordering by score descending, ties by external docid ascending (Anserini's
 * convention), given each document's rank in docid order. It tells the scorer the k-th score as the
 * minimum competitive score (ties still compete), so block-max WAND / MaxScore can skip documents.
 */
public final class TopKCollector implements Collector {
  private final int k;
  private final int[] idOrd;
  // heap of slots, worst (lowest score, then highest id rank) at the root
  private final float[] scores;
  private final int[] docs;
  private final int[] ords;
  private int size;
  private float minSet = Float.NEGATIVE_INFINITY;

  /** @param idOrd rank of each global Lucene docid's external id in ascending id order */
  public TopKCollector(int k, int[] idOrd) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive, got " + k);
    }
    this.k = k;
    this.idOrd = idOrd;
    int cap = Math.min(k, Math.max(idOrd.length, 1));
    scores = new float[cap];
    docs = new int[cap];
    ords = new int[cap];
  }

  @Override
  public ScoreMode scoreMode() {
    return ScoreMode.TOP_SCORES;
  }

  private boolean worse(float s1, int o1, float s2, int o2) {
    return s1 < s2 || (s1 == s2 && o1 > o2);
  }

  private void siftUp(int i) {
    float s = scores[i];
    int d = docs[i];
    int o = ords[i];
    while (i > 0) {
      int p = (i - 1) >>> 1;
      if (worse(s, o, scores[p], ords[p])) {
        scores[i] = scores[p];
        docs[i] = docs[p];
        ords[i] = ords[p];
        i = p;
      } else {
        break;
      }
    }
    scores[i] = s;
    docs[i] = d;
    ords[i] = o;
  }

  private void siftDown(int i) {
    float s = scores[i];
    int d = docs[i];
    int o = ords[i];
    while (true) {
      int l = 2 * i + 1;
      if (l >= size) {
        break;
      }
      int r = l + 1;
      int c = (r < size && worse(scores[r], ords[r], scores[l], ords[l])) ? r : l;
      if (worse(scores[c], ords[c], s, o)) {
        scores[i] = scores[c];
        docs[i] = docs[c];
        ords[i] = ords[c];
        i = c;
      } else {
        break;
      }
    }
    scores[i] = s;
    docs[i] = d;
    ords[i] = o;
  }

  @Override
  public LeafCollector getLeafCollector(LeafReaderContext context) {
    final int base = context.docBase;
    return new LeafCollector() {
      private Scorable scorer;

      @Override
      public void setScorer(Scorable scorer) throws IOException {
        this.scorer = scorer;
        if (size == scores.length && scores.length == k) {
          scorer.setMinCompetitiveScore(scores[0]);
        }
      }

      @Override
      public void collect(int doc) throws IOException {
        float s = scorer.score();
        int gd = base + doc;
        int o = idOrd[gd];
        if (size < scores.length) {
          scores[size] = s;
          docs[size] = gd;
          ords[size] = o;
          siftUp(size);
          size++;
          if (size == k) {
            updateMin();
          }
        } else if (worse(scores[0], ords[0], s, o)) {
          scores[0] = s;
          docs[0] = gd;
          ords[0] = o;
          siftDown(0);
          if (size == k) {
            updateMin();
          }
        }
      }

      private void updateMin() throws IOException {
        if (scores[0] > minSet) {
          minSet = scores[0];
          scorer.setMinCompetitiveScore(minSet);
        }
      }
    };
  }

  /** Number of hits collected (at most k). */
  public int size() {
    return size;
  }

  /** Sorts the collected hits best first; returns global docids, and fills {@code outScores}. */
  public int[] sorted(float[] outScores) {
    Integer[] idx = new Integer[size];
    for (int i = 0; i < size; i++) {
      idx[i] = i;
    }
    java.util.Arrays.sort(idx, (a, b) -> {
      int c = Float.compare(scores[b], scores[a]);
      return c != 0 ? c : Integer.compare(ords[a], ords[b]);
    });
    int[] out = new int[size];
    for (int i = 0; i < size; i++) {
      out[i] = docs[idx[i]];
      outScores[i] = scores[idx[i]];
    }
    return out;
  }
}
