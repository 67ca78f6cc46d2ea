package io.github.lsrlucene.query;

import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.Weight;

/**
 * Signed impact query over an Anserini impact field whose documents may carry {@code neg_<term>}
 * impacts for negative weights: score(d) = &Sigma;_t w_t &middot; (impact_t(d) &minus;
 * impact_neg_t(d)) + &Sigma;_pairs w &middot; sqrt(impact_a(d) &middot; impact_b(d)) + extra
 * non-negative clauses, with weights of either sign.
 *
 * <p>Candidates are the documents matching at least one positive contribution ((t, w&gt;0),
 * (neg_t, |w|) for w&lt;0, positive pairs, extra clauses). These form an ordinary disjunction that
 * Lucene searches with block-max WAND / MaxScore; negative contributions ((t, w&lt;0), (neg_t, w)
 * for w&gt;0, negative pairs) only lower scores and are added per candidate. Lucene needs
 * non-negative scores, so the rewritten query ({@link Shifted}) scores shift + score(d) where shift
 * = &Sigma; |w| &middot; (max impact of each negative clause's term) is the tightest per-query bound;
 * {@link Shifted#getShift()} gives it back so callers report the true signed score. Without
 * negative clauses the query rewrites to a plain {@code BooleanQuery} (shift 0).
 *
 * <p>Scoring of the shifted query: {@link ShiftedWeight} &rarr; {@link ShiftedScorer} (or
 * {@link ShiftingCollector} under a bulk scorer), negative sums per segment in {@link NegSum}.
 */
public final class SignedImpactQuery extends Query {
  /** Prefix of the terms that hold negative document weights. */
  public static final String NEG_PREFIX = "neg_";

  private final String field;
  private final Map<String, Float> terms;
  private final List<SignedPair> pairs;
  private final List<Query> positives;
  /** Max impacts of the whole collection when the index searched is one shard of it (null: the index's own). */
  private final Map<String, Long> collectionMaxImpacts;

  /** A signed combined-pair clause: w &middot; sqrt(impact_a &middot; impact_b). */
  public static final class SignedPair {
    public final String a;
    public final String b;
    public final float w;

    public SignedPair(String a, String b, float w) {
      this.a = a;
      this.b = b;
      this.w = w;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof SignedPair && ((SignedPair) o).a.equals(a) && ((SignedPair) o).b.equals(b)
          && Float.floatToIntBits(((SignedPair) o).w) == Float.floatToIntBits(w);
    }

    @Override
    public int hashCode() {
      return Objects.hash(a, b, w);
    }

    @Override
    public String toString() {
      return "(" + a + "," + b + ")^" + w;
    }
  }

  /** Terms only: term &rarr; signed weight. */
  public SignedImpactQuery(String field, Map<String, ? extends Number> weights) {
    this(field, toFloats(weights), List.of(), List.of(), null);
  }

  private SignedImpactQuery(String field, Map<String, Float> terms, List<SignedPair> pairs, List<Query> positives,
      Map<String, Long> collectionMaxImpacts) {
    this.field = Objects.requireNonNull(field, "field");
    this.terms = Collections.unmodifiableMap(terms);
    this.pairs = List.copyOf(pairs);
    this.positives = List.copyOf(positives);
    this.collectionMaxImpacts = collectionMaxImpacts == null ? null : Map.copyOf(collectionMaxImpacts);
  }

  private static Map<String, Float> toFloats(Map<String, ? extends Number> weights) {
    Builder b = new Builder("");
    for (Map.Entry<String, ? extends Number> e : weights.entrySet()) {
      b.term(e.getKey(), e.getValue().floatValue());
    }
    return b.terms;
  }

  public static Builder builder(String field) {
    return new Builder(field);
  }

  /** Builds a {@link SignedImpactQuery}: signed terms, signed pairs, extra non-negative clauses. */
  public static final class Builder {
    private final String field;
    private final LinkedHashMap<String, Float> terms = new LinkedHashMap<>();
    private final List<SignedPair> pairs = new ArrayList<>();
    private final List<Query> positives = new ArrayList<>();
    private Map<String, Long> collectionMaxImpacts;

    public Builder(String field) {
      this.field = field;
    }

    private static void check(String what, float w) {
      if (!Float.isFinite(w)) {
        throw new QuerySpecException(what + ": weight must be finite, got " + w);
      }
    }

    /** Adds a signed term weight (weights of a repeated term add up; zero weights are dropped). */
    public Builder term(String term, float weight) {
      check("term '" + term + "'", weight);
      float w = terms.getOrDefault(term, 0f) + weight;
      if (w == 0f) {
        terms.remove(term);
      } else {
        terms.put(term, w);
      }
      return this;
    }

    /** Adds a signed CPT pair clause w &middot; sqrt(impact_a &middot; impact_b). */
    public Builder pair(String a, String b, float weight) {
      check("pair (" + a + ", " + b + ")", weight);
      if (weight != 0f) {
        pairs.add(new SignedPair(a, b, weight));
      }
      return this;
    }

    /** Adds an extra clause whose scores are non-negative (e.g. a {@link WindowQuery}). */
    public Builder positive(Query q) {
      positives.add(Objects.requireNonNull(q));
      return this;
    }

    /**
     * Shifts by the max impacts of the whole collection (term &rarr; max impact; absent terms: this index's own)
     * when the index searched is one shard of it: every shard then scores shift + score with the shift of one
     * index of the whole collection, so the float sums, and the signed scores, are the same bits.
     */
    public Builder collectionMaxImpacts(Map<String, Long> maxImpacts) {
      collectionMaxImpacts = maxImpacts;
      return this;
    }

    public SignedImpactQuery build() {
      return new SignedImpactQuery(field, new LinkedHashMap<>(terms), pairs, positives, collectionMaxImpacts);
    }
  }

  public String getField() {
    return field;
  }

  /** Shift of a rewritten query: subtract it from hit scores to get the signed score (0 unless {@link Shifted}). */
  public static double shiftOf(Query rewritten) {
    return rewritten instanceof Shifted ? ((Shifted) rewritten).getShift() : 0.0;
  }

  public Map<String, Float> getTerms() {
    return terms;
  }

  @Override
  public Query rewrite(IndexSearcher searcher) throws IOException {
    IndexReader reader = searcher.getIndexReader();
    List<Query> pos = new ArrayList<>();
    List<String> negTerms = new ArrayList<>();
    List<Float> negTermW = new ArrayList<>();
    List<Double> negTermMax = new ArrayList<>();
    List<SignedPair> negPairs = new ArrayList<>();
    double shift = 0;
    for (Map.Entry<String, Float> e : terms.entrySet()) {
      String t = e.getKey();
      float w = e.getValue();
      String posTerm = w > 0 ? t : NEG_PREFIX + t;
      String negTerm = w > 0 ? NEG_PREFIX + t : t;
      float aw = Math.abs(w);
      if (w > 0 || ImpactBounds.maxFreq(reader, field, posTerm) > 0) { // skip absent neg_ terms early
        pos.add(new BoostQuery(new TermQuery(new Term(field, posTerm)), aw));
      }
      long maxNeg = negativeBound(reader, negTerm);
      if (maxNeg > 0) {
        negTerms.add(negTerm);
        negTermW.add(aw);
        negTermMax.add((double) aw * maxNeg);
        shift += (double) aw * maxNeg;
      }
    }
    for (SignedPair p : pairs) {
      if (p.w > 0) {
        pos.add(new CombinedTermQuery(field, p.a, p.b, p.w));
      } else {
        long ma = negativeBound(reader, p.a);
        long mb = negativeBound(reader, p.b);
        if (ma > 0 && mb > 0) {
          negPairs.add(new SignedPair(p.a, p.b, -p.w));
          shift += (double) -p.w * Math.sqrt((double) ma * mb);
        }
      }
    }
    pos.addAll(positives);
    Query positive;
    if (pos.isEmpty()) {
      return new MatchNoDocsQuery("no positive clause in signed impact query");
    } else if (pos.size() == 1) {
      positive = pos.get(0);
    } else {
      positive = ClauseGroupQuery.disjunction(pos); // any number of clauses, no global clause limit raised
    }
    if (negTerms.isEmpty() && negPairs.isEmpty()) {
      return positive;
    }
    // largest possible contributions first: an early exit in NegSum then comes soonest
    Integer[] order = new Integer[negTerms.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, (x, y) -> Double.compare(negTermMax.get(y), negTermMax.get(x)));
    String[] tn = new String[order.length];
    float[] tw = new float[order.length];
    for (int i = 0; i < order.length; i++) {
      tn[i] = negTerms.get(order[i]);
      tw[i] = negTermW.get(order[i]);
    }
    return new Shifted(field, positive, tn, tw, negPairs, shift);
  }

  /** Max impact of a term a negative clause subtracts: the index's own, or the collection's when one is given. */
  private long negativeBound(IndexReader reader, String term) throws IOException {
    long own = ImpactBounds.maxFreq(reader, field, term);
    return collectionMaxImpacts == null ? own : Math.max(own, collectionMaxImpacts.getOrDefault(term, 0L));
  }

  @Override
  public String toString(String defaultField) {
    StringBuilder sb = new StringBuilder("Signed(");
    String sep = "";
    for (Map.Entry<String, Float> e : terms.entrySet()) {
      sb.append(sep).append(e.getKey()).append('^').append(e.getValue());
      sep = " ";
    }
    for (SignedPair p : pairs) {
      sb.append(sep).append("CPT").append(p);
      sep = " ";
    }
    for (Query q : positives) {
      sb.append(sep).append(q.toString(defaultField));
      sep = " ";
    }
    return sb.append(')').toString();
  }

  @Override
  public void visit(QueryVisitor visitor) {
    QueryVisitor v = visitor.getSubVisitor(BooleanClause.Occur.SHOULD, this);
    if (visitor.acceptField(field)) {
      for (String t : terms.keySet()) {
        v.consumeTerms(this, new Term(field, t), new Term(field, NEG_PREFIX + t));
      }
      for (SignedPair p : pairs) {
        v.consumeTerms(this, new Term(field, p.a), new Term(field, p.b));
      }
    }
    for (Query q : positives) {
      q.visit(v);
    }
  }

  @Override
  public boolean equals(Object other) {
    if (!sameClassAs(other)) {
      return false;
    }
    SignedImpactQuery o = (SignedImpactQuery) other;
    return field.equals(o.field) && terms.equals(o.terms) && pairs.equals(o.pairs) && positives.equals(o.positives)
        && Objects.equals(collectionMaxImpacts, o.collectionMaxImpacts);
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), field, terms, pairs, positives, collectionMaxImpacts);
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Rewritten signed query: a non-negative positive query plus negative clauses applied per
   * candidate, scored shift + positive(d) &minus; negative(d) &ge; 0.
   */
  public static final class Shifted extends Query {
    private final String field;
    private final Query positive;
    private final String[] negTerms;
    private final float[] negWeights;
    private final List<SignedPair> negPairs;
    private final double shift;

    Shifted(String field, Query positive, String[] negTerms, float[] negWeights, List<SignedPair> negPairs, double shift) {
      this.field = field;
      this.positive = positive;
      this.negTerms = negTerms;
      this.negWeights = negWeights;
      this.negPairs = List.copyOf(negPairs);
      this.shift = shift;
    }

    /** The constant added to every signed score to make it non-negative; subtract it from hit scores. */
    public double getShift() {
      return shift;
    }

    public Query getPositive() {
      return positive;
    }

    /** Per-segment sum of this query's negative contributions, scaled by {@code scale} (the boost). */
    NegSum negSum(LeafReader reader, double scale) throws IOException {
      return new NegSum(reader, scale, field, negTerms, negWeights, negPairs);
    }

    @Override
    public Query rewrite(IndexSearcher searcher) throws IOException {
      Query p = positive.rewrite(searcher);
      if (p != positive) {
        return new Shifted(field, p, negTerms, negWeights, negPairs, shift);
      }
      return this;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
      Weight pw = searcher.createWeight(positive, scoreMode, boost);
      return new ShiftedWeight(this, pw, boost);
    }

    @Override
    public String toString(String defaultField) {
      StringBuilder sb = new StringBuilder("Shifted(").append(positive.toString(defaultField)).append(" -");
      for (int i = 0; i < negTerms.length; i++) {
        sb.append(' ').append(negTerms[i]).append('^').append(negWeights[i]);
      }
      for (SignedPair p : negPairs) {
        sb.append(" CPT").append(p);
      }
      return sb.append(" +").append(shift).append(')').toString();
    }

    @Override
    public void visit(QueryVisitor visitor) {
      positive.visit(visitor.getSubVisitor(BooleanClause.Occur.SHOULD, this));
    }

    @Override
    public boolean equals(Object other) {
      if (!sameClassAs(other)) {
        return false;
      }
      Shifted o = (Shifted) other;
      return field.equals(o.field) && positive.equals(o.positive) && java.util.Arrays.equals(negTerms, o.negTerms)
          && java.util.Arrays.equals(negWeights, o.negWeights) && negPairs.equals(o.negPairs)
          && Double.compare(shift, o.shift) == 0;
    }

    @Override
    public int hashCode() {
      return Objects.hash(classHash(), field, positive, java.util.Arrays.hashCode(negTerms),
          java.util.Arrays.hashCode(negWeights), negPairs, shift);
    }
  }
}
