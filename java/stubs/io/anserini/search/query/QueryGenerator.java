package io.anserini.search.query;

import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.search.Query;

/** Compile-time stub of Anserini 1.7.1's QueryGenerator (signatures only; never packaged). */
public abstract class QueryGenerator {
  public abstract Query buildQuery(String field, Analyzer analyzer, String queryText);

  public Query buildQuery(Map<String, Float> fields, Analyzer analyzer, String queryText) {
    throw new UnsupportedOperationException("stub");
  }
}
