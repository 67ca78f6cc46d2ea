package io.github.lsrlucene.query;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.store.BufferedChecksumIndexInput;
import org.apache.lucene.store.ChecksumIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.IOUtils;

/**
 * The dense-impacts sidecar ({@code <index>/dense-impacts}): for each segment, the impacts of the field's most
 * frequent terms (document frequency at least a share of the segment's documents, largest impact below 256) as one
 * byte per document (0: absent), written by {@code DenseImpactsIndexer}, and (computed on loading) each term's
 * largest impact per {@link #BLOCK} of docids. Exact search bounds blocks of documents with these maxima and adds
 * such a term to the blocks that can compete with array loops instead of decoding its long postings list; the
 * postings stay the truth (the sidecar is checked against each segment's id and checksum, and is ignored when stale).
 *
 * <p>The rows stay in the memory-mapped files ({@link MMapDirectory}), off the JVM heap, so that the heap does not
 * grow with the collection: a scorer copies, once per window it scores, the part of each row it sums through its own
 * clone of the file's input (under Java 22+ Lucene 9.9's MMapDirectory maps with ByteBuffers, for both layouts' index).
 * Only the block maxima (1/{@link #BLOCK} of the rows) and the term keys are kept on the heap. The system property
 * {@value #ON_HEAP_PROPERTY}{@code =true} loads the rows onto the heap instead (the former layout, kept for the
 * benchmark comparing the two, {@code scripts/bench/dense_heap.py}).
 */
public final class DenseImpacts implements Closeable {
  /** Folder of the sidecar inside the main index folder. */
  public static final String DIR = "dense-impacts";
  /** Codec name and version of a sidecar file ({@code <segment name>.dim}). */
  public static final String CODEC = "LsrDenseImpacts";
  public static final int VERSION = 1;
  public static final String EXTENSION = "dim";
  /** Docids per window of {@link DenseBlockMaxScorer}: the unit in which it skips and sums. */
  public static final int WINDOW = 4096;
  /** Docids per block of {@link #blockMaxima}: the unit of the bounds inside a window (a divisor of WINDOW). */
  public static final int BLOCK = 32;
  /** System property: "true" loads the rows onto the JVM heap instead of reading them from the mapped files. */
  public static final String ON_HEAP_PROPERTY = "lsr.denseImpacts.onHeap";

  /** Where a term's row of one segment lives: at an offset of the mapped file, or (on-heap layout) a byte array. */
  static final class Row {
    final long offset; // where the row's maxDoc bytes start in the segment's mapped file (see file), -1 on the heap
    final byte[] heap; // the row on the heap, null when mapped
    final byte[] maxima; // its largest impact per block of docids (always on the heap)

    Row(long offset, byte[] heap, byte[] maxima) {
      this.offset = offset;
      this.heap = heap;
      this.maxima = maxima;
    }
  }

  private final Map<String, Map<String, Row>>[] leaves; // per leaf ord: field -> term -> its row
  private final int[] maxDocs;
  private final Directory dir; // the mapped sidecar folder, open while rows are read from it (null on the heap)
  private final List<IndexInput> inputs; // the mapped files by leaf ord, closed with this
  /** Why the sidecar is not used (stale or unreadable), null when it is. */
  public final String problem;

  private DenseImpacts(Map<String, Map<String, Row>>[] leaves, int[] maxDocs, Directory dir, List<IndexInput> inputs,
                       String problem) {
    this.leaves = leaves;
    this.maxDocs = maxDocs;
    this.dir = dir;
    this.inputs = inputs;
    this.problem = problem;
  }

  private static DenseImpacts unusable(String problem) {
    return new DenseImpacts(null, null, null, List.of(), problem);
  }

  /** The sidecar of {@code index} for {@code main}'s segments (layout: {@link #ON_HEAP_PROPERTY}); null when none. */
  public static DenseImpacts open(Path index, DirectoryReader main) throws IOException {
    return open(index, main, Boolean.getBoolean(ON_HEAP_PROPERTY));
  }

  /**
   * The sidecar of {@code index} for {@code main}'s segments, its rows read from the mapped files, or loaded onto the
   * heap when {@code onHeap}; null when there is none. Every file is read once on opening (checksum, block maxima).
   */
  @SuppressWarnings("unchecked")
  public static DenseImpacts open(Path index, DirectoryReader main, boolean onHeap) throws IOException {
    Path path = index.resolve(DIR);
    if (!Files.isDirectory(path)) {
      return null;
    }
    List<LeafReaderContext> ctxs = main.leaves();
    Map<String, Map<String, Row>>[] leaves = new Map[ctxs.size()];
    int[] maxDocs = new int[ctxs.size()];
    Directory dir = new MMapDirectory(path);
    List<IndexInput> inputs = new ArrayList<>();
    boolean ok = false;
    try {
      List<String> files = Arrays.asList(dir.listAll());
      for (LeafReaderContext ctx : ctxs) {
        if (!(ctx.reader() instanceof SegmentReader)) {
          return unusable("segment " + ctx.ord + " is not a plain segment");
        }
        SegmentReader seg = (SegmentReader) ctx.reader();
        String name = seg.getSegmentName() + "." + EXTENSION;
        if (!files.contains(name)) {
          return unusable("no " + name + " (the index changed since the sidecar was built)");
        }
        IndexInput file = dir.openInput(name, IOContext.READ);
        inputs.add(file);
        Map<String, Map<String, Row>> terms = new HashMap<>();
        // one sequential pass through a checksummed clone: header, keys, block maxima, footer
        try (ChecksumIndexInput in = new BufferedChecksumIndexInput(file.clone())) {
          CodecUtil.checkIndexHeader(in, CODEC, VERSION, VERSION, seg.getSegmentInfo().info.getId(), "");
          int maxDoc = in.readVInt();
          if (maxDoc != seg.maxDoc()) {
            return unusable(name + " holds " + maxDoc + " documents, the segment " + seg.maxDoc());
          }
          int n = in.readVInt();
          byte[] chunk = new byte[Math.min(maxDoc, WINDOW * 16)];
          for (int i = 0; i < n; i++) {
            String key = in.readString();
            long at = in.getFilePointer();
            byte[] heap = onHeap ? new byte[maxDoc] : null;
            byte[] maxima = new byte[(maxDoc + BLOCK - 1) / BLOCK];
            for (int from = 0; from < maxDoc; from += chunk.length) { // chunk.length is a multiple of BLOCK
              int len = Math.min(chunk.length, maxDoc - from);
              in.readBytes(chunk, 0, len);
              blockMaxima(chunk, len, maxima, from / BLOCK);
              if (heap != null) {
                System.arraycopy(chunk, 0, heap, from, len);
              }
            }
            int split = key.indexOf('\u0000'); // the key(field, term) the indexer wrote
            if (split < 0) {
              return unusable(name + ": a row key without its field");
            }
            terms.computeIfAbsent(key.substring(0, split), f -> new HashMap<>())
                .put(key.substring(split + 1), new Row(onHeap ? -1 : at, heap, maxima));
          }
          CodecUtil.checkFooter(in);
        } catch (CorruptIndexException | EOFException e) {
          return unusable(name + ": " + e.getMessage());
        }
        leaves[ctx.ord] = terms;
        maxDocs[ctx.ord] = seg.maxDoc();
      }
      ok = true;
    } finally {
      if (!ok || onHeap) {
        IOUtils.close(inputs);
        dir.close();
      }
    }
    return onHeap ? new DenseImpacts(leaves, maxDocs, null, List.of(), null)
        : new DenseImpacts(leaves, maxDocs, dir, inputs, null);
  }

  /** Writes the largest impact per {@link #BLOCK} of {@code bytes[0, len)} into {@code out}, from block {@code at}. */
  private static void blockMaxima(byte[] bytes, int len, byte[] out, int at) {
    for (int b = 0; b * BLOCK < len; b++) {
      int max = 0;
      for (int d = b * BLOCK, end = Math.min(len, d + BLOCK); d < end; d++) {
        max = Math.max(max, bytes[d] & 0xFF);
      }
      out[at + b] = (byte) max;
    }
  }

  /** The key of a term of a field in a sidecar file. */
  public static String key(String field, String term) {
    return field + '\u0000' + term;
  }

  /** The row of {@code term} in leaf {@code ctx} (maxDoc impacts, 0: absent); null when it is not dense there. */
  Row row(LeafReaderContext ctx, String field, String term) {
    if (problem != null || ctx.ord >= leaves.length || maxDocs[ctx.ord] != ctx.reader().maxDoc()) {
      return null;
    }
    Map<String, Row> rows = leaves[ctx.ord].get(field);
    return rows == null ? null : rows.get(term);
  }

  /**
   * A clone of leaf {@code ctx}'s mapped file (its own position: one per scorer, which reads a row's bytes at
   * {@link Row#offset}); null on the heap.
   */
  IndexInput file(LeafReaderContext ctx) {
    return dir == null ? null : inputs.get(ctx.ord).clone();
  }

  /** Whether the rows are read from the mapped files (false: loaded onto the heap). */
  public boolean mapped() {
    return dir != null;
  }

  /** Number of dense terms over all segments. */
  public int terms() {
    int n = 0;
    for (Map<String, Map<String, Row>> leaf : leaves == null ? List.<Map<String, Map<String, Row>>>of()
        : Arrays.asList(leaves)) {
      for (Map<String, Row> rows : leaf.values()) {
        n += rows.size();
      }
    }
    return n;
  }

  /** Unmaps the files (a scorer must not read a row afterwards). */
  @Override
  public void close() throws IOException {
    try {
      IOUtils.close(inputs);
    } finally {
      if (dir != null) {
        dir.close();
      }
    }
  }
}
