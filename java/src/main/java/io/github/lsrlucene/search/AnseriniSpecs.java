package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.query.UnshiftedQuery;
import io.github.lsrlucene.query.WindowQuery;
import java.io.BufferedReader;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.lucene.search.Query;

/**
 * Query specs ({@link QuerySpec}) inside Anserini's {@code SearchCollection}: the topic reader
 * {@code -topicReader QuerySpec} keeps each spec line as the topic's "title", and the query generator
 * {@code -generator QuerySpecQueryGenerator} turns that line into our Lucene query, scored with true
 * signed scores ({@link UnshiftedQuery}), so that Anserini's run equals {@link BatchSearcher}'s.
 * SearchCollection opens the main index only: window clauses join its positional sidecar per query
 * ({@link PositionsJoinQuery}); windows with {@code rerank} are refused (no first-stage list to hand over), and so are
 * weights too small for float scores ({@link QuerySpec#floatSafe}).
 */
public final class AnseriniSpecs {
  /** The topic field SearchCollection reads by default ({@code -topicField title}). */
  public static final String TOPIC_FIELD = "title";

  private AnseriniSpecs() {
  }

  /**
   * Reads a query-spec JSONL file as Anserini topics: qid &rarr; {"title": spec line}. Every line is
   * parsed first, so a bad line fails before searching, with a message naming {@code file:line}.
   */
  public static SortedMap<String, Map<String, String>> readTopics(BufferedReader reader, String file) throws IOException {
    SortedMap<String, Map<String, String>> topics = new TreeMap<>();
    String line;
    int no = 0;
    while ((line = reader.readLine()) != null) {
      no++;
      if (line.isBlank()) {
        continue;
      }
      QuerySpec spec = QuerySpec.parse(line, file + ":" + no);
      checkForAnserini(spec);
      if (topics.containsKey(spec.qid)) {
        throw new QuerySpecException(spec.label() + ": duplicate qid");
      }
      Map<String, String> fields = new HashMap<>();
      fields.put(TOPIC_FIELD, line.strip());
      topics.put(spec.qid, fields);
    }
    return topics;
  }

  private static void checkForAnserini(QuerySpec spec) {
    if (!spec.floatSafe) {
      throw new QuerySpecException(spec.label() + ": a weight below " + QuerySpec.SAFE_MIN_WEIGHT + " (zero or subnormal "
          + "as a float) is scored exactly only in double, which SearchCollection's float scores cannot report; search "
          + "this spec with lsr-lucene search --specs");
    }
    if (spec.exclude != null) {
      throw new QuerySpecException(spec.label() + ": \"exclude\" (explicit exclusions, a strict filter) reads the "
          + "index's text sidecar, which SearchCollection does not open; search this spec with lsr-lucene search --specs");
    }
    if (!spec.windows.isEmpty() && spec.rerank > 0) {
      throw new QuerySpecException(spec.label() + ": window clauses with \"rerank\" rescore a first-stage top list, "
          + "which SearchCollection cannot hand over; drop \"rerank\" (windows then join the full search) or search "
          + "this spec with lsr-lucene search --specs");
    }
  }

  /**
   * The Lucene query of one spec line: signed specs report true signed scores; window clauses read the
   * positional sidecar of the searcher's index, joined docid by docid ({@link PositionsJoinQuery}).
   */
  public static Query toQuery(String specJson) {
    QuerySpec spec = QuerySpec.parse(specJson, "");
    checkForAnserini(spec);
    Query q = spec.firstStage(PositionalIndexer.FIELD, WindowQuery.UNKNOWN_MAX_PAYLOAD); // a looser bound: same hits
    Query scored = spec.booleanMode ? q : new UnshiftedQuery(q);
    return spec.windows.isEmpty() ? scored : new PositionsJoinQuery(scored);
  }
}
