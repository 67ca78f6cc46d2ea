package io.github.lsrlucene.query;

import java.io.IOException;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.DocIdStream;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorable;

/** Passes hits of the positive bulk scorer on with shifted, negative-adjusted scores. */
final class ShiftingCollector implements LeafCollector {
  /** The scorable handed on: its last score is also known in double. */
  abstract static class ExactScorable extends Scorable implements ExactShifted {}

  private final LeafCollector in;
  private final NegSum neg;
  private final double shift;
  private Scorable inner;
  private int doc = -1;
  private float innerSet = 0f;
  private float minOuter = 0f;

  ShiftingCollector(LeafCollector in, NegSum neg, double shift) {
    this.in = in;
    this.neg = neg;
    this.shift = shift;
  }

  @Override
  public void setScorer(Scorable scorer) throws IOException {
    this.inner = scorer;
    innerSet = 0f;
    in.setScorer(new ExactScorable() {
      private double last;

      @Override
      public float score() throws IOException {
        last = ShiftedScorer.shiftedScoreDouble(shift, inner.score(), neg, doc, minOuter);
        return (float) last;
      }

      @Override
      public double lastShiftedScore() {
        return last;
      }

      @Override
      public int docID() {
        return doc;
      }

      @Override
      public void setMinCompetitiveScore(float minScore) throws IOException {
        minOuter = Math.max(minOuter, minScore);
        float m = ShiftedScorer.innerMin(minScore, shift);
        if (m > innerSet) {
          innerSet = m;
          inner.setMinCompetitiveScore(m);
        }
      }
    });
  }

  @Override
  public void collect(int d) throws IOException {
    doc = d;
    in.collect(d);
  }

  @Override
  public void collect(DocIdStream stream) throws IOException {
    stream.forEach(this::collect);
  }

  @Override
  public DocIdSetIterator competitiveIterator() throws IOException {
    return in.competitiveIterator();
  }

  @Override
  public void finish() throws IOException {
    in.finish();
  }
}
