package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.apache.lucene.index.ImpactsEnum;
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
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * &Sigma; w &middot; impact over terms with positive integral weights, the sum an integer below 2^24 (so float
 * scores are exact), searched for the top hits by MaxScore over windows of docids: per window, each term's bound
 * comes from the block-max impacts Lucene stores, a window whose bounds cannot reach the threshold is skipped
 * undecoded (what a BP order makes frequent), the essential terms are summed term-at-a-time into an array, and
 * the other terms are looked up only for documents that can still compete. It scores exactly what the
 * equivalent {@code BooleanQuery} of boosted {@code TermQuery}s scores under {@link ImpactSimilarity}, which it
 * falls back to for anything but top-k collection.
 */
public final class ImpactMaxScoreQuery extends Query {
  /** Docids per window: the unit of skipping and of term-at-a-time summing. */
  static final int WINDOW = 4096;
  /** Advancing a postings list to a given document costs about as much as decoding this many postings. */
  static final int ADVANCE_COST = 16;

  private final String field;
  private final String[] terms;
  private final int[] weights;
  private final DenseImpacts dense;
  private final float heapFactor;

  /** {@code terms[i]} weighs {@code weights[i]} &ge; 1; terms are distinct. */
  public ImpactMaxScoreQuery(String field, String[] terms, int[] weights) {
    this(field, terms, weights, null);
  }

  /**
   * As above, with the index's dense-impacts sidecar (null: none): on the segments it covers, the query's dense terms
   * are summed from it ({@link DenseBlockMaxScorer}) instead of from their postings.
   */
  public ImpactMaxScoreQuery(String field, String[] terms, int[] weights, DenseImpacts dense) {
    this(field, terms, weights, dense, 1f);
  }

  /**
   * As above; {@code heapFactor} in (0, 1] makes the search approximate when below 1 (BMP's and Seismic's parameter
   * of the kind): windows and blocks of documents are pruned against threshold / heapFactor, so a document that
   * would only just enter the top k may be missed, while every hit keeps its exact score.
   */
  public ImpactMaxScoreQuery(String field, String[] terms, int[] weights, DenseImpacts dense, float heapFactor) {
    if (!(heapFactor > 0f && heapFactor <= 1f)) {
      throw new IllegalArgumentException("heapFactor must be in (0, 1], got " + heapFactor);
    }
    if (terms.length != weights.length) {
      throw new IllegalArgumentException(terms.length + " terms but " + weights.length + " weights");
    }
    for (int w : weights) {
      if (w < 1) {
        throw new IllegalArgumentException("weights must be positive integers, got " + w);
      }
    }
    this.field = Objects.requireNonNull(field);
    this.terms = terms.clone();
    this.weights = weights.clone();
    this.dense = dense != null && dense.problem == null ? dense : null;
    this.heapFactor = heapFactor;
  }

  /** The same scores as a BooleanQuery of boosted TermQuerys (what other score modes and explain use). */
  Query asBooleanQuery() {
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (int i = 0; i < terms.length; i++) {
      b.add(new BoostQuery(new TermQuery(new Term(field, terms[i])), weights[i]), BooleanClause.Occur.SHOULD);
    }
    return b.build();
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
    return new Weight(this) {
      private Weight fallback; // built on first use: top-k search never needs it (its term lookups cost ~2 us a term)

      private synchronized Weight fallback() throws IOException {
        if (fallback == null) {
          fallback = searcher.createWeight(searcher.rewrite(asBooleanQuery()), scoreMode, boost);
        }
        return fallback;
      }

      @Override
      public BulkScorer bulkScorer(LeafReaderContext context) throws IOException {
        if (scoreMode != ScoreMode.TOP_SCORES || boost != 1f) {
          return fallback().bulkScorer(context);
        }
        BulkScorer s = dense == null ? null : DenseBlockMaxScorer.create(context, dense, field, terms, weights,
            heapFactor);
        return s != null ? s : WindowScorer.create(context.reader(), field, terms, weights, heapFactor);
      }

      @Override
      public Scorer scorer(LeafReaderContext context) throws IOException {
        return fallback().scorer(context);
      }

      @Override
      public Explanation explain(LeafReaderContext context, int doc) throws IOException {
        return fallback().explain(context, doc);
      }

      @Override
      public boolean isCacheable(LeafReaderContext ctx) {
        return false;
      }
    };
  }

  /** The window-at-a-time MaxScore bulk scorer of one segment. */
  static final class WindowScorer extends BulkScorer {
    private final ImpactsEnum[] postings;
    private final int[] weights;
    private final long[] maxScores; // per term: w * largest impact in the segment
    private final int[] docFreqs;
    private final int maxDoc;
    private final long cost;
    private final int[] acc = new int[WINDOW];
    private final int[] candidates = new int[WINDOW]; // window offsets of the documents still competing
    private final long[] matched = new long[WINDOW / 64];
    private final long[] bounds;
    private final Integer[] order;
    private final long[] below; // below[j]: sum of the bounds of order[0..j)
    private final Hit hit = new Hit();
    private final float heapFactor;

    private WindowScorer(ImpactsEnum[] postings, int[] weights, long[] maxScores, int[] docFreqs, int maxDoc,
                         long cost, float heapFactor) {
      this.heapFactor = heapFactor;
      this.postings = postings;
      this.docFreqs = docFreqs;
      this.weights = weights;
      this.maxScores = maxScores;
      this.maxDoc = maxDoc;
      this.cost = cost;
      bounds = new long[postings.length];
      order = new Integer[postings.length];
      below = new long[postings.length + 1];
    }

    /** The scorer of the query's terms present in {@code reader}; null when none is. {@code heapFactor} as the query's. */
    static WindowScorer create(LeafReader reader, String field, String[] terms, int[] weights, float heapFactor)
        throws IOException {
      Terms fieldTerms = reader.terms(field);
      if (fieldTerms == null) {
        return null;
      }
      TermsEnum te = fieldTerms.iterator();
      ImpactsEnum[] found = new ImpactsEnum[terms.length];
      int[] w = new int[terms.length];
      long[] max = new long[terms.length];
      int[] df = new int[terms.length];
      int n = 0;
      long cost = 0;
      for (int i = 0; i < terms.length; i++) {
        if (te.seekExact(new BytesRef(terms[i]))) {
          found[n] = te.impacts(PostingsEnum.FREQS);
          w[n] = weights[i];
          max[n] = (long) weights[i] * ImpactBounds.maxFreq(reader, field, terms[i]);
          df[n] = te.docFreq();
          cost += df[n];
          n++;
        }
      }
      if (n == 0) {
        return null;
      }
      return new WindowScorer(Arrays.copyOf(found, n), Arrays.copyOf(w, n), Arrays.copyOf(max, n), Arrays.copyOf(df, n),
          reader.maxDoc(), cost, heapFactor);
    }

    @Override
    public int score(LeafCollector collector, Bits acceptDocs, int min, int max) throws IOException {
      collector.setScorer(hit);
      int end = Math.min(max, maxDoc);
      for (int from = min; from < end; from += WINDOW) {
        scoreWindow(collector, acceptDocs, from, Math.min(end, from + WINDOW));
      }
      int next = DocIdSetIterator.NO_MORE_DOCS;
      for (ImpactsEnum p : postings) {
        int d = p.docID() < end ? p.advance(end) : p.docID();
        next = Math.min(next, d);
      }
      return next;
    }

    /**
     * Scores the documents of [from, to) that can reach the collector's threshold: the essential terms summed
     * term-at-a-time, then each other term (largest bound first) added to the documents that can still compete,
     * by decoding its window when that is cheaper than advancing to each of them, else by advancing.
     */
    private void scoreWindow(LeafCollector collector, Bits acceptDocs, int from, int to) throws IOException {
      int m = postings.length;
      long total = 0;
      for (int i = 0; i < m; i++) {
        bounds[i] = ImpactBounds.windowBound(postings[i], weights[i], maxScores[i], from, to);
        total += bounds[i];
        order[i] = i;
      }
      float cut = cut();
      if (total < cut) {
        return; // no document of the window can compete: nothing decoded
      }
      Arrays.sort(order, (a, b) -> Long.compare(bounds[a], bounds[b]));
      for (int j = 0; j < m; j++) {
        below[j + 1] = below[j] + bounds[order[j]];
      }
      // terms order[0..ess) together cannot reach the threshold: only documents of the others are candidates
      int ess = 0;
      while (ess < m && below[ess + 1] < cut) {
        ess++;
      }
      for (int j = ess; j < m; j++) {
        int i = order[j];
        if (bounds[i] > 0) {
          decodeInto(i, from, to, true);
        }
      }
      int n = 0;
      for (int word = 0; word < matched.length; word++) {
        for (long bits = matched[word]; bits != 0; bits &= bits - 1) {
          candidates[n++] = (word << 6) | Long.numberOfTrailingZeros(bits);
        }
      }
      for (int j = ess - 1; j >= 0 && n > 0; j--) {
        int i = order[j];
        if (bounds[i] == 0) {
          continue;
        }
        double expected = (double) docFreqs[i] * (to - from) / maxDoc; // the term's postings in this window
        if (n * ADVANCE_COST > expected) {
          decodeInto(i, from, to, false); // dense candidates: decoding beats advancing; others gain harmless sums
          continue;
        }
        n = keepCompetitive(n, below[j + 1]);
        ImpactsEnum p = postings[i];
        long w = weights[i];
        for (int c = 0; c < n; c++) {
          int doc = from + candidates[c];
          int d = p.docID() < doc ? p.advance(doc) : p.docID();
          if (d == doc) {
            acc[candidates[c]] += w * p.freq();
          }
        }
      }
      float threshold = hit.threshold;
      for (int c = 0; c < n; c++) {
        int doc = from + candidates[c];
        if (acc[candidates[c]] >= threshold && (acceptDocs == null || acceptDocs.get(doc))) {
          hit.doc = doc;
          hit.score = acc[candidates[c]];
          collector.collect(doc);
          threshold = hit.threshold;
        }
      }
      Arrays.fill(matched, 0L);
      Arrays.fill(acc, 0, to - from, 0);
    }

    /**
     * The bound a window, or a document of the non-essential terms alone, must reach to be scored: the threshold,
     * divided by the heap factor (documents that are scored are pruned against the threshold itself).
     */
    private float cut() {
      return heapFactor >= 1f ? hit.threshold : hit.threshold / heapFactor;
    }

    /** Adds term i's scores over [from, to) into the window, marking its documents as candidates when {@code mark}. */
    private void decodeInto(int i, int from, int to, boolean mark) throws IOException {
      ImpactsEnum p = postings[i];
      int w = weights[i];
      int d = p.docID() < from ? p.advance(from) : p.docID();
      if (mark) {
        for (; d < to; d = p.nextDoc()) {
          int x = d - from;
          acc[x] += w * p.freq();
          matched[x >>> 6] |= 1L << x;
        }
      } else {
        for (; d < to; d = p.nextDoc()) {
          acc[d - from] += w * p.freq();
        }
      }
    }

    /**
     * Keeps the first n candidates whose score so far plus {@code rest} (a bound on what the terms still to add can
     * give) reaches the threshold. Returns how many are kept, in docid order.
     */
    private int keepCompetitive(int n, long rest) {
      float threshold = hit.threshold;
      int kept = 0;
      for (int c = 0; c < n; c++) {
        int x = candidates[c];
        if (acc[x] + rest >= threshold) {
          candidates[kept++] = x;
        }
      }
      return kept;
    }

    @Override
    public long cost() {
      return cost;
    }
  }

  /** The current hit, as the collector sees it; the threshold the collector raises. */
  static final class Hit extends Scorable {
    int doc = -1;
    long score;
    float threshold = Float.NEGATIVE_INFINITY;

    @Override
    public float score() {
      return score;
    }

    @Override
    public int docID() {
      return doc;
    }

    @Override
    public void setMinCompetitiveScore(float minScore) {
      threshold = Math.max(threshold, minScore);
    }
  }

  @Override
  public void visit(QueryVisitor visitor) {
    visitor.visitLeaf(this);
  }

  @Override
  public String toString(String f) {
    StringBuilder b = new StringBuilder("ImpactMaxScore(");
    for (int i = 0; i < terms.length; i++) {
      b.append(i == 0 ? "" : " ").append(terms[i]).append('^').append(weights[i]);
    }
    return b.append(heapFactor < 1f ? ", heapFactor " + heapFactor : "").append(')').toString();
  }

  @Override
  public boolean equals(Object other) {
    if (!sameClassAs(other)) {
      return false;
    }
    ImpactMaxScoreQuery o = (ImpactMaxScoreQuery) other;
    return field.equals(o.field) && Arrays.equals(terms, o.terms) && Arrays.equals(weights, o.weights)
        && heapFactor == o.heapFactor;
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), field, Arrays.hashCode(terms), Arrays.hashCode(weights), heapFactor);
  }
}
