package io.github.lsrlucene.search;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The hits of a batch of queries on one shard of a collection, packed into one byte array that crosses processes
 * (a Ray object, a Python {@code bytes}) in one copy, and their merge into the run one index of the collection
 * writes. Layout, little-endian: int32 q; int32 count[q]; float64 score[n]; int32 idLength[n]; the n external ids
 * (UTF-8) back to back; n = &Sigma; count. Each query's hits come best first: exact score descending, ties by
 * external id in UTF-8 byte order, the order of {@link SingleIndexSearcher} and {@link RunWriter} on one index.
 */
public final class ShardHits {
  final int queries;
  final int[] start; // query i's hits are [start[i], start[i + 1])
  final double[] scores;
  final int[] idStart; // hit j's id is bytes[idStart[j], idStart[j + 1])
  final byte[] bytes;

  private ShardHits(byte[] pack) {
    ByteBuffer b = ByteBuffer.wrap(pack).order(ByteOrder.LITTLE_ENDIAN);
    queries = b.getInt(0);
    start = new int[queries + 1];
    for (int i = 0; i < queries; i++) {
      start[i + 1] = start[i] + b.getInt(4 + 4 * i);
    }
    int n = start[queries];
    int at = 4 + 4 * queries;
    scores = new double[n];
    b.position(at);
    b.slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(scores);
    at += 8 * n;
    idStart = new int[n + 1];
    idStart[0] = at + 4 * n;
    for (int j = 0; j < n; j++) {
      idStart[j + 1] = idStart[j] + b.getInt(at + 4 * j);
    }
    if (idStart[n] != pack.length) {
      throw new IllegalArgumentException("a shard's hits: " + pack.length + " bytes where the layout needs "
          + idStart[n]);
    }
    bytes = pack;
  }

  /** Packs every query's hits (Lucene docids of an index with external ids {@code ids}) as laid out above. */
  static byte[] pack(Hits[] hits, ExternalIds ids) {
    int n = 0;
    int idBytes = 0;
    for (Hits h : hits) {
      n += h.docs.length;
      for (int d : h.docs) {
        idBytes += ids.idBytes[d].length;
      }
    }
    ByteBuffer b = ByteBuffer.allocate(4 + 4 * hits.length + 12 * n + idBytes).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(hits.length);
    for (Hits h : hits) {
      b.putInt(h.docs.length);
    }
    for (Hits h : hits) {
      for (double s : h.scores) {
        b.putDouble(s);
      }
    }
    for (Hits h : hits) {
      for (int d : h.docs) {
        b.putInt(ids.idBytes[d].length);
      }
    }
    for (Hits h : hits) {
      for (int d : h.docs) {
        b.put(ids.idBytes[d]);
      }
    }
    return b.array();
  }

  /** Whether hit {@code a} of this shard ranks before hit {@code b} of {@code other}: score, then id bytes. */
  private boolean before(int a, ShardHits other, int b) {
    int c = Double.compare(other.scores[b], scores[a]);
    if (c != 0) {
      return c < 0;
    }
    return Arrays.compareUnsigned(bytes, idStart[a], idStart[a + 1], other.bytes, other.idStart[b],
        other.idStart[b + 1]) < 0;
  }

  /**
   * Writes the run of query batches from every shard's hits, merged to each query's top k, in the order the batches
   * are given: the lines {@link RunWriter} writes for one index of the collection.
   */
  public static final class RunMerger implements Closeable {
    private final OutputStream out;
    private final byte[] tag;
    private final List<ShardHits> shards = new ArrayList<>();
    private final RunBuffer buf = new RunBuffer(1 << 16);

    /** Writes (creates or truncates) the run file {@code runPath}, each line ending in run tag {@code tag}. */
    public RunMerger(String runPath, String tag) throws IOException {
      RunWriter.checkArgs(1, tag);
      this.tag = tag.getBytes(StandardCharsets.UTF_8);
      out = new BufferedOutputStream(Files.newOutputStream(Paths.get(runPath)), 1 << 20);
    }

    /** One shard's hits of the batch to merge next (every shard's, in any order, then {@link #write}). */
    public void add(byte[] pack) {
      shards.add(new ShardHits(pack));
    }

    /**
     * Merges the added shards' hits of each query of {@code qids} (the batch, in order) to its top {@code k} and
     * writes their run lines; returns the number of hits of each query. The added hits are then dropped.
     */
    public int[] write(String[] qids, int k) throws IOException {
      for (ShardHits s : shards) {
        if (s.queries != qids.length) {
          throw new IllegalArgumentException("a shard answered " + s.queries + " queries of a batch of "
              + qids.length);
        }
      }
      int m = shards.size();
      int[] at = new int[m];
      int[] counts = new int[qids.length];
      for (int q = 0; q < qids.length; q++) {
        byte[] qid = qids[q].getBytes(StandardCharsets.UTF_8);
        for (int s = 0; s < m; s++) {
          at[s] = shards.get(s).start[q];
        }
        int rank = 0;
        while (rank < k) {
          int best = -1;
          for (int s = 0; s < m; s++) {
            ShardHits h = shards.get(s);
            if (at[s] < h.start[q + 1] && (best < 0 || h.before(at[s], shards.get(best), at[best]))) {
              best = s;
            }
          }
          if (best < 0) {
            break;
          }
          ShardHits h = shards.get(best);
          int j = at[best]++;
          RunWriter.putLine(buf, qid, h.bytes, h.idStart[j], h.idStart[j + 1] - h.idStart[j], ++rank, h.scores[j],
              tag);
        }
        counts[q] = rank;
        if (buf.length >= 1 << 20) {
          flush();
        }
      }
      flush();
      shards.clear();
      return counts;
    }

    private void flush() throws IOException {
      out.write(buf.bytes, 0, buf.length);
      buf.length = 0;
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
