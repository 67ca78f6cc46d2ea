package io.github.lsrlucene.search;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.util.FixedBitSet;

/**
 * The strict text filter of explicit exclusions ({@code -word}, {@code NOT "a phrase"}): one analyser (Lucene's
 * {@link EnglishAnalyzer}: standard tokenizer, possessive 's dropped, lower case, English stop words, Porter stems)
 * for the text sidecar ({@code <index>/text}, {@link io.github.lsrlucene.index.TextIndexer}) and for the clauses, and
 * the documents a filter expression matches as a bitset of global docids that searches skip.
 *
 * <p>A filter expression (JSON) is a clause {@code {"text": "hot dogs"}} (the document holds the clause's analysed
 * terms as a phrase, positions as the analyser gives them, stop-word gaps included; one term: that term), {@code
 * {"any": "tea coffee"}} (holds at least one of the terms), or {@code {"or": [..]}}, {@code {"and": [..]}}, {@code
 * {"not": e}} of expressions.
 */
public final class TextFilter {
  /** Folder of the text sidecar inside the main index folder, and its field. */
  public static final String DIR = "text";
  public static final String FIELD = "text";
  public static final String ID_FIELD = "text_id";
  private static final Analyzer ANALYZER = new EnglishAnalyzer();

  private TextFilter() {}

  /** The analyser of the text field and of every clause (thread-safe: it keeps its components per thread). */
  public static Analyzer analyzer() {
    return ANALYZER;
  }

  /** The analysed terms of a text by position: position i holds its term, or "" where a stop word left a gap. */
  public static String[] positions(String text) {
    List<String> out = new ArrayList<>();
    try (TokenStream ts = ANALYZER.tokenStream(FIELD, text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      PositionIncrementAttribute inc = ts.addAttribute(PositionIncrementAttribute.class);
      ts.reset();
      int pos = -1;
      while (ts.incrementToken()) {
        pos += inc.getPositionIncrement();
        while (out.size() < pos) {
          out.add("");
        }
        out.add(term.toString());
      }
      ts.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toArray(new String[0]);
  }

  /** The Lucene query of a filter expression over {@link #FIELD}; a clause of stop words alone is an error. */
  public static Query query(JsonNode e, String where) {
    if (e == null || !e.isObject() || e.size() != 1) {
      throw new QuerySpecException(where + ": a text filter is one of {\"text\"|\"any\": str} or "
          + "{\"or\"|\"and\": [..]} or {\"not\": ..}, got " + e);
    }
    String op = e.fieldNames().next();
    JsonNode v = e.get(op);
    switch (op) {
      case "text":
      case "any": {
        if (!v.isTextual()) {
          throw new QuerySpecException(where + ": \"" + op + "\" takes a string, got " + v);
        }
        String[] pos = positions(v.asText());
        int first = 0;
        while (first < pos.length && pos[first].isEmpty()) {
          first++;
        }
        if (first == pos.length) {
          throw new QuerySpecException(where + ": '" + v.asText() + "' has no word the text field indexes (only "
              + "English stop words or punctuation), so it cannot exclude anything");
        }
        if (op.equals("any")) {
          BooleanQuery.Builder b = new BooleanQuery.Builder();
          for (String t : pos) {
            if (!t.isEmpty()) {
              b.add(new TermQuery(new Term(FIELD, t)), BooleanClause.Occur.SHOULD);
            }
          }
          return b.build();
        }
        if (pos.length - first == 1) {
          return new TermQuery(new Term(FIELD, pos[first]));
        }
        PhraseQuery.Builder p = new PhraseQuery.Builder();
        for (int i = first; i < pos.length; i++) {
          if (!pos[i].isEmpty()) {
            p.add(new Term(FIELD, pos[i]), i - first);
          }
        }
        return p.build();
      }
      case "or":
      case "and": {
        if (!v.isArray() || v.size() == 0) {
          throw new QuerySpecException(where + ": \"" + op + "\" takes a non-empty list, got " + v);
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (JsonNode c : v) {
          b.add(query(c, where), op.equals("or") ? BooleanClause.Occur.SHOULD : BooleanClause.Occur.FILTER);
        }
        return b.build();
      }
      case "not": {
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        b.add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER);
        b.add(query(v, where), BooleanClause.Occur.MUST_NOT);
        return b.build();
      }
      default:
        throw new QuerySpecException(where + ": unknown text filter operator '" + op + "'");
    }
  }

  /** A collector that passes on only the documents not in {@code excluded} (global docids); null: {@code c}. */
  public static Collector excluding(Collector c, FixedBitSet excluded) {
    if (excluded == null) {
      return c;
    }
    return new Collector() {
      @Override
      public LeafCollector getLeafCollector(LeafReaderContext ctx) throws IOException {
        LeafCollector in = c.getLeafCollector(ctx);
        int base = ctx.docBase;
        return new LeafCollector() {
          @Override
          public void setScorer(Scorable scorer) throws IOException {
            in.setScorer(scorer); // the queue's minimum competitive score comes from kept documents only: exact
          }

          @Override
          public void collect(int doc) throws IOException {
            if (!excluded.get(base + doc)) {
              in.collect(doc);
            }
          }

          @Override
          public DocIdSetIterator competitiveIterator() throws IOException {
            return in.competitiveIterator();
          }
        };
      }

      @Override
      public ScoreMode scoreMode() {
        return c.scoreMode();
      }
    };
  }

  /** The documents of {@code docs} (global docids) not in {@code excluded} (null: all of them). */
  public static int[] kept(int[] docs, FixedBitSet excluded) {
    if (excluded == null) {
      return docs;
    }
    return java.util.Arrays.stream(docs).filter(d -> !excluded.get(d)).toArray();
  }

  /** The global docids of {@code reader} that {@code q} matches. */
  public static FixedBitSet matches(IndexReader reader, Query q) throws IOException {
    FixedBitSet bits = new FixedBitSet(Math.max(1, reader.maxDoc()));
    if (q instanceof MatchNoDocsQuery || reader.maxDoc() == 0) {
      return bits;
    }
    IndexSearcher s = new IndexSearcher(reader);
    s.setQueryCache(null);
    s.search(q, new SimpleCollector() {
      private int base;

      @Override
      protected void doSetNextReader(LeafReaderContext ctx) {
        base = ctx.docBase;
      }

      @Override
      public void collect(int doc) {
        bits.set(base + doc);
      }

      @Override
      public ScoreMode scoreMode() {
        return ScoreMode.COMPLETE_NO_SCORES;
      }
    });
    return bits;
  }
}
