package io.github.lsrlucene.query;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.store.ChecksumIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.IOContext;

/**
 * The dense-impacts sidecar ({@code <index>/dense-impacts}): for each segment, the impacts of the field's most
 * frequent terms (document frequency at least a share of the segment's documents, largest impact below 256) as one
 * byte per document (0: absent), written by {@code DenseImpactsIndexer}, and (computed on loading) each term's
 * largest impact per {@link #BLOCK} of docids. Exact search bounds blocks of documents with these maxima and adds
 * such a term to the blocks that can compete with array loops instead of decoding its long postings list; the
 * postings stay the truth (the sidecar is checked against each segment's id, and is ignored when stale).
 */
public final class DenseImpacts {
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

  private final Map<String, byte[]>[] leaves; // per leaf ord: field + '\0' + term -> impacts by docid
  private final Map<String, byte[]>[] maxima; // per leaf ord: the same key -> largest impact per block of docids
  private final int[] maxDocs;
  /** Why the sidecar is not used (stale or unreadable), null when it is. */
  public final String problem;

  private DenseImpacts(Map<String, byte[]>[] leaves, Map<String, byte[]>[] maxima, int[] maxDocs, String problem) {
    this.leaves = leaves;
    this.maxima = maxima;
    this.maxDocs = maxDocs;
    this.problem = problem;
  }

  /** The sidecar of {@code index} for {@code main}'s segments; null when there is none. */
  @SuppressWarnings("unchecked")
  public static DenseImpacts open(Path index, DirectoryReader main) throws IOException {
    Path path = index.resolve(DIR);
    if (!Files.isDirectory(path)) {
      return null;
    }
    List<LeafReaderContext> ctxs = main.leaves();
    Map<String, byte[]>[] leaves = new Map[ctxs.size()];
    Map<String, byte[]>[] maxima = new Map[ctxs.size()];
    int[] maxDocs = new int[ctxs.size()];
    try (Directory dir = FSDirectory.open(path)) {
      for (LeafReaderContext ctx : ctxs) {
        if (!(ctx.reader() instanceof SegmentReader)) {
          return new DenseImpacts(null, null, null, "segment " + ctx.ord + " is not a plain segment");
        }
        SegmentReader seg = (SegmentReader) ctx.reader();
        String name = seg.getSegmentName() + "." + EXTENSION;
        if (!Arrays.asList(dir.listAll()).contains(name)) {
          return new DenseImpacts(null, null, null, "no " + name + " (the index changed since the sidecar was built)");
        }
        Map<String, byte[]> terms = new HashMap<>();
        Map<String, byte[]> blockMax = new HashMap<>();
        try (ChecksumIndexInput in = dir.openChecksumInput(name, IOContext.READONCE)) {
          CodecUtil.checkIndexHeader(in, CODEC, VERSION, VERSION, seg.getSegmentInfo().info.getId(), "");
          int maxDoc = in.readVInt();
          if (maxDoc != seg.maxDoc()) {
            return new DenseImpacts(null, null, null, name + " holds " + maxDoc + " documents, the segment " + seg.maxDoc());
          }
          int n = in.readVInt();
          for (int i = 0; i < n; i++) {
            String key = in.readString();
            byte[] b = new byte[maxDoc];
            in.readBytes(b, 0, maxDoc);
            terms.put(key, b);
            blockMax.put(key, blockMaxima(b));
          }
          CodecUtil.checkFooter(in);
        } catch (org.apache.lucene.index.CorruptIndexException e) {
          return new DenseImpacts(null, null, null, name + ": " + e.getMessage());
        }
        leaves[ctx.ord] = terms;
        maxima[ctx.ord] = blockMax;
        maxDocs[ctx.ord] = seg.maxDoc();
      }
    }
    return new DenseImpacts(leaves, maxima, maxDocs, null);
  }

  /** The largest impact of each {@link #BLOCK} of docids of a term's row (unsigned bytes). */
  private static byte[] blockMaxima(byte[] row) {
    byte[] out = new byte[(row.length + BLOCK - 1) / BLOCK];
    for (int b = 0; b < out.length; b++) {
      int max = 0;
      for (int d = b * BLOCK, end = Math.min(row.length, d + BLOCK); d < end; d++) {
        max = Math.max(max, row[d] & 0xFF);
      }
      out[b] = (byte) max;
    }
    return out;
  }

  /** The key of a term of a field in a sidecar file. */
  public static String key(String field, String term) {
    return field + '\u0000' + term;
  }

  /** Impacts of {@code term} by docid in leaf {@code ord} (maxDoc bytes, 0: absent); null when not dense there. */
  byte[] impacts(LeafReaderContext ctx, String field, String term) {
    if (problem != null || ctx.ord >= leaves.length || maxDocs[ctx.ord] != ctx.reader().maxDoc()) {
      return null;
    }
    return leaves[ctx.ord].get(key(field, term));
  }

  /** The largest impact of {@code term} per block of {@link #BLOCK} docids in leaf {@code ord}; null as above. */
  byte[] blockMaxima(LeafReaderContext ctx, String field, String term) {
    return impacts(ctx, field, term) == null ? null : maxima[ctx.ord].get(key(field, term));
  }

  /** Number of dense terms over all segments. */
  public int terms() {
    int n = 0;
    for (Map<String, byte[]> m : leaves == null ? new Map[0] : leaves) {
      n += m.size();
    }
    return n;
  }
}
