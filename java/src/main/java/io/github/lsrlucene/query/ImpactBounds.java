package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.lucene.index.Impact;
import org.apache.lucene.index.Impacts;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.StringHelper;

/**
 * Exact maximum impact (term frequency) of a term, per segment or over a whole index.
 * Read from the postings' skip-level impacts; short postings lists, whose impacts Lucene does not
 * record, are scanned. Results are cached per segment core (or reader) and field in concurrent maps keyed by the
 * term itself (a query's term strings, hashed once, serve every shard and segment), dropped when the segment closes:
 * no lock is taken on the search path.
 */
public final class ImpactBounds {
  private static final ConcurrentHashMap<Object, Map<String, FieldBounds>> CACHE = new ConcurrentHashMap<>();

  /** One field's cached bounds in one segment, and whether the field holds any {@code neg_} term there. */
  private static final class FieldBounds {
    final Map<String, Long> max = new ConcurrentHashMap<>();
    volatile Boolean signed; // null until first asked
  }

  private ImpactBounds() {}

  /** The cache of one segment core (a ParallelLeafReader has none: its reader's), null when it has neither. */
  private static Map<String, FieldBounds> cacheFor(LeafReader reader) {
    IndexReader.CacheHelper helper = reader.getCoreCacheHelper();
    if (helper == null) {
      helper = reader.getReaderCacheHelper();
    }
    if (helper == null) {
      return null;
    }
    IndexReader.CacheKey key = helper.getKey();
    Map<String, FieldBounds> cache = CACHE.get(key);
    if (cache != null) {
      return cache;
    }
    Map<String, FieldBounds> fresh = new ConcurrentHashMap<>();
    cache = CACHE.putIfAbsent(key, fresh);
    if (cache == null) {
      helper.addClosedListener(CACHE::remove); // entries live as long as the segment, not the JVM
      cache = fresh;
    }
    return cache;
  }

  /** The cached bounds of {@code field} in one segment; null when the segment has no cache. */
  private static FieldBounds boundsFor(LeafReader reader, String field) {
    Map<String, FieldBounds> cache = cacheFor(reader);
    return cache == null ? null : cache.computeIfAbsent(field, f -> new FieldBounds());
  }

  /** Largest freq of {@code term} in {@code field} over one segment; 0 when absent. */
  public static long maxFreq(LeafReader reader, String field, String term) throws IOException {
    FieldBounds bounds = boundsFor(reader, field);
    if (bounds == null) {
      return computeMaxFreq(reader, field, term);
    }
    Long hit = bounds.max.get(term);
    if (hit != null) {
      return hit;
    }
    long max = computeMaxFreq(reader, field, term);
    bounds.max.put(term, max);
    return max;
  }

  /**
   * Largest freq of {@code term}'s {@code neg_} twin in {@code field} over one segment; 0 when absent, found without
   * a term lookup when the field holds no {@code neg_} term in the segment at all (an index of positive weights).
   */
  public static long negMaxFreq(LeafReader reader, String field, String term) throws IOException {
    FieldBounds bounds = boundsFor(reader, field);
    if (bounds != null) {
      Boolean signed = bounds.signed;
      if (signed == null) {
        bounds.signed = signed = hasTermWithPrefix(reader, field, SignedImpactQuery.NEG_PREFIX);
      }
      if (!signed) {
        return 0;
      }
    }
    return maxFreq(reader, field, SignedImpactQuery.NEG_PREFIX + term);
  }

  /** Whether {@code field} holds a term starting with {@code prefix} in one segment. */
  public static boolean hasTermWithPrefix(LeafReader reader, String field, String prefix) throws IOException {
    Terms terms = reader.terms(field);
    if (terms == null) {
      return false;
    }
    BytesRef p = new BytesRef(prefix);
    TermsEnum te = terms.iterator();
    return te.seekCeil(p) != TermsEnum.SeekStatus.END && StringHelper.startsWith(te.term(), p);
  }

  /**
   * A bound on a term's score (weight × freq) over docids [from, to) from the block-max impacts of its postings
   * {@code p} there: 0 when it has no document left before {@code to}, at most {@code max} (its bound anywhere).
   */
  public static long windowBound(ImpactsEnum p, int weight, long max, int from, int to) throws IOException {
    if (p.docID() >= to) {
      return 0;
    }
    p.advanceShallow(Math.max(from, p.docID()));
    Impacts impacts = p.getImpacts();
    for (int level = 0; level < impacts.numLevels(); level++) {
      if (impacts.getDocIdUpTo(level) >= to - 1) {
        int freq = 0;
        for (Impact impact : impacts.getImpacts(level)) {
          freq = Math.max(freq, impact.freq);
        }
        return Math.min(max, (long) weight * freq);
      }
    }
    return max;
  }

  /** A bound of one segment. */
  private interface SegmentBound {
    long of(LeafReader segment) throws IOException;
  }

  /** The largest of {@code bound} over all segments of {@code reader}; 0 when it has none. */
  private static long largest(IndexReader reader, SegmentBound bound) throws IOException {
    long max = 0;
    for (LeafReaderContext ctx : reader.leaves()) {
      max = Math.max(max, bound.of(ctx.reader()));
    }
    return max;
  }

  /** Largest freq of {@code term} over all segments of {@code reader}; 0 when absent. */
  public static long maxFreq(IndexReader reader, String field, String term) throws IOException {
    return largest(reader, segment -> maxFreq(segment, field, term));
  }

  /** Largest freq of {@code term} or its {@code neg_} twin over all segments of {@code reader}; 0 when absent. */
  public static long signedMaxFreq(IndexReader reader, String field, String term) throws IOException {
    return largest(reader, segment -> Math.max(maxFreq(segment, field, term), negMaxFreq(segment, field, term)));
  }

  /** Largest freq of {@code term}'s {@code neg_} twin over all segments of {@code reader}; 0 when absent. */
  public static long negMaxFreq(IndexReader reader, String field, String term) throws IOException {
    return largest(reader, segment -> negMaxFreq(segment, field, term));
  }

  private static long computeMaxFreq(LeafReader reader, String field, String term) throws IOException {
    Terms terms = reader.terms(field);
    if (terms == null) {
      return 0;
    }
    TermsEnum te = terms.iterator();
    if (!te.seekExact(new BytesRef(term))) {
      return 0;
    }
    if (!terms.hasFreqs()) {
      return 1;
    }
    long max = 0;
    ImpactsEnum impacts = te.impacts(PostingsEnum.FREQS);
    int target = 0;
    boolean scan = false;
    while (true) {
      impacts.advanceShallow(target);
      Impacts imp = impacts.getImpacts();
      int level = imp.numLevels() - 1;
      List<Impact> list = imp.getImpacts(level);
      for (Impact i : list) {
        if (i.freq == Integer.MAX_VALUE) {
          scan = true; // no impact data recorded (short postings): scan instead
        }
        max = Math.max(max, i.freq);
      }
      int upTo = imp.getDocIdUpTo(level);
      if (scan || upTo == DocIdSetIterator.NO_MORE_DOCS) {
        break;
      }
      target = upTo + 1;
    }
    if (scan) {
      max = 0;
      PostingsEnum pe = te.postings(null, PostingsEnum.FREQS);
      for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
        max = Math.max(max, pe.freq());
      }
    }
    return max;
  }
}
