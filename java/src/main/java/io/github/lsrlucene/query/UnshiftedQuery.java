package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.Objects;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.DocIdStream;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TwoPhaseIterator;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.Bits;

/**
 * A query scored with true signed scores, for collectors we do not control (Anserini's
 * SearchCollection): wraps a {@link SignedImpactQuery}, and when it rewrites to a
 * {@link SignedImpactQuery.Shifted} query, reports (float) (shifted score &minus; shift), the shifted score taken
 * in double ({@link ExactShifted}) so that the shift costs no bits, and maps minimum competitive scores back to
 * the shifted scale (conservatively, so ties still compete). A query without negative clauses rewrites to itself
 * unwrapped. Our own {@code BatchSearcher} rescores its top hits in double instead ({@code ExactScorer}).
 */
public final class UnshiftedQuery extends Query {
  private final Query in;

  public UnshiftedQuery(Query in) {
    this.in = Objects.requireNonNull(in, "query");
  }

  public Query getQuery() {
    return in;
  }

  @Override
  public Query rewrite(IndexSearcher searcher) throws IOException {
    Query r = in.rewrite(searcher);
    if (r == in) {
      return in instanceof SignedImpactQuery.Shifted ? this : in; // nothing to undo without a shift
    }
    return new UnshiftedQuery(r);
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
    Weight w = in.createWeight(searcher, scoreMode, boost);
    double shift = SignedImpactQuery.shiftOf(in) * boost;
    return shift == 0 ? w : new UnshiftedWeight(this, w, shift);
  }

  /** Score a collector sees: the signed score, rounded to float once. */
  static float unshift(float shifted, double shift) {
    return (float) ((double) shifted - shift);
  }

  /** Minimum competitive shifted score for a signed minimum: no document whose signed score reaches it is skipped. */
  static float shiftedMin(float signedMin, double shift) {
    double m = (double) signedMin + shift;
    m -= 4.0 * Math.ulp(signedMin) + 4.0 * Math.ulp((float) m);
    return m <= 0 ? 0f : Math.nextDown((float) m);
  }

  private static final class UnshiftedWeight extends Weight {
    private final Weight in;
    private final double shift;

    UnshiftedWeight(Query q, Weight in, double shift) {
      super(q);
      this.in = in;
      this.shift = shift;
    }

    @Override
    public boolean isCacheable(LeafReaderContext ctx) {
      return false;
    }

    @Override
    public Scorer scorer(LeafReaderContext ctx) throws IOException {
      Scorer s = in.scorer(ctx);
      return s == null ? null : new UnshiftedScorer(this, s, shift);
    }

    @Override
    public BulkScorer bulkScorer(LeafReaderContext ctx) throws IOException {
      BulkScorer b = in.bulkScorer(ctx);
      if (b == null) {
        return null;
      }
      return new BulkScorer() {
        @Override
        public int score(LeafCollector collector, Bits acceptDocs, int min, int max) throws IOException {
          return b.score(new UnshiftingCollector(collector, shift), acceptDocs, min, max);
        }

        @Override
        public long cost() {
          return b.cost();
        }
      };
    }

    @Override
    public Explanation explain(LeafReaderContext ctx, int doc) throws IOException {
      Explanation e = in.explain(ctx, doc);
      if (!e.isMatch()) {
        return e;
      }
      return Explanation.match(unshift(e.getValue().floatValue(), shift), "signed score = shifted score - shift", e,
          Explanation.match((float) shift, "shift"));
    }
  }

  private static final class UnshiftedScorer extends Scorer {
    private final Scorer in;
    private final double shift;
    private float innerSet = 0f;

    UnshiftedScorer(Weight w, Scorer in, double shift) {
      super(w);
      this.in = in;
      this.shift = shift;
    }

    @Override
    public DocIdSetIterator iterator() {
      return in.iterator();
    }

    @Override
    public TwoPhaseIterator twoPhaseIterator() {
      return in.twoPhaseIterator();
    }

    @Override
    public int docID() {
      return in.docID();
    }

    @Override
    public float score() throws IOException {
      float f = in.score();
      return in instanceof ExactShifted ? (float) (((ExactShifted) in).lastShiftedScore() - shift) : unshift(f, shift);
    }

    @Override
    public int advanceShallow(int target) throws IOException {
      return in.advanceShallow(target);
    }

    @Override
    public float getMaxScore(int upTo) throws IOException {
      return Math.nextUp(unshift(in.getMaxScore(upTo), shift));
    }

    @Override
    public void setMinCompetitiveScore(float minScore) throws IOException {
      float m = shiftedMin(minScore, shift);
      if (m > innerSet) {
        innerSet = m;
        in.setMinCompetitiveScore(m);
      }
    }
  }

  /** Passes hits of the shifted bulk scorer on with signed scores. */
  private static final class UnshiftingCollector implements LeafCollector {
    private final LeafCollector out;
    private final double shift;
    private Scorable inner;
    private float innerSet = 0f;

    UnshiftingCollector(LeafCollector out, double shift) {
      this.out = out;
      this.shift = shift;
    }

    @Override
    public void setScorer(Scorable scorer) throws IOException {
      inner = scorer;
      innerSet = 0f;
      out.setScorer(new Scorable() {
        @Override
        public float score() throws IOException {
          float f = inner.score();
          return inner instanceof ExactShifted
              ? (float) (((ExactShifted) inner).lastShiftedScore() - shift) // signed, rounded once
              : unshift(f, shift);
        }

        @Override
        public int docID() {
          return inner.docID();
        }

        @Override
        public void setMinCompetitiveScore(float minScore) throws IOException {
          float m = shiftedMin(minScore, shift);
          if (m > innerSet) {
            innerSet = m;
            inner.setMinCompetitiveScore(m);
          }
        }
      });
    }

    @Override
    public void collect(int doc) throws IOException {
      out.collect(doc);
    }

    @Override
    public void collect(DocIdStream stream) throws IOException {
      stream.forEach(this::collect);
    }

    @Override
    public DocIdSetIterator competitiveIterator() throws IOException {
      return out.competitiveIterator();
    }

    @Override
    public void finish() throws IOException {
      out.finish();
    }
  }

  @Override
  public String toString(String field) {
    return "Unshifted(" + in.toString(field) + ")";
  }

  @Override
  public void visit(QueryVisitor visitor) {
    in.visit(visitor);
  }

  @Override
  public boolean equals(Object other) {
    return sameClassAs(other) && in.equals(((UnshiftedQuery) other).in);
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), in);
  }
}
