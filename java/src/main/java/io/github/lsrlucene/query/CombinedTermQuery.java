package io.github.lsrlucene.query;

import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.lucene.index.Impact;
import org.apache.lucene.index.Impacts;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.ConjunctionUtils;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.BytesRef;

/**
 * Combined pair term (CPT): for terms a and b of an impact field, score(d) = w &middot;
 * sqrt(impact_a(d) &middot; impact_b(d)) over documents holding both terms. Block-max bounds come
 * from both postings' impacts (w &middot; sqrt(maxA &middot; maxB) per block), so the query prunes
 * inside a {@code BooleanQuery} like a {@code TermQuery}. The weight must be finite and &ge; 0;
 * {@link SignedImpactQuery} handles negative pair weights.
 */
public final class CombinedTermQuery extends Query {
  private final String field;
  private final String termA;
  private final String termB;
  private final float weight;

  public CombinedTermQuery(String field, String termA, String termB, float weight) {
    this.field = Objects.requireNonNull(field, "field");
    this.termA = Objects.requireNonNull(termA, "termA");
    this.termB = Objects.requireNonNull(termB, "termB");
    if (!Float.isFinite(weight) || weight < 0) {
      throw new QuerySpecException("pair (" + termA + ", " + termB + "): weight must be finite and >= 0, got " + weight);
    }
    this.weight = weight;
  }

  public String getField() {
    return field;
  }

  public String getTermA() {
    return termA;
  }

  public String getTermB() {
    return termB;
  }

  public float getWeight() {
    return weight;
  }

  @Override
  public String toString(String defaultField) {
    String f = field.equals(defaultField) ? "" : field + ":";
    return "CPT(" + f + termA + "," + termB + ")^" + weight;
  }

  @Override
  public void visit(QueryVisitor visitor) {
    if (visitor.acceptField(field)) {
      visitor.consumeTerms(this, new Term(field, termA), new Term(field, termB));
    }
  }

  @Override
  public boolean equals(Object other) {
    if (!sameClassAs(other)) {
      return false;
    }
    CombinedTermQuery o = (CombinedTermQuery) other;
    return field.equals(o.field) && termA.equals(o.termA) && termB.equals(o.termB)
        && Float.floatToIntBits(weight) == Float.floatToIntBits(o.weight);
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), field, termA, termB, weight);
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) {
    final float w = weight * boost;
    return new Weight(this) {
      @Override
      public boolean isCacheable(LeafReaderContext ctx) {
        return true;
      }

      @Override
      public Scorer scorer(LeafReaderContext ctx) throws IOException {
        LeafReader reader = ctx.reader();
        Terms terms = reader.terms(field);
        if (terms == null) {
          return null;
        }
        ImpactsEnum a = open(terms, termA);
        if (a == null) {
          return null;
        }
        ImpactsEnum b = open(terms, termB);
        if (b == null) {
          return null;
        }
        long maxA = ImpactBounds.maxFreq(reader, field, termA);
        long maxB = ImpactBounds.maxFreq(reader, field, termB);
        return new PairScorer(this, a, b, maxA, maxB, w);
      }

      @Override
      public Explanation explain(LeafReaderContext ctx, int doc) throws IOException {
        Scorer s = scorer(ctx);
        if (s != null && s.iterator().advance(doc) == doc) {
          PairScorer ps = (PairScorer) s;
          return Explanation.match(s.score(), "w * sqrt(impact_a * impact_b)",
              Explanation.match(w, "w"), Explanation.match(ps.a.freq(), "impact of " + termA),
              Explanation.match(ps.b.freq(), "impact of " + termB));
        }
        return Explanation.noMatch("document lacks " + termA + " or " + termB);
      }
    };
  }

  private static ImpactsEnum open(Terms terms, String term) throws IOException {
    TermsEnum te = terms.iterator();
    if (!te.seekExact(new BytesRef(term))) {
      return null;
    }
    return te.impacts(PostingsEnum.FREQS);
  }

  /** Max freq in the smallest impact level reaching {@code upTo}; {@code global} when none does. */
  static long maxFreqUpTo(ImpactsEnum e, int upTo, long global) throws IOException {
    Impacts imp = e.getImpacts();
    for (int level = 0; level < imp.numLevels(); level++) {
      if (imp.getDocIdUpTo(level) >= upTo) {
        List<Impact> list = imp.getImpacts(level);
        long f = list.get(list.size() - 1).freq;
        return Math.min(f, global);
      }
    }
    return global;
  }

  static final class PairScorer extends Scorer {
    final ImpactsEnum a;
    final ImpactsEnum b;
    private final DocIdSetIterator conj;
    private final long maxA;
    private final long maxB;
    private final float w;

    PairScorer(Weight weight, ImpactsEnum a, ImpactsEnum b, long maxA, long maxB, float w) {
      super(weight);
      this.a = a;
      this.b = b;
      this.conj = ConjunctionUtils.intersectIterators(Arrays.asList(a, b));
      this.maxA = maxA;
      this.maxB = maxB;
      this.w = w;
      try {
        a.advanceShallow(0);
        b.advanceShallow(0);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public DocIdSetIterator iterator() {
      return conj;
    }

    @Override
    public int docID() {
      return conj.docID();
    }

    @Override
    public float score() throws IOException {
      return (float) (w * Math.sqrt((double) a.freq() * (double) b.freq()));
    }

    @Override
    public int advanceShallow(int target) throws IOException {
      a.advanceShallow(target);
      b.advanceShallow(target);
      return Math.min(a.getImpacts().getDocIdUpTo(0), b.getImpacts().getDocIdUpTo(0));
    }

    @Override
    public float getMaxScore(int upTo) throws IOException {
      long fa = maxFreqUpTo(a, upTo, maxA);
      long fb = maxFreqUpTo(b, upTo, maxB);
      return Math.nextUp((float) (w * Math.sqrt((double) fa * (double) fb)));
    }
  }
}
