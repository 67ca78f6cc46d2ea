package io.github.lsrlucene.index;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.github.lsrlucene.Json;
import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.payloads.PayloadHelper;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PayloadAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

/**
 * Builds the positional sidecar of an Anserini index: a single-segment Lucene index at
 * {@code <index>/positions} whose document i is the main index's document i, with a field
 * {@value #FIELD} of the document's tokens in order, each with a float payload (its per-position
 * weight). Anserini's IndexCollection cannot add such a field, so it lives beside the main index and
 * {@link io.github.lsrlucene.search.BatchSearcher} joins the two with a {@code ParallelLeafReader}.
 * The main index is force-merged to one segment first when it has several (docids must stay stable).
 */
public final class PositionalIndexer {
  /** Folder of the positional sidecar index inside the main index folder. */
  public static final String POSITIONS_DIR = "positions";
  public static final String FIELD = "positions";
  public static final String ID_FIELD = "positions_id";
  public static final String MAX_PAYLOAD_KEY = "max_payload";
  static final FieldType TYPE = new FieldType();

  static {
    TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS);
    TYPE.setTokenized(true);
    TYPE.setStored(false);
    TYPE.setOmitNorms(true);
    TYPE.freeze();
  }

  private PositionalIndexer() {}

  /** Token stream over given (token, weight) pairs: one position each, the weight as a float payload. */
  static final class WeightedTokenStream extends TokenStream {
    private final CharTermAttribute termAtt = addAttribute(CharTermAttribute.class);
    private final PayloadAttribute payAtt = addAttribute(PayloadAttribute.class);
    private final PositionIncrementAttribute posAtt = addAttribute(PositionIncrementAttribute.class);
    private final String[] tokens;
    private final float[] weights;
    private int i;

    WeightedTokenStream(String[] tokens, float[] weights) {
      this.tokens = tokens;
      this.weights = weights;
    }

    @Override
    public boolean incrementToken() {
      int skipped = 0;
      while (i < tokens.length && (tokens[i].isEmpty() || !(weights[i] > 0f))) { // not weighted positively: a gap, never matched
        i++;
        skipped++;
      }
      if (i >= tokens.length) {
        return false;
      }
      clearAttributes();
      termAtt.setEmpty().append(tokens[i]);
      payAtt.setPayload(new BytesRef(PayloadHelper.encodeFloat(weights[i])));
      posAtt.setPositionIncrement(1 + skipped);
      i++;
      return true;
    }

    @Override
    public void reset() throws IOException {
      super.reset();
      i = 0;
    }
  }

  /**
   * Writes {@code <indexDir>/positions} from a JSONL of {"id": ..., "tokens": [["tok", weight], ...]}.
   * Documents of the index missing from the file get an empty field. Returns
   * {documents, with tokens, unknown ids skipped}.
   */
  public static int[] build(String indexDir, String tokensJsonl) throws IOException {
    Path index = Paths.get(indexDir);
    Path in = Paths.get(tokensJsonl);
    if (!Files.exists(in)) {
      throw new NoSuchFileException(tokensJsonl + " (no such token file)");
    }
    String[] ids;
    try (Directory dir = FSDirectory.open(index)) {
      if (!DirectoryReader.indexExists(dir)) {
        throw new IllegalArgumentException(indexDir + " holds no Lucene index");
      }
      int segments;
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        segments = r.leaves().size();
      }
      if (segments > 1) {
        IndexWriterConfig cfg = new IndexWriterConfig().setOpenMode(IndexWriterConfig.OpenMode.APPEND)
            .setMergePolicy(new org.apache.lucene.index.LogByteSizeMergePolicy());  // adjacent: docid order kept
        try (IndexWriter w = new IndexWriter(dir, cfg)) {
          w.forceMerge(1);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(dir)) {
        ids = DocIds.read(r, "id");
      }
    }
    Map<String, Integer> docOf = new HashMap<>(ids.length * 2);
    for (int d = 0; d < ids.length; d++) {
      if (ids[d] != null) {
        docOf.put(ids[d], d);
      }
    }
    // first pass: where each document's token line starts (a byte offset per docid, not the line itself), so
    // the heap holds one batch of token lines, not the collection; the second pass reads them in docid order
    // (sequentially when the file is in index order, as files written with the vectors are)
    long[] offsets = new long[ids.length];
    int[] lineNos = new int[ids.length];
    java.util.Arrays.fill(offsets, -1L);
    int unknown = 0;
    try (Lines lines = new Lines(in)) {
      long pos = 0;
      int no = 0;
      String line;
      while ((line = lines.readAt(pos)) != null) {
        long start = pos;
        pos = lines.next();
        no++;
        if (line.isBlank()) {
          continue;
        }
        JsonNode node = parse(line, tokensJsonl + ":" + no);
        JsonNode idn = node.get("id");
        if (idn == null || !(idn.isTextual() || idn.isIntegralNumber())) {
          throw new QuerySpecException(tokensJsonl + ":" + no + ": missing \"id\"");
        }
        Integer d = docOf.get(idn.asText());
        if (d == null) {
          unknown++;
          continue;
        }
        if (offsets[d] >= 0) {
          throw new QuerySpecException(tokensJsonl + ":" + no + ": duplicate id '" + idn.asText() + "'");
        }
        offsets[d] = start;
        lineNos[d] = no;
      }
    }
    docOf = null;
    Path out = index.resolve(POSITIONS_DIR);
    Path tmp = Files.createTempDirectory(index, ".positions.tmp-");
    int withTokens = 0;
    float maxPayload = 0f;
    try (Lines lines = new Lines(in)) {
      try (Directory dir = FSDirectory.open(tmp)) {
        LogDocMergePolicy mp = new LogDocMergePolicy();
        IndexWriterConfig cfg = new IndexWriterConfig()
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setMergePolicy(mp)
            .setRAMBufferSizeMB(256)
            .setUseCompoundFile(false);
        try (IndexWriter w = new IndexWriter(dir, cfg)) {
          for (int d = 0; d < ids.length; d++) {
            Document doc = new Document();
            String id = ids[d] == null ? "" : ids[d];
            doc.add(new StoredField(ID_FIELD, id));
            doc.add(new BinaryDocValuesField(ID_FIELD, new BytesRef(id)));
            if (offsets[d] >= 0) {
              String where = tokensJsonl + ":" + lineNos[d];
              JsonNode toks = parse(lines.readAt(offsets[d]), where).get("tokens");
              if (toks == null || !toks.isArray()) {
                throw new QuerySpecException(where + ": \"tokens\" must be a list of [token, weight]");
              }
              String[] t = new String[toks.size()];
              float[] v = new float[toks.size()];
              for (int i = 0; i < t.length; i++) {
                JsonNode p = toks.get(i);
                if (!p.isArray() || p.size() != 2 || !p.get(0).isTextual() || !p.get(1).isNumber()) {
                  throw new QuerySpecException(where + ": token " + i + " must be [\"tok\", weight], got " + p);
                }
                t[i] = p.get(0).asText();
                v[i] = (float) p.get(1).asDouble();
                if (!Float.isFinite(v[i])) {
                  throw new QuerySpecException(where + ": token " + i + " has a non-finite weight");
                }
                maxPayload = Math.max(maxPayload, v[i]);
              }
              doc.add(new Field(FIELD, new WeightedTokenStream(t, v), TYPE));
              withTokens++;
            }
            w.addDocument(doc); // deleted main-index documents get an empty placeholder: docids stay aligned
          }
          w.forceMerge(1);
          Map<String, String> user = new HashMap<>();
          user.put(MAX_PAYLOAD_KEY, Float.toString(maxPayload));
          user.put("documents", Integer.toString(ids.length));
          user.put("format", "lsr-lucene-positions-1");
          w.setLiveCommitData(user.entrySet());
          w.commit();
        }
      }
      install(tmp, out);
    } catch (IOException | RuntimeException e) {
      deleteTree(tmp);
      throw e;
    }
    return new int[] {ids.length, withTokens, unknown};
  }

  /** Lines of a UTF-8 file read at byte offsets through a 64 KiB window (sequential reads need no seek; a random read costs one window). */
  private static final class Lines implements java.io.Closeable {
    private final java.nio.channels.FileChannel channel;
    private final java.nio.ByteBuffer window = java.nio.ByteBuffer.allocate(1 << 16);
    private long windowStart = -1;
    private int windowLength;
    private long next;

    Lines(Path file) throws IOException {
      channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ);
    }

    /** The line starting at byte {@code offset} (without its line end), or null at the end of the file. */
    String readAt(long offset) throws IOException {
      java.io.ByteArrayOutputStream longLine = null;
      long pos = offset;
      while (true) {
        if (pos < windowStart || pos >= windowStart + windowLength) {
          fill(pos);
          if (windowLength == 0) {  // end of file
            if (longLine == null) {
              if (pos == offset) {
                return null;
              }
              longLine = new java.io.ByteArrayOutputStream();
            }
            next = pos;
            return decode(longLine.toByteArray(), longLine.size());
          }
        }
        byte[] bytes = window.array();
        int from = (int) (pos - windowStart);
        int end = from;
        while (end < windowLength && bytes[end] != '\n') {
          end++;
        }
        if (end < windowLength) {
          next = windowStart + end + 1;
          if (longLine == null) {
            return decode(java.util.Arrays.copyOfRange(bytes, from, end), end - from);
          }
          longLine.write(bytes, from, end - from);
          return decode(longLine.toByteArray(), longLine.size());
        }
        if (longLine == null) {
          longLine = new java.io.ByteArrayOutputStream();
        }
        longLine.write(bytes, from, windowLength - from);
        pos = windowStart + windowLength;
      }
    }

    /** Offset of the line after the one {@link #readAt} returned last. */
    long next() {
      return next;
    }

    private static String decode(byte[] bytes, int length) {
      int n = length > 0 && bytes[length - 1] == '\r' ? length - 1 : length;
      return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }

    private void fill(long pos) throws IOException {
      window.clear();
      int read = 0;
      while (window.hasRemaining()) {
        int r = channel.read(window, pos + read);
        if (r < 0) {
          break;
        }
        read += r;
      }
      windowStart = pos;
      windowLength = read;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  private static JsonNode parse(String line, String where) {
    try {
      JsonNode n = Json.MAPPER.readTree(line);
      if (n == null || !n.isObject()) {
        throw new QuerySpecException(where + ": expected a JSON object");
      }
      return n;
    } catch (JsonProcessingException e) {
      throw new QuerySpecException(where + ": malformed JSON (" + e.getOriginalMessage() + ")");
    }
  }

  /** Puts a finished sidecar folder {@code tmp} in place at {@code out}, replacing one there. */
  static void install(Path tmp, Path out) throws IOException {
    if (Files.exists(out)) {
      deleteTree(out);
    }
    Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    Files.walkFileTree(p, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.delete(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
        Files.delete(dir);
        return FileVisitResult.CONTINUE;
      }
    });
  }
}
