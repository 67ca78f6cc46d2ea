package io.github.lsrlucene.index;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.github.lsrlucene.search.TextFilter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.DocumentStoredFieldVisitor;
import org.apache.lucene.index.CodecReader;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

/**
 * Builds the text sidecar of an impact index ({@code <index>/text}): a single-segment Lucene index whose document i
 * is the main index's document i (global docid), with the field {@value TextFilter#FIELD}: the document's stored text
 * (the {@code contents} of its stored {@code raw} JSON, else the raw text) analysed by {@link TextFilter#analyzer()},
 * with positions (phrases) and no norms or stored copy. What the strict filter of explicit exclusions reads; an index
 * built elsewhere (Pyserini's, with {@code -storeRaw}) gets one from its stored field just as well.
 */
public final class TextIndexer {
  public static final String FORMAT = "lsr-lucene-text-1";
  static final FieldType TYPE = new FieldType();
  private static final JsonFactory JSON = new JsonFactory();

  static {
    TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);
    TYPE.setTokenized(true);
    TYPE.setStored(false);
    TYPE.setOmitNorms(true);
    TYPE.freeze();
  }

  private TextIndexer() {}

  /** The text of a stored raw field: the {@code contents} string of a JSON object, else the raw text; null if none. */
  public static String contents(String raw) throws IOException {
    if (raw == null) {
      return null;
    }
    if (!raw.stripLeading().startsWith("{")) {
      return raw;
    }
    try (JsonParser p = JSON.createParser(raw)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return raw;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.getCurrentName();
        JsonToken t = p.nextToken();
        if (name.equals("contents") && t == JsonToken.VALUE_STRING) {
          return p.getText();
        }
        p.skipChildren();
      }
      return null;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      return raw;
    }
  }

  /** The stored raw field of each document in docid order, read sequentially (a codec's merge instance: each
   * compressed block of stored fields decompressed once, not once per document). */
  private static final class RawTexts {
    private final DirectoryReader reader;
    private final String field;
    private int leaf = -1;
    private int end;
    private int base;
    private StoredFields fields;

    RawTexts(DirectoryReader reader, String field) {
      this.reader = reader;
      this.field = field;
    }

    String get(int doc) throws IOException {
      while (doc >= end) {
        LeafReaderContext ctx = reader.leaves().get(++leaf);
        base = ctx.docBase;
        end = base + ctx.reader().maxDoc();
        fields = ctx.reader() instanceof CodecReader
            ? ((CodecReader) ctx.reader()).getFieldsReader().getMergeInstance() : ctx.reader().storedFields();
      }
      DocumentStoredFieldVisitor v = new DocumentStoredFieldVisitor(field);
      fields.document(doc - base, v);
      return v.getDocument().get(field);
    }
  }

  /**
   * Writes {@code <indexDir>/text} (replacing one there) from the main index's stored {@code rawField}; returns
   * {documents, documents with text}. An index that stores no text at all is an error naming what to do.
   */
  public static int[] build(String indexDir, String rawField) throws IOException {
    Path index = Paths.get(indexDir);
    Path out = index.resolve(TextFilter.DIR);
    Path tmp = Files.createTempDirectory(index, ".text.tmp-");
    int withText = 0;
    int docs;
    try (Directory mainDir = FSDirectory.open(index);
         DirectoryReader main = DirectoryReader.open(mainDir)) {
      String[] ids = DocIds.read(main, "id");
      docs = ids.length;
      RawTexts raws = new RawTexts(main, rawField);
      try (Directory dir = FSDirectory.open(tmp)) {
        IndexWriterConfig cfg = new IndexWriterConfig(TextFilter.analyzer())
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setMergePolicy(new LogDocMergePolicy())  // adjacent merges: docid order kept
            .setRAMBufferSizeMB(256)
            .setUseCompoundFile(false);
        try (IndexWriter w = new IndexWriter(dir, cfg)) {
          for (int d = 0; d < ids.length; d++) {
            Document doc = new Document();
            String id = ids[d] == null ? "" : ids[d];
            doc.add(new StoredField(TextFilter.ID_FIELD, id));
            doc.add(new BinaryDocValuesField(TextFilter.ID_FIELD, new BytesRef(id)));
            String text = ids[d] == null ? null : contents(raws.get(d));
            if (text != null && !text.isEmpty()) {
              doc.add(new Field(TextFilter.FIELD, text, TYPE));
              withText++;
            }
            w.addDocument(doc); // deleted main-index documents get an empty placeholder: docids stay aligned
          }
          if (withText == 0 && docs > 0) {
            throw new IllegalArgumentException(indexDir + ": the index stores no document text (no '" + rawField
                + "' field with contents), so the text field of explicit exclusions cannot be built; index vectors "
                + "that keep their \"contents\" (lsr-lucene encode does), or Anserini with -storeRaw");
          }
          w.forceMerge(1);
          Map<String, String> user = new HashMap<>();
          user.put("documents", Integer.toString(docs));
          user.put("with_text", Integer.toString(withText));
          user.put("analyzer", "EnglishAnalyzer");
          user.put("format", FORMAT);
          w.setLiveCommitData(user.entrySet());
          w.commit();
        }
      }
      PositionalIndexer.install(tmp, out);
    } catch (IOException | RuntimeException e) {
      PositionalIndexer.deleteTree(tmp);
      throw e;
    }
    return new int[] {docs, withText};
  }
}
