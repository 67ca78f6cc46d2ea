package io.github.lsrlucene.index;

import java.io.IOException;
import java.util.Set;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValuesType;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;

/** Reads the external document ids of an index (doc values, else stored field), shared by indexing and search. */
public final class DocIds {
  private DocIds() {}

  /** External ids by global Lucene docid (null for deleted documents). */
  public static String[] read(IndexReader r, String field) throws IOException {
    String[] out = new String[r.maxDoc()];
    for (LeafReaderContext ctx : r.leaves()) {
      LeafReader lr = ctx.reader();
      Bits live = lr.getLiveDocs();
      FieldInfo fi = lr.getFieldInfos().fieldInfo(field);
      if (fi == null) {
        if (lr.numDocs() > 0) {
          throw new IllegalArgumentException("index has no '" + field + "' field; is it an Anserini index?");
        }
        continue;
      }
      if (fi.getDocValuesType() == DocValuesType.BINARY) {
        BinaryDocValues dv = lr.getBinaryDocValues(field);
        for (int d = dv.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = dv.nextDoc()) {
          out[ctx.docBase + d] = dv.binaryValue().utf8ToString();
        }
      } else if (fi.getDocValuesType() == DocValuesType.SORTED) {
        SortedDocValues dv = lr.getSortedDocValues(field);
        for (int d = dv.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = dv.nextDoc()) {
          out[ctx.docBase + d] = dv.lookupOrd(dv.ordValue()).utf8ToString();
        }
      }
      StoredFields sf = null;
      Set<String> only = Set.of(field);
      for (int d = 0; d < lr.maxDoc(); d++) {
        if (out[ctx.docBase + d] == null && (live == null || live.get(d))) {
          if (sf == null) {
            sf = lr.storedFields();
          }
          String id = sf.document(d, only).get(field);
          if (id == null) {
            throw new IllegalArgumentException("document " + (ctx.docBase + d) + " has no '" + field + "' value");
          }
          out[ctx.docBase + d] = id;
        }
        if (live != null && !live.get(d)) {
          out[ctx.docBase + d] = null;
        }
      }
    }
    return out;
  }
}
