package io.github.lsrlucene;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.DocIdStream;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TwoPhaseIterator;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

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
 */
public final class SignedImpactQuery extends Query {
  /** Prefix of the terms that hold negative document weights. */
  public static final String NEG_PREFIX = "neg_";

  private final String field;
  private final Map<String, Float> terms;
  private final List<SignedPair> pairs;
  private final List<Query> positives;

  /** A signed combined-pair clause: w &middot; sqrt(impact_a &middot; impact_b). */
  public static final class SignedPair {
    final String a;
    final String b;
    final float w;

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
    this(field, toFloats(weights), List.of(), List.of());
  }

  private SignedImpactQuery(String field, Map<String, Float> terms, List<SignedPair> pairs, List<Query> positives) {
    this.field = Objects.requireNonNull(field, "field");
    this.terms = Collections.unmodifiableMap(terms);
    this.pairs = List.copyOf(pairs);
    this.positives = List.copyOf(positives);
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

    public SignedImpactQuery build() {
      return new SignedImpactQuery(field, new LinkedHashMap<>(terms), pairs, positives);
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
      long maxNeg = ImpactBounds.maxFreq(reader, field, negTerm);
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
        long ma = ImpactBounds.maxFreq(reader, field, p.a);
        long mb = ImpactBounds.maxFreq(reader, field, p.b);
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
      BooleanQuery.Builder bq = new BooleanQuery.Builder();
      for (Query q : pos) {
        bq.add(q, BooleanClause.Occur.SHOULD);
      }
      positive = bq.build();
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
    return field.equals(o.field) && terms.equals(o.terms) && pairs.equals(o.pairs) && positives.equals(o.positives);
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), field, terms, pairs, positives);
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

    /** Sum of the negative contributions at increasing docids of one segment. */
    /**
     * Sum of the negative contributions at increasing docids of one segment, in windows of 4096
     * docids. Where candidates come sparsely, the negative term postings sit in a min-heap on their
     * current docid, so a candidate advances only the postings positioned before it (like Lucene's
     * disjunction queue). Where they come densely (the previous window had at least one candidate per
     * {@link #DENSE_RATIO} expected negative postings), the window's negative postings are decoded in
     * one sequential pass into an array, as Lucene's BooleanScorer does for disjunctions.
     */
    final class NegSum {
      static final int WINDOW_BITS = 12;
      static final int WINDOW = 1 << WINDOW_BITS;
      static final int DENSE_RATIO = 16;
      private final double[] acc = new double[WINDOW];
      private double postingsPerWindow;
      private int window = -1;
      private boolean dense;
      private int seenInWindow;
      private final LeafReader reader;
      private PostingsEnum[] termEnums;
      private float[] termW;
      private int[] cur;
      private int[] heap;
      private int[] stack;
      private PostingsEnum[][] pairEnums;
      private int last = -1;
      private final double scale;

      NegSum(LeafReader reader, double scale) throws IOException {
        this.reader = reader;
        this.scale = scale;
        open();
      }

      private void open() throws IOException {
        Terms t = reader.terms(field);
        TermsEnum te = t == null ? null : t.iterator();
        List<PostingsEnum> enums = new ArrayList<>();
        List<Float> ws = new ArrayList<>();
        long postings = 0;
        for (int i = 0; i < negTerms.length; i++) {
          if (te != null && te.seekExact(new BytesRef(negTerms[i]))) {
            enums.add(te.postings(null, PostingsEnum.FREQS));
            ws.add(negWeights[i]);
            postings += te.docFreq();
          }
        }
        postingsPerWindow = (double) postings * WINDOW / Math.max(1, reader.maxDoc());
        window = -1;
        dense = false;
        seenInWindow = 0;
        int n = enums.size();
        termEnums = enums.toArray(new PostingsEnum[0]);
        termW = new float[n];
        cur = new int[n];
        heap = new int[n];
        stack = new int[n];
        for (int i = 0; i < n; i++) {
          termW[i] = ws.get(i);
          cur[i] = -1;
          heap[i] = i;
        }
        pairEnums = new PostingsEnum[negPairs.size()][];
        for (int i = 0; i < negPairs.size(); i++) {
          SignedPair p = negPairs.get(i);
          if (te != null && te.seekExact(new BytesRef(p.a))) {
            PostingsEnum a = te.postings(null, PostingsEnum.FREQS);
            if (te.seekExact(new BytesRef(p.b))) {
              pairEnums[i] = new PostingsEnum[] {a, te.postings(null, PostingsEnum.FREQS)};
            }
          }
        }
        last = -1;
      }

      /** Decodes the negative term postings of window {@code w}, from docid {@code from} on, into {@link #acc}. */
      private void fill(int w, int from) throws IOException {
        java.util.Arrays.fill(acc, 0.0);
        int base = w << WINDOW_BITS;
        int start = Math.max(base, from);
        int end = base + WINDOW;
        for (int i = 0; i < termEnums.length; i++) {
          PostingsEnum e = termEnums[i];
          int d = e.docID();
          if (d < start) {
            d = e.advance(start);
          }
          double tw = termW[i];
          while (d < end) {
            acc[d - base] += tw * e.freq();
            d = e.nextDoc();
          }
          cur[i] = d;
        }
        for (int h = heap.length / 2 - 1; h >= 0; h--) {
          siftDown(h);
        }
      }

      private void siftDown() {
        siftDown(0);
      }

      private void siftDown(int start) {
        int n = heap.length;
        int i = start;
        int node = heap[start];
        int key = cur[node];
        while (true) {
          int l = 2 * i + 1;
          if (l >= n) {
            break;
          }
          int r = l + 1;
          int c = (r < n && cur[heap[r]] < cur[heap[l]]) ? r : l;
          if (cur[heap[c]] < key) {
            heap[i] = heap[c];
            i = c;
          } else {
            break;
          }
        }
        heap[i] = node;
      }

      double at(int doc) throws IOException {
        return at(doc, Double.POSITIVE_INFINITY);
      }

      /**
       * Sum of the negative contributions at {@code doc}; may stop early, returning a partial sum, as
       * soon as the sum exceeds {@code stopAbove} (the document then cannot be competitive).
       */
      double at(int doc, double stopAbove) throws IOException {
        if (doc < last) {
          open();
        }
        last = doc;
        double limit = stopAbove / scale;
        double sum = 0;
        int w = doc >>> WINDOW_BITS;
        if (w != window) {
          int prev = w == window + 1 ? seenInWindow : 0;
          window = w;
          seenInWindow = 0;
          dense = heap.length > 0 && (double) prev * DENSE_RATIO >= postingsPerWindow;
          if (dense) {
            fill(w, doc);
          }
        }
        seenInWindow++;
        if (!dense && (seenInWindow & 63) == 0 && heap.length > 0) {
          // candidates denser than expected: decode the rest of this window in one pass
          int offset = (doc & (WINDOW - 1)) + 1;
          if ((double) seenInWindow * WINDOW / offset * DENSE_RATIO >= postingsPerWindow) {
            dense = true;
            fill(w, doc);
          }
        }
        if (dense) {
          sum = acc[doc & (WINDOW - 1)];
        } else if (heap.length > 0) {
          while (cur[heap[0]] < doc) {
            int i = heap[0];
            cur[i] = termEnums[i].advance(doc);
            siftDown();
          }
          if (cur[heap[0]] == doc) {
            // every entry at doc forms a subtree at the root: walk it
            int sp = 0;
            stack[sp++] = 0;
            while (sp > 0) {
              int h = stack[--sp];
              int i = heap[h];
              sum += (double) termW[i] * termEnums[i].freq();
              int l = 2 * h + 1;
              if (l < heap.length && cur[heap[l]] == doc) {
                stack[sp++] = l;
              }
              if (l + 1 < heap.length && cur[heap[l + 1]] == doc) {
                stack[sp++] = l + 1;
              }
            }
          }
        }
        for (int i = 0; i < pairEnums.length; i++) {
          if (sum > limit) {
            return sum * scale;
          }
          PostingsEnum[] pe = pairEnums[i];
          if (pe == null) {
            continue;
          }
          int da = pe[0].docID() < doc ? pe[0].advance(doc) : pe[0].docID();
          int db = pe[1].docID() < doc ? pe[1].advance(doc) : pe[1].docID();
          if (da == doc && db == doc) {
            sum += (double) negPairs.get(i).w * Math.sqrt((double) pe[0].freq() * pe[1].freq());
          }
        }
        return sum * scale;
      }
    }

    private final class ShiftedWeight extends Weight {
      private final Weight pw;
      private final double scale;
      private final double sh;

      ShiftedWeight(Query q, Weight pw, float boost) {
        super(q);
        this.pw = pw;
        this.scale = boost;
        this.sh = shift * boost;
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
        return new ShiftedScorer(this, ps, new NegSum(ctx.reader(), scale), sh);
      }

      @Override
      public BulkScorer bulkScorer(LeafReaderContext ctx) throws IOException {
        BulkScorer pb = pw.bulkScorer(ctx);
        if (pb == null) {
          return null;
        }
        NegSum neg = new NegSum(ctx.reader(), scale);
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
        double neg = new NegSum(ctx.reader(), scale).at(doc);
        double s = sh + pe.getValue().doubleValue() - neg;
        return Explanation.match((float) s, "shift + positive - negative (true score = this - shift)",
            Explanation.match((float) sh, "shift"), pe, Explanation.match((float) neg, "negative contributions"));
      }
    }
  }

  /**
   * Score of a shifted candidate: shift + positive &minus; negative. Once a minimum competitive score
   * {@code min} is known, a document whose upper bound falls clearly below it (by more than one ulp,
   * so float rounding cannot make it tie) gets that upper bound instead of its exact score: it is
   * not competitive either way, and its remaining negative postings need not be read.
   */
  static float shiftedScore(double shift, float positive, Shifted.NegSum neg, int doc, float min) throws IOException {
    double ub = shift + positive;
    if (min > 0) {
      double cut = (double) min - Math.ulp(min);
      if (ub < cut) {
        return (float) ub;
      }
      double s = ub - neg.at(doc, ub - cut);
      return s > 0 ? (float) s : 0f;
    }
    double s = ub - neg.at(doc);
    return s > 0 ? (float) s : 0f;
  }

  /** Inner minimum competitive score for a wrapped scorer, conservative for float rounding. */
  static float innerMin(float outer, double shift) {
    double m = outer - shift - 4.0 * Math.ulp(outer) - 1e-9 * shift;
    if (m <= 0) {
      return 0f;
    }
    return Math.nextDown((float) m);
  }

  private static final class ShiftedScorer extends Scorer {
    private final Scorer pos;
    private final Shifted.NegSum neg;
    private final double shift;
    private float innerSet = 0f;

    ShiftedScorer(Weight w, Scorer pos, Shifted.NegSum neg, double shift) {
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
      return shiftedScore(shift, pos.score(), neg, pos.docID(), minOuter);
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
  }

  /** Passes hits of the positive bulk scorer on with shifted, negative-adjusted scores. */
  private static final class ShiftingCollector implements LeafCollector {
    private final LeafCollector in;
    private final Shifted.NegSum neg;
    private final double shift;
    private Scorable inner;
    private int doc = -1;
    private float innerSet = 0f;
    private float minOuter = 0f;

    ShiftingCollector(LeafCollector in, Shifted.NegSum neg, double shift) {
      this.in = in;
      this.neg = neg;
      this.shift = shift;
    }

    @Override
    public void setScorer(Scorable scorer) throws IOException {
      this.inner = scorer;
      innerSet = 0f;
      in.setScorer(new Scorable() {
        @Override
        public float score() throws IOException {
          return shiftedScore(shift, inner.score(), neg, doc, minOuter);
        }

        @Override
        public int docID() {
          return doc;
        }

        @Override
        public void setMinCompetitiveScore(float minScore) throws IOException {
          minOuter = Math.max(minOuter, minScore);
          float m = innerMin(minScore, shift);
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
}
