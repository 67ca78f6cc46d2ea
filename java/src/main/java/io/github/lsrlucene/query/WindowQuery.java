package io.github.lsrlucene.query;

import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.lucene.analysis.payloads.PayloadHelper;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.ConjunctionUtils;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TwoPhaseIterator;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.BytesRef;

/**
 * Proximity query over a positional field whose tokens carry float payloads (per-position term
 * weights, see {@link io.github.lsrlucene.index.PositionalIndexer}). Given terms t_i with query
 * weights q_i &ge; 0:
 * <ul>
 *   <li>ordered: a match is t_1..t_n at consecutive positions p, p+1, ..., p+n-1 (an n-gram);
 *   <li>unordered: a match places every t_i at some position, all within a span of {@code width}
 *       positions (max position &minus; min position &lt; width), in any order.
 * </ul>
 * score(d) = max over matches in d of &Sigma;_i q_i &middot; payload_i. Documents without a match do
 * not match. A missing payload counts as 1.
 */
public final class WindowQuery extends Query {
  /** Upper bound used for getMaxScore when the largest payload of the field is unknown. */
  public static final float UNKNOWN_MAX_PAYLOAD = 1e6f;

  private final String field;
  private final String[] terms;
  private final float[] weights;
  private final boolean ordered;
  private final int width;
  private final float maxPayload;

  /**
   * @param width for unordered windows the span in positions (&ge; number of terms); ignored when ordered
   * @param maxPayload largest payload in the field (for block-max bounds); {@link #UNKNOWN_MAX_PAYLOAD} if unknown
   */
  public WindowQuery(String field, String[] terms, float[] weights, boolean ordered, int width, float maxPayload) {
    this.field = Objects.requireNonNull(field, "field");
    if (terms.length == 0 || terms.length != weights.length) {
      throw new QuerySpecException("window: needs at least one term and one weight per term");
    }
    this.terms = terms.clone();
    this.weights = weights.clone();
    for (int i = 0; i < terms.length; i++) {
      if (!Float.isFinite(weights[i]) || weights[i] < 0) {
        throw new QuerySpecException("window term '" + terms[i] + "': weight must be finite and >= 0, got " + weights[i]);
      }
    }
    this.ordered = ordered;
    if (!ordered) {
      Set<String> seen = new HashSet<>(Arrays.asList(terms));
      if (seen.size() != terms.length) {
        throw new QuerySpecException("unordered window: terms must be distinct, got " + Arrays.toString(terms));
      }
      if (width < terms.length) {
        throw new QuerySpecException("unordered window: width " + width + " is smaller than its " + terms.length + " terms");
      }
    }
    this.width = ordered ? terms.length : width;
    if (!(maxPayload >= 0) || Float.isInfinite(maxPayload)) {
      throw new QuerySpecException("window: maxPayload must be finite and >= 0, got " + maxPayload);
    }
    this.maxPayload = maxPayload;
  }

  public WindowQuery(String field, String[] terms, float[] weights, boolean ordered, int width) {
    this(field, terms, weights, ordered, width, UNKNOWN_MAX_PAYLOAD);
  }

  public String getField() {
    return field;
  }

  public boolean isOrdered() {
    return ordered;
  }

  public int getWidth() {
    return width;
  }

  public List<String> getTerms() {
    return List.of(terms);
  }

  @Override
  public String toString(String defaultField) {
    StringBuilder sb = new StringBuilder(ordered ? "#od(" : "#uw" + width + "(");
    if (!field.equals(defaultField)) {
      sb.append(field).append(':');
    }
    for (int i = 0; i < terms.length; i++) {
      sb.append(i == 0 ? "" : " ").append(terms[i]).append('^').append(weights[i]);
    }
    return sb.append(')').toString();
  }

  @Override
  public void visit(QueryVisitor visitor) {
    if (visitor.acceptField(field)) {
      QueryVisitor v = visitor.getSubVisitor(BooleanClause.Occur.MUST, this);
      Term[] ts = new Term[terms.length];
      for (int i = 0; i < terms.length; i++) {
        ts[i] = new Term(field, terms[i]);
      }
      v.consumeTerms(this, ts);
    }
  }

  @Override
  public boolean equals(Object other) {
    if (!sameClassAs(other)) {
      return false;
    }
    WindowQuery o = (WindowQuery) other;
    return field.equals(o.field) && Arrays.equals(terms, o.terms) && Arrays.equals(weights, o.weights)
        && ordered == o.ordered && width == o.width && Float.compare(maxPayload, o.maxPayload) == 0;
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), field, Arrays.hashCode(terms), Arrays.hashCode(weights), ordered, width, maxPayload);
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) {
    final float[] q = new float[weights.length];
    double bound = 0;
    for (int i = 0; i < q.length; i++) {
      q[i] = weights[i] * boost;
      bound += (double) q[i] * maxPayload;
    }
    final float maxScore = Math.nextUp((float) bound);
    return new Weight(this) {
      @Override
      public boolean isCacheable(LeafReaderContext ctx) {
        return true;
      }

      @Override
      public Scorer scorer(LeafReaderContext ctx) throws IOException {
        LeafReader reader = ctx.reader();
        FieldInfo fi = reader.getFieldInfos().fieldInfo(field);
        if (fi == null) {
          return null;
        }
        if (fi.getIndexOptions().compareTo(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS) < 0) {
          throw new QuerySpecException("field '" + field + "' has no positions; windows need a positional field");
        }
        Terms ts = reader.terms(field);
        if (ts == null) {
          return null;
        }
        TermsEnum te = ts.iterator();
        PostingsEnum[] pe = new PostingsEnum[terms.length];
        for (int i = 0; i < terms.length; i++) {
          if (!te.seekExact(new BytesRef(terms[i]))) {
            return null;
          }
          pe[i] = te.postings(null, PostingsEnum.PAYLOADS);
        }
        return new WindowScorer(this, pe, q, ordered, width, maxScore);
      }

      @Override
      public Explanation explain(LeafReaderContext ctx, int doc) throws IOException {
        Scorer s = scorer(ctx);
        if (s != null) {
          TwoPhaseIterator tpi = s.twoPhaseIterator();
          if (tpi.approximation().advance(doc) == doc && tpi.matches()) {
            return Explanation.match(s.score(), "max over " + (ordered ? "ordered n-gram" : "unordered window") + " matches of sum q_i * payload_i");
          }
        }
        return Explanation.noMatch("no " + (ordered ? "ordered" : "unordered") + " window match");
      }
    };
  }

  /**
   * Best match score max &Sigma;_i q_i &middot; payload_i of window terms whose positions and payloads
   * are {@code pos[slot[i]]}, {@code pay[slot[i]]} (first {@code len[slot[i]]} entries, increasing
   * positions); {@code -Infinity} when the window does not match. Shared with the search package's
   * WindowRescorer, so both score windows alike.
   */
  public static double bestMatch(int[][] pos, float[][] pay, int[] len, int[] slot, double[] q, boolean ordered, int width) {
    int n = slot.length;
    double best = Double.NEGATIVE_INFINITY;
    if (ordered) {
      int s0 = slot[0];
      int[] ptr = new int[n];
      outer:
      for (int j = 0; j < len[s0]; j++) {
        int p0 = pos[s0][j];
        double s = q[0] * pay[s0][j];
        for (int i = 1; i < n; i++) {
          int si = slot[i];
          int want = p0 + i;
          while (ptr[i] < len[si] && pos[si][ptr[i]] < want) {
            ptr[i]++;
          }
          if (ptr[i] >= len[si]) {
            break outer;
          }
          if (pos[si][ptr[i]] != want) {
            continue outer;
          }
          s += q[i] * pay[si][ptr[i]];
        }
        if (s > best) {
          best = s;
        }
      }
    } else {
      // anchors: every occurrence of every term, as the window's first position
      for (int a = 0; a < n; a++) {
        int sa = slot[a];
        for (int j = 0; j < len[sa]; j++) {
          int start = pos[sa][j];
          int end = start + width - 1;
          double s = 0;
          boolean ok = true;
          for (int i = 0; i < n && ok; i++) {
            int si = slot[i];
            int lo = WindowScorer.lowerBound(pos[si], len[si], start);
            double bi = Double.NEGATIVE_INFINITY;
            for (int k = lo; k < len[si] && pos[si][k] <= end; k++) {
              double v = q[i] * pay[si][k];
              if (v > bi) {
                bi = v;
              }
            }
            if (bi == Double.NEGATIVE_INFINITY) {
              ok = false;
            } else {
              s += bi;
            }
          }
          if (ok && s > best) {
            best = s;
          }
        }
      }
    }
    return best;
  }

  /** Reads the positions and float payloads of a postings enum positioned on a document. */
  public static int readPositions(PostingsEnum pe, int[][] pos, float[][] pay, int slot) throws IOException {
    int f = pe.freq();
    if (pos[slot].length < f) {
      pos[slot] = new int[Math.max(f, pos[slot].length * 2)];
      pay[slot] = new float[pos[slot].length];
    }
    for (int j = 0; j < f; j++) {
      pos[slot][j] = pe.nextPosition();
      BytesRef b = pe.getPayload();
      pay[slot][j] = (b == null || b.length < 4) ? 1f : PayloadHelper.decodeFloat(b.bytes, b.offset);
    }
    return f;
  }

  static final class WindowScorer extends Scorer {
    private final PostingsEnum[] pe;
    private final float[] q;
    private final boolean ordered;
    private final int width;
    private final float maxScore;
    private final DocIdSetIterator approx;
    private final TwoPhaseIterator tpi;
    private int[][] pos;
    private float[][] pay;
    private int[] len;
    private final int[] identity;
    private final double[] qd; // q as doubles, for bestMatch
    private float score;

    WindowScorer(Weight w, PostingsEnum[] pe, float[] q, boolean ordered, int width, float maxScore) {
      super(w);
      this.pe = pe;
      this.q = q;
      this.ordered = ordered;
      this.width = width;
      this.maxScore = maxScore;
      List<DocIdSetIterator> its = new ArrayList<>(Arrays.asList(pe));
      this.approx = pe.length == 1 ? pe[0] : ConjunctionUtils.intersectIterators(its);
      this.pos = new int[pe.length][8];
      this.pay = new float[pe.length][8];
      this.len = new int[pe.length];
      this.identity = new int[pe.length];
      this.qd = new double[q.length];
      for (int i = 0; i < q.length; i++) {
        qd[i] = q[i];
      }
      for (int i = 0; i < identity.length; i++) {
        identity[i] = i;
      }
      this.tpi = new TwoPhaseIterator(approx) {
        @Override
        public boolean matches() throws IOException {
          return computeScore();
        }

        @Override
        public float matchCost() {
          return 50f * pe.length;
        }
      };
    }

    private void load() throws IOException {
      for (int i = 0; i < pe.length; i++) {
        len[i] = readPositions(pe[i], pos, pay, i);
      }
    }

    /** Finds the best match in the current document; false when there is none. */
    private boolean computeScore() throws IOException {
      load();
      double best = bestMatch(pos, pay, len, identity, qd, ordered, width);
      if (best == Double.NEGATIVE_INFINITY) {
        return false;
      }
      score = (float) best;
      return true;
    }

    static int lowerBound(int[] a, int n, int key) {
      int lo = 0;
      int hi = n;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (a[mid] < key) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    @Override
    public DocIdSetIterator iterator() {
      return TwoPhaseIterator.asDocIdSetIterator(tpi);
    }

    @Override
    public TwoPhaseIterator twoPhaseIterator() {
      return tpi;
    }

    @Override
    public int docID() {
      return approx.docID();
    }

    @Override
    public float score() {
      return score;
    }

    @Override
    public float getMaxScore(int upTo) {
      return maxScore;
    }
  }
}
