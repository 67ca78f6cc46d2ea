package io.github.lsrlucene.query;

import java.io.IOException;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TwoPhaseIterator;
import org.apache.lucene.search.Weight;

/** Scorer of {@link SignedImpactQuery.Shifted}: the positive scorer's docs, scored shift + positive &minus; negative. */
final class ShiftedScorer extends Scorer implements ExactShifted {
  private double last;

  private final Scorer pos;
  private final NegSum neg;
  private final double shift;
  private float innerSet = 0f;

  ShiftedScorer(Weight w, Scorer pos, NegSum neg, double shift) {
    super(w);
    this.pos = pos;
    this.neg = neg;
    this.shift = shift;
  }

  @Override
  public DocIdSetIterator iterator() {
    return pos.iterator();
  }

  @Override
  public TwoPhaseIterator twoPhaseIterator() {
    return pos.twoPhaseIterator();
  }

  @Override
  public int docID() {
    return pos.docID();
  }

  private float minOuter = 0f;

  @Override
  public float score() throws IOException {
    last = shiftedScoreDouble(shift, pos.score(), neg, pos.docID(), minOuter);
    return (float) last;
  }

  @Override
  public double lastShiftedScore() {
    return last;
  }

  @Override
  public int advanceShallow(int target) throws IOException {
    return pos.advanceShallow(target);
  }

  @Override
  public float getMaxScore(int upTo) throws IOException {
    return Math.nextUp((float) (shift + pos.getMaxScore(upTo)));
  }

  @Override
  public void setMinCompetitiveScore(float minScore) throws IOException {
    minOuter = Math.max(minOuter, minScore);
    float m = innerMin(minScore, shift);
    if (m > innerSet) {
      innerSet = m;
      pos.setMinCompetitiveScore(m);
    }
  }

  /**
   * Score of a shifted candidate: shift + positive &minus; negative. Once a minimum competitive score
   * {@code min} is known, a document whose upper bound falls clearly below it (by more than one ulp,
   * so float rounding cannot make it tie) gets that upper bound instead of its exact score: it is
   * not competitive either way, and its remaining negative postings need not be read.
   */
  static float shiftedScore(double shift, float positive, NegSum neg, int doc, float min) throws IOException {
    return (float) shiftedScoreDouble(shift, positive, neg, doc, min);
  }

  /** {@link #shiftedScore} before rounding to float (what {@link UnshiftedQuery} unshifts, so that it loses no bits). */
  static double shiftedScoreDouble(double shift, float positive, NegSum neg, int doc, float min) throws IOException {
    double ub = shift + positive;
    if (min > 0) {
      double cut = (double) min - Math.ulp(min);
      if (ub < cut) {
        return ub;
      }
      double s = ub - neg.at(doc, ub - cut);
      return s > 0 ? s : 0;
    }
    double s = ub - neg.at(doc);
    return s > 0 ? s : 0;
  }

  /** Inner minimum competitive score for a wrapped scorer, conservative for float rounding. */
  static float innerMin(float outer, double shift) {
    double m = outer - shift - 4.0 * Math.ulp(outer) - 1e-9 * shift;
    if (m <= 0) {
      return 0f;
    }
    return Math.nextDown((float) m);
  }
}
