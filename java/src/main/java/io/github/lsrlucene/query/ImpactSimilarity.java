package io.github.lsrlucene.query;

import org.apache.lucene.index.FieldInvertState;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.similarities.Similarity;

/**
 * Impact similarity: score = boost &times; freq, where freq is the integer impact stored as the term
 * frequency of an Anserini impact index. Monotone in freq, so Lucene's block-max WAND / MaxScore
 * pruning works unchanged on plain {@code TermQuery}/{@code BooleanQuery}.
 */
public final class ImpactSimilarity extends Similarity {

  @Override
  public long computeNorm(FieldInvertState state) {
    return 1L;
  }

  @Override
  public SimScorer scorer(float boost, CollectionStatistics collectionStats, TermStatistics... termStats) {
    return new ImpactScorer(boost);
  }

  @Override
  public String toString() {
    return "LsrImpact()";
  }

  private static final class ImpactScorer extends SimScorer {
    private final float boost;

    ImpactScorer(float boost) {
      this.boost = boost;
    }

    @Override
    public float score(float freq, long norm) {
      return boost * freq;
    }

    @Override
    public Explanation explain(Explanation freq, long norm) {
      return Explanation.match(score(freq.getValue().floatValue(), norm), "boost * impact",
          Explanation.match(boost, "boost (query weight)"), freq);
    }
  }
}
