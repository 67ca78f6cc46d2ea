package io.github.lsrlucene.query;

import java.io.IOException;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.Bits;

/**
 * Weight of {@link SignedImpactQuery.Shifted}: wraps the positive query's weight and adds the
 * negative contributions of each segment ({@link NegSum}) per candidate, shifted by the query's shift.
 */
final class ShiftedWeight extends Weight {
  private final SignedImpactQuery.Shifted query;
  private final Weight pw;
  private final double scale;
  private final double sh;

  ShiftedWeight(SignedImpactQuery.Shifted q, Weight pw, float boost) {
    super(q);
    this.query = q;
    this.pw = pw;
    this.scale = boost;
    this.sh = q.getShift() * boost;
  }

  @Override
  public boolean isCacheable(LeafReaderContext ctx) {
    return false;
  }

  @Override
  public Scorer scorer(LeafReaderContext ctx) throws IOException {
    Scorer ps = pw.scorer(ctx);
    if (ps == null) {
      return null;
    }
    return new ShiftedScorer(this, ps, query.negSum(ctx.reader(), scale), sh);
  }

  @Override
  public BulkScorer bulkScorer(LeafReaderContext ctx) throws IOException {
    BulkScorer pb = pw.bulkScorer(ctx);
    if (pb == null) {
      return null;
    }
    NegSum neg = query.negSum(ctx.reader(), scale);
    return new BulkScorer() {
      @Override
      public int score(LeafCollector collector, Bits acceptDocs, int min, int max) throws IOException {
        return pb.score(new ShiftingCollector(collector, neg, sh), acceptDocs, min, max);
      }

      @Override
      public long cost() {
        return pb.cost();
      }
    };
  }

  @Override
  public Explanation explain(LeafReaderContext ctx, int doc) throws IOException {
    Explanation pe = pw.explain(ctx, doc);
    if (!pe.isMatch()) {
      return pe;
    }
    double neg = query.negSum(ctx.reader(), scale).at(doc);
    double s = sh + pe.getValue().doubleValue() - neg;
    return Explanation.match((float) s, "shift + positive - negative (true score = this - shift)",
        Explanation.match((float) sh, "shift"), pe, Explanation.match((float) neg, "negative contributions"));
  }
}
