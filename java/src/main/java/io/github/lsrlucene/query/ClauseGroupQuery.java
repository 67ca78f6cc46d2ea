package io.github.lsrlucene.query;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Weight;

/**
 * A disjunction of at most {@link IndexSearcher#getMaxClauseCount()} clauses that counts as one clause, so that
 * queries of any length (long documents as queries, many pairs) are searched without raising Lucene's global
 * clause limit, which would change the behaviour of every other searcher in the JVM (Pyserini's too).
 */
public final class ClauseGroupQuery extends Query {
  private final Query in;

  private ClauseGroupQuery(Query in) {
    this.in = Objects.requireNonNull(in);
  }

  /** The SHOULD disjunction of {@code clauses}: a plain BooleanQuery within the limit, else groups of it. */
  public static Query disjunction(List<Query> clauses) {
    int limit = IndexSearcher.getMaxClauseCount();
    if (clauses.size() <= limit) {
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      for (Query q : clauses) {
        b.add(q, BooleanClause.Occur.SHOULD);
      }
      return b.build();
    }
    List<Query> groups = new ArrayList<>();
    for (int from = 0; from < clauses.size(); from += limit) {
      groups.add(new ClauseGroupQuery(disjunction(clauses.subList(from, Math.min(clauses.size(), from + limit)))));
    }
    return disjunction(groups);
  }

  @Override
  public Query rewrite(IndexSearcher searcher) throws IOException {
    Query r = in;
    for (Query next = r.rewrite(searcher); next != r; next = r.rewrite(searcher)) {
      r = next;
    }
    return r == in ? this : new ClauseGroupQuery(r);
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
    return in.createWeight(searcher, scoreMode, boost);
  }

  @Override
  public void visit(QueryVisitor visitor) {
    visitor.visitLeaf(this); // one clause for the searcher's clause count: the group itself is within the limit
  }

  @Override
  public String toString(String field) {
    return "Group(" + in.toString(field) + ")";
  }

  @Override
  public boolean equals(Object other) {
    return sameClassAs(other) && in.equals(((ClauseGroupQuery) other).in);
  }

  @Override
  public int hashCode() {
    return 31 * classHash() + in.hashCode();
  }
}
