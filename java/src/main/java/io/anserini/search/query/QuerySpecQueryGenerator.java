package io.anserini.search.query;

import io.github.lsrlucene.search.AnseriniSpecs;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.search.Query;

/**
 * Anserini hook ({@code SearchCollection -generator QuerySpecQueryGenerator}): the topic text is one
 * lsr_lucene query spec (JSON; see {@code io.github.lsrlucene.search.QuerySpec}), searched with our
 * signed / combined-term query classes. Anserini loads generators from this package by simple name.
 */
public class QuerySpecQueryGenerator extends QueryGenerator {
  @Override
  public Query buildQuery(String field, Analyzer analyzer, String queryText) {
    return AnseriniSpecs.toQuery(queryText); // the spec names its field ("contents" unless given)
  }

  @Override
  public Query buildQuery(Map<String, Float> fields, Analyzer analyzer, String queryText) {
    throw new UnsupportedOperationException("QuerySpecQueryGenerator takes the field from each query spec; drop -fields");
  }
}
