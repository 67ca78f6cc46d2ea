package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.query.SignedImpactQuery;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * Exact scores of a spec for given documents, read straight from the postings (no query, no top-k):
 * &Sigma; w &middot; (impact &minus; neg impact) (boolean mode: &Sigma; w &middot; impact, as its query scores) + w &middot;
 * &radic;(a &middot; b) per pair, plus windows via {@link WindowRescorer}, all in double.
 */
final class ExactScorer {
  private ExactScorer() {}

  /** Exact scores of {@code spec} for the given external docids (any document, matching or not). */
  static double[] score(IndexReader reader, ExternalIds ids, QuerySpec spec, String[] docids) throws IOException {
    Map<String, Integer> map = ids.idMap();
    int[] docs = new int[docids.length];
    for (int i = 0; i < docids.length; i++) {
      Integer d = map.get(docids[i]);
      if (d == null) {
        throw new QuerySpecException(spec.label() + ": docid '" + docids[i] + "' is not in the index");
      }
      docs[i] = d;
    }
    return score(reader, spec, docs);
  }

  /** Exact scores of {@code spec} for the given global Lucene docids. */
  static double[] score(IndexReader reader, QuerySpec spec, int[] docs) throws IOException {
    return score(reader, spec, docs, true);
  }

  /**
   * Exact scores of {@code spec} for the given global Lucene docids, its windows included or not (the first stage of
   * a window rerank). The sum runs term by term in spec order, then pairs, then windows, in double: the order of the
   * brute force, so that every entry point gives the same bits.
   */
  static double[] score(IndexReader reader, QuerySpec spec, int[] docs, boolean windows) throws IOException {
    double[] out = new double[docs.length];
    int[] order = WindowRescorer.docOrder(docs);
    List<LeafReaderContext> leaves = reader.leaves();
    // docs in docid order, leaf by leaf: each term's postings are looked up once per leaf and walked forward
    for (int from = 0; from < order.length; ) {
      LeafReaderContext ctx = leaves.get(ReaderUtil.subIndex(docs[order[from]], leaves));
      int end = ctx.docBase + ctx.reader().maxDoc();
      int to = from;
      while (to < order.length && docs[order[to]] < end) {
        to++;
      }
      Terms terms = ctx.reader().terms(spec.field);
      if (terms != null) {
        TermsEnum te = terms.iterator();
        for (Map.Entry<String, Double> e : spec.exactTerms.entrySet()) {
          long[] pos = freqs(te, e.getKey(), docs, order, from, to, ctx.docBase);
          long[] neg = spec.booleanMode
              ? new long[to - from] // boolean search scores the term's own impacts only
              : freqs(te, SignedImpactQuery.NEG_PREFIX + e.getKey(), docs, order, from, to, ctx.docBase);
          for (int k = from; k < to; k++) {
            out[order[k]] += e.getValue() * (pos[k - from] - neg[k - from]);
          }
        }
        for (int pi = 0; pi < spec.pairs.size(); pi++) {
          SignedImpactQuery.SignedPair p = spec.pairs.get(pi);
          double pw = spec.exactPairWeights.get(pi);
          long[] fa = freqs(te, p.a, docs, order, from, to, ctx.docBase);
          long[] fb = freqs(te, p.b, docs, order, from, to, ctx.docBase);
          for (int k = from; k < to; k++) {
            if (fa[k - from] > 0 && fb[k - from] > 0) {
              out[order[k]] += pw * Math.sqrt((double) fa[k - from] * fb[k - from]);
            }
          }
        }
      }
      from = to;
    }
    if (windows && !spec.windows.isEmpty()) {
      new WindowRescorer(PositionalIndexer.FIELD, spec.windows).addScores(reader, docs, order, out);
    }
    return out;
  }

  /** Impacts (term frequencies) of one term for docs[order[from..to)], all in one leaf, in docid order. */
  private static long[] freqs(TermsEnum te, String term, int[] docs, int[] order, int from, int to, int docBase)
      throws IOException {
    long[] f = new long[to - from];
    if (!te.seekExact(new BytesRef(term))) {
      return f;
    }
    PostingsEnum pe = te.postings(null, PostingsEnum.FREQS);
    for (int k = from; k < to; k++) {
      int local = docs[order[k]] - docBase;
      if (pe.docID() < local) {
        pe.advance(local);
      }
      if (pe.docID() == local) {
        f[k - from] = pe.freq();
      }
    }
    return f;
  }
}
