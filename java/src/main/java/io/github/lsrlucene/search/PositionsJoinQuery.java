package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.DocIds;
import io.github.lsrlucene.index.PositionalIndexer;
import io.github.lsrlucene.index.PositionalSidecar;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ParallelLeafReader;
import org.apache.lucene.search.BulkScorer;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.util.IOUtils;

/**
 * Runs a query with window clauses for a searcher that opened the main index only (Anserini's
 * SearchCollection): the searcher's single-segment index is joined docid by docid with its positional
 * sidecar ({@code <index>/positions}, as {@link BatchSearcher} does), once per index reader, and the
 * query is scored on that join with the searcher's similarity. Docids and segment are the same, so the
 * searcher's collector and sort (Anserini's ties by the "id" field) work unchanged.
 */
final class PositionsJoinQuery extends Query {
  private static final Map<IndexReader, IndexSearcher> JOINED = Collections.synchronizedMap(new WeakHashMap<>());

  private final Query in;
  private final IndexSearcher joined; // null until rewritten

  PositionsJoinQuery(Query in) {
    this(in, null);
  }

  private PositionsJoinQuery(Query in, IndexSearcher joined) {
    this.in = Objects.requireNonNull(in);
    this.joined = joined;
  }

  /** The searcher over main index + sidecar for the searcher's reader (opened on first use, closed with it). */
  private static IndexSearcher joinedSearcher(IndexSearcher outer) throws IOException {
    IndexReader main = outer.getIndexReader();
    synchronized (JOINED) {
      IndexSearcher s = JOINED.get(main);
      if (s == null) {
        s = open(main);
        s.setSimilarity(outer.getSimilarity());
        s.setQueryCache(null);
        JOINED.put(main, s);
      }
      return s;
    }
  }

  private static IndexSearcher open(IndexReader main) throws IOException {
    Directory dir = main instanceof DirectoryReader ? FilterDirectory.unwrap(((DirectoryReader) main).directory()) : null;
    if (!(dir instanceof FSDirectory)) {
      throw new QuerySpecException("window clauses need an index folder with its positional field; the searcher reads " + main);
    }
    Path indexPath = ((FSDirectory) dir).getDirectory();
    Path posPath = indexPath.resolve(PositionalIndexer.POSITIONS_DIR);
    if (!Files.isDirectory(posPath)) {
      throw new QuerySpecException("window clauses need the positional field, but " + posPath
          + " does not exist; build it first (lsr-lucene index --positions)");
    }
    Directory posDir = FSDirectory.open(posPath);
    DirectoryReader pos = null;
    try {
      pos = DirectoryReader.open(posDir);
      DirectoryReader posReader = pos;
      ParallelLeafReader join = PositionalSidecar.join(indexPath, (DirectoryReader) main, pos, DocIds.read(main, "id"));
      IndexReader.CacheHelper helper = main.getReaderCacheHelper();
      if (helper != null) {
        helper.addClosedListener(key -> IOUtils.close(join, posReader, posDir)); // the sidecar's Directory too
      }
      return new IndexSearcher(join);
    } catch (IOException | RuntimeException e) {
      IOUtils.closeWhileHandlingException(pos, posDir);
      throw e;
    }
  }

  @Override
  public Query rewrite(IndexSearcher searcher) throws IOException {
    if (joined != null) {
      return this;
    }
    IndexSearcher s = joinedSearcher(searcher);
    return new PositionsJoinQuery(s.rewrite(in), s);
  }

  @Override
  public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
    IndexSearcher s = joined != null ? joined : joinedSearcher(searcher);
    Weight w = s.createWeight(joined != null ? in : s.rewrite(in), scoreMode, boost);
    return new Weight(this) {
      private LeafReaderContext leaf(LeafReaderContext ctx) {
        LeafReaderContext j = s.getIndexReader().leaves().get(ctx.ord);
        if (j.reader().maxDoc() != ctx.reader().maxDoc()) {
          throw new UncheckedIOException(new IOException("segment " + ctx.ord + " does not match the positional join"));
        }
        return j;
      }

      @Override
      public Scorer scorer(LeafReaderContext ctx) throws IOException {
        return w.scorer(leaf(ctx));
      }

      @Override
      public BulkScorer bulkScorer(LeafReaderContext ctx) throws IOException {
        return w.bulkScorer(leaf(ctx));
      }

      @Override
      public Explanation explain(LeafReaderContext ctx, int doc) throws IOException {
        return w.explain(leaf(ctx), doc);
      }

      @Override
      public boolean isCacheable(LeafReaderContext ctx) {
        return false;
      }
    };
  }

  @Override
  public String toString(String field) {
    return "PositionsJoin(" + in.toString(field) + ")";
  }

  @Override
  public void visit(QueryVisitor visitor) {
    in.visit(visitor);
  }

  @Override
  public boolean equals(Object other) {
    return sameClassAs(other) && in.equals(((PositionsJoinQuery) other).in)
        && joined == ((PositionsJoinQuery) other).joined;
  }

  @Override
  public int hashCode() {
    return Objects.hash(classHash(), in, System.identityHashCode(joined));
  }
}
