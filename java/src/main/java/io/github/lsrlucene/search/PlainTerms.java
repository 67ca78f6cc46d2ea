package io.github.lsrlucene.search;

import io.github.lsrlucene.query.DenseImpacts;
import io.github.lsrlucene.query.ImpactBounds;
import io.github.lsrlucene.query.ImpactMaxScoreQuery;
import java.io.IOException;
import java.util.Map;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.search.Query;

/**
 * When a query spec is a plain sum of positive integral weights times impacts, every score an integer below 2^24
 * (so float scores are exact): then it is searched as an {@link ImpactMaxScoreQuery}, with nothing to rescore.
 */
final class PlainTerms {
  private PlainTerms() {}

  /**
   * Whether float scoring of {@code spec} is exact: terms only, integral weights, and the largest possible score
   * &Sigma; |w| &middot; max impact (of the term or its {@code neg_} twin) below 2^24, so that every product and
   * partial sum is an integer a float holds exactly.
   */
  static boolean integralBelowFloatLimit(IndexReader reader, QuerySpec spec) throws IOException {
    if (!spec.pairs.isEmpty() || !spec.windows.isEmpty()) {
      return false;
    }
    double bound = 0;
    for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
      double w = Math.abs(e.getValue());
      if (w != Math.rint(w)) {
        return false;
      }
      bound += w * ImpactBounds.signedMaxFreq(reader, spec.field, e.getKey());
      if (bound >= 0x1p24) {
        return false;
      }
    }
    return true;
  }

  /**
   * The spec as an {@link ImpactMaxScoreQuery} when it scores exactly that: positive integral weights, sums below
   * 2^24, and (signed mode) no {@code neg_} twin of its terms in the index; else null. Its dense terms are summed
   * from the dense-impacts sidecar {@code dense} (null: none); {@code heapFactor} as {@link ImpactMaxScoreQuery}'s.
   */
  static Query query(IndexReader reader, QuerySpec spec, DenseImpacts dense, float heapFactor) throws IOException {
    if (!integralBelowFloatLimit(reader, spec)) {
      return null;
    }
    if (!spec.booleanMode) {
      for (String term : spec.exactTerms.keySet()) {
        if (ImpactBounds.negMaxFreq(reader, spec.field, term) > 0) {
          return null;
        }
      }
    }
    return positiveQuery(spec, dense, heapFactor);
  }

  /**
   * The spec as an {@link ImpactMaxScoreQuery} (dense terms from {@code dense}, null: none) when all its weights are
   * positive, else null.
   */
  static Query positiveQuery(QuerySpec spec, DenseImpacts dense, float heapFactor) {
    String[] terms = new String[spec.exactTerms.size()];
    int[] weights = new int[terms.length];
    int i = 0;
    for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
      if (e.getValue() <= 0) {
        return null;
      }
      terms[i] = e.getKey();
      weights[i++] = (int) Math.rint(e.getValue());
    }
    return new ImpactMaxScoreQuery(spec.field, terms, weights, dense, heapFactor);
  }
}
