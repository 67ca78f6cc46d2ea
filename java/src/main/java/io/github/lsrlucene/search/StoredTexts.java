package io.github.lsrlucene.search;

import io.github.lsrlucene.index.TextIndexer;
import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.StoredFields;

/**
 * The stored texts of many documents in one call: what compose's absence rule reads of its candidates (a call per
 * document and the long JSON line of each crossing to Python cost more than the reading itself).
 */
public final class StoredTexts {
  private StoredTexts() {}

  /**
   * The text of each Lucene docid ({@link TextIndexer#contents} of its stored {@code field}: the {@code contents} of
   * a JSON line, else the raw text; null where none, or for a docid below 0), read in docid order with one reader.
   */
  public static String[] contents(IndexReader reader, int[] docs, String field) throws IOException {
    String[] out = new String[docs.length];
    Integer[] order = new Integer[docs.length];
    for (int i = 0; i < docs.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (x, y) -> Integer.compare(docs[x], docs[y]));
    StoredFields fields = reader.storedFields();
    Set<String> wanted = Set.of(field);
    for (int i : order) {
      int doc = docs[i];
      if (doc < 0) {
        continue;
      }
      if (doc >= reader.maxDoc()) {
        throw new IllegalArgumentException("no document with Lucene docid " + doc);
      }
      out[i] = TextIndexer.contents(fields.document(doc, wanted).get(field));
    }
    return out;
  }
}
