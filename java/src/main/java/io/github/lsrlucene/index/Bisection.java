package io.github.lsrlucene.index;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Recursive graph bisection (BP) of a document-term graph: a docid order with small posting-list gaps.
 *
 * <p>Dhulipala et al. (KDD 2016) with the practical choices of Mackenzie et al. (ECIR 2019) and PISA's
 * {@code reorder-docids --bp}: a partition's documents, in input (rank) order, are split into a left
 * and a right half; for a fixed number of iterations every document's move gain is computed from the
 * log-gap cost estimate {@code deg*(log2 n - log2(deg + 1))} of each of its terms in each half, both
 * halves are sorted by decreasing gain (ties by docid) and their i-th documents swapped while the sum
 * of their gains is positive; then both halves are bisected in turn, to a given depth, and each leaf
 * keeps the input order. A term held by fewer than two documents of a partition never changes a gap
 * there and counts for nothing. Term degrees are updated by the swaps rather than recounted, as in
 * Lucene's {@code BPIndexReorderer}; halves are processed in parallel, and so are the gains of a large
 * partition. Deterministic: the result does not depend on the number of threads.
 *
 * <p>Input: the files {@link Reorderer#exportPostings} writes ({@code <prefix>.offsets}, int64 term
 * starts; {@code <prefix>.docs}, int32 docids ascending per term), optionally a rank file (int32 per
 * document: its position in the input order). Output: int32 {@code newToOld}, little-endian.
 */
public final class Bisection {
  private static final int PARALLEL_DOCS = 1 << 14; // partitions and gain chunks worth a task of their own

  private final int numDocs;
  private final int[] docStart; // forward index: document d's live terms are terms[docStart[d] .. docStart[d + 1])
  private final int[] terms;
  private final int numTerms;
  private final int[] rank;
  private final int[] docOfRank;
  private final int depth;
  private final int iterations;
  private final double[] h; // h(x) = g(x) - g(x - 1), g(x) = x log2(x + 1): the cost change of one more document
  private final double[] log2;
  private final ConcurrentLinkedQueue<Work> spare = new ConcurrentLinkedQueue<>();
  private final AtomicLong done = new AtomicLong();

  /**
   * The per-partition scratch arrays (vocabulary-sized), taken from a pool of spares: degrees are zero
   * between uses; move gains are set for every term of a partition before they are read.
   */
  private final class Work {
    final int[] left = new int[numTerms];
    final int[] right = new int[numTerms];
    final float[] leftToRight = new float[numTerms];
    final float[] rightToLeft = new float[numTerms];
    int[] touched = new int[1024];
  }

  private Bisection(int numDocs, int numTerms, int[] docStart, int[] terms, int[] rank, int depth, int iterations) {
    this.numDocs = numDocs;
    this.numTerms = numTerms;
    this.docStart = docStart;
    this.terms = terms;
    this.rank = rank;
    this.docOfRank = new int[numDocs];
    for (int d = 0; d < numDocs; d++) {
      docOfRank[rank[d]] = d;
    }
    this.depth = depth;
    this.iterations = iterations;
    this.h = new double[numDocs + 2];
    this.log2 = new double[numDocs + 1];
    for (int x = 1; x < h.length; x++) {
      h[x] = x * log2(x + 1) - (x - 1) * log2(x);
    }
    for (int x = 1; x < log2.length; x++) {
      log2[x] = log2(x);
    }
  }

  private static double log2(double x) {
    return Math.log(x) / Math.log(2);
  }

  /** The forward index of the live terms (held by two documents or more) of a term-major graph. */
  static Bisection fromTermMajor(int numDocs, long[] offsets, IntBuffer docs, int[] rank, int depth,
      int iterations) {
    int numTerms = offsets.length - 1;
    int[] start = new int[numDocs + 1];
    for (int t = 0; t < numTerms; t++) {
      if (offsets[t + 1] - offsets[t] >= 2) {
        for (long p = offsets[t]; p < offsets[t + 1]; p++) {
          start[docs.get((int) p) + 1]++;
        }
      }
    }
    for (int d = 0; d < numDocs; d++) {
      if ((long) start[d] + start[d + 1] > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("more than 2^31 postings: too many for one bisection");
      }
      start[d + 1] += start[d];
    }
    int[] terms = new int[start[numDocs]];
    int[] next = Arrays.copyOf(start, numDocs);
    for (int t = 0; t < numTerms; t++) {
      if (offsets[t + 1] - offsets[t] >= 2) {
        for (long p = offsets[t]; p < offsets[t + 1]; p++) {
          terms[next[docs.get((int) p)]++] = t; // ascending term ids within a document
        }
      }
    }
    if (rank == null) {
      rank = new int[numDocs];
      for (int d = 0; d < numDocs; d++) {
        rank[d] = d;
      }
    }
    return new Bisection(numDocs, numTerms, start, terms, rank, depth, iterations);
  }

  /** The BP order: {@code newToOld[i]} is the old docid of new document i. */
  int[] order(int threads) {
    int[] order = new int[numDocs];
    for (int d = 0; d < numDocs; d++) {
      order[d] = d;
    }
    ForkJoinPool pool = new ForkJoinPool(Math.max(1, threads));
    try {
      pool.invoke(new Partition(order, 0, numDocs, 0));
    } finally {
      pool.shutdown();
    }
    return order;
  }

  /** Sorts {@code order[from, to)} by rank (input order). */
  private void sortByRank(int[] order, int from, int to) {
    for (int i = from; i < to; i++) {
      order[i] = rank[order[i]];
    }
    Arrays.sort(order, from, to);
    for (int i = from; i < to; i++) {
      order[i] = docOfRank[order[i]];
    }
  }

  /** One partition {@code order[from, to)} at a level: split in two, improved by swaps, each half recursed. */
  private final class Partition extends RecursiveAction {
    private final int[] order;
    private final int from;
    private final int to;
    private final int level;

    Partition(int[] order, int from, int to, int level) {
      this.order = order;
      this.from = from;
      this.to = to;
      this.level = level;
    }

    @Override
    protected void compute() {
      sortByRank(order, from, to);
      if (level >= depth || to - from < 2) {
        done.addAndGet((long) (to - from) * (depth - level));
        return;
      }
      int mid = from + (to - from) / 2;
      Work work = spare.poll();
      if (work == null) {
        work = new Work();
      }
      try {
        bisect(work, mid);
      } finally {
        spare.add(work);
      }
      done.addAndGet(to - from);
      Partition left = new Partition(order, from, mid, level + 1);
      Partition right = new Partition(order, mid, to, level + 1);
      if (to - from >= PARALLEL_DOCS) {
        ForkJoinTask.invokeAll(left, right);
      } else {
        left.compute();
        right.compute();
      }
    }

    private void bisect(Work w, int mid) {
      int touched = 0;
      for (int i = from; i < to; i++) {
        int[] degree = i < mid ? w.left : w.right;
        int d = order[i];
        for (int p = docStart[d]; p < docStart[d + 1]; p++) {
          int t = terms[p];
          if (w.left[t] == 0 && w.right[t] == 0) {
            if (touched == w.touched.length) {
              w.touched = Arrays.copyOf(w.touched, 2 * touched);
            }
            w.touched[touched++] = t;
          }
          degree[t]++;
        }
      }
      int nLeft = mid - from;
      int nRight = to - mid;
      double logRatio = log2[nLeft] - log2[nRight];
      int pairs = Math.min(nLeft, nRight);
      long[] keys = new long[to - from];
      for (int it = 0; it < iterations; it++) {
        for (int j = 0; j < touched; j++) {
          int t = w.touched[j];
          int dl = w.left[t];
          int dr = w.right[t];
          boolean live = dl + dr >= 2;
          w.leftToRight[t] = live ? (float) (logRatio - h[dl] + h[dr + 1]) : 0f;
          w.rightToLeft[t] = live ? (float) (-logRatio - h[dr] + h[dl + 1]) : 0f;
        }
        gains(w, mid, keys);
        sortHalves(keys, nLeft);
        int swaps = 0;
        while (swaps < pairs && gain(keys[swaps]) + gain(keys[nLeft + swaps]) > 0) {
          swaps++;
        }
        if (swaps == 0) {
          break;
        }
        for (int i = 0; i < swaps; i++) {
          int l = (int) keys[i];
          int r = (int) keys[nLeft + i];
          move(l, w.left, w.right);
          move(r, w.right, w.left);
        }
        for (int i = 0; i < nLeft; i++) {
          order[from + i] = (int) keys[i];
        }
        for (int i = 0; i < nRight; i++) {
          order[mid + i] = (int) keys[nLeft + i];
        }
        for (int i = 0; i < swaps; i++) {
          int l = order[from + i];
          order[from + i] = order[mid + i];
          order[mid + i] = l;
        }
      }
      for (int j = 0; j < touched; j++) {
        int t = w.touched[j];
        w.left[t] = 0;
        w.right[t] = 0;
      }
    }

    private void move(int doc, int[] fromDegree, int[] toDegree) {
      for (int p = docStart[doc]; p < docStart[doc + 1]; p++) {
        fromDegree[terms[p]]--;
        toDegree[terms[p]]++;
      }
    }

    /** keys[i] = (gain of order[from + i], descending) << 32 | docid, for both halves. */
    private void gains(Work w, int mid, long[] keys) {
      int n = to - from;
      if (n < 2 * PARALLEL_DOCS) {
        gainRange(w, mid, keys, 0, n);
        return;
      }
      List<RecursiveAction> chunks = new ArrayList<>();
      for (int s = 0; s < n; s += PARALLEL_DOCS) {
        int a = s;
        int b = Math.min(n, s + PARALLEL_DOCS);
        chunks.add(new RecursiveAction() {
          @Override
          protected void compute() {
            gainRange(w, mid, keys, a, b);
          }
        });
      }
      ForkJoinTask.invokeAll(chunks);
    }

    private void gainRange(Work w, int mid, long[] keys, int a, int b) {
      for (int i = a; i < b; i++) {
        int d = order[from + i];
        float[] table = from + i < mid ? w.leftToRight : w.rightToLeft;
        double g = 0;
        for (int p = docStart[d]; p < docStart[d + 1]; p++) {
          g += table[terms[p]];
        }
        keys[i] = key((float) g, d);
      }
    }

    private void sortHalves(long[] keys, int nLeft) {
      if (keys.length >= 2 * PARALLEL_DOCS) {
        ForkJoinTask.invokeAll(new RecursiveAction() {
          @Override
          protected void compute() {
            Arrays.sort(keys, 0, nLeft);
          }
        }, new RecursiveAction() {
          @Override
          protected void compute() {
            Arrays.sort(keys, nLeft, keys.length);
          }
        });
      } else {
        Arrays.sort(keys, 0, nLeft);
        Arrays.sort(keys, nLeft, keys.length);
      }
    }
  }

  /** A sort key ordering by decreasing gain, then increasing docid. */
  static long key(float gain, int doc) {
    int bits = Float.floatToIntBits(gain == 0f ? 0f : gain); // -0 sorts as 0
    int ascending = bits ^ ((bits >> 31) & 0x7fffffff);
    return ((long) ~ascending << 32) | (doc & 0xffffffffL);
  }

  static float gain(long key) {
    int ascending = ~(int) (key >> 32);
    return Float.intBitsToFloat(ascending ^ ((ascending >> 31) & 0x7fffffff));
  }

  private static IntBuffer mapInts(Path path) throws IOException {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      if (ch.size() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(path + ": more than 2 GB of int32; too many for one bisection");
      }
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
    }
  }

  private static long[] readLongs(Path path) throws IOException {
    LongBuffer buf = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
    long[] out = new long[buf.remaining()];
    buf.get(out);
    return out;
  }

  private static int[] readInts(Path path) throws IOException {
    IntBuffer buf = mapInts(path);
    int[] out = new int[buf.remaining()];
    buf.get(out);
    return out;
  }

  /**
   * The BP order of a graph exported by {@link Reorderer#exportPostings}, written to {@code output}.
   * Prints {@code progress DONE TOTAL} lines (document-levels) to {@code progress} while it works.
   */
  public static void run(String prefix, int numDocs, String rankFile, int depth, int iterations, int threads,
      String output, PrintStream progress) throws IOException, InterruptedException {
    long[] offsets = readLongs(Paths.get(prefix + ".offsets"));
    IntBuffer docs = mapInts(Paths.get(prefix + ".docs"));
    if (offsets.length == 0 || offsets[offsets.length - 1] != docs.remaining()) {
      throw new IllegalArgumentException(prefix + ": offsets and docs disagree");
    }
    int[] rank = rankFile == null ? null : readInts(Paths.get(rankFile));
    if (rank != null && rank.length != numDocs) {
      throw new IllegalArgumentException(rankFile + ": " + rank.length + " ranks for " + numDocs + " documents");
    }
    Bisection bp = fromTermMajor(numDocs, offsets, docs, rank, depth, iterations);
    long total = (long) numDocs * depth;
    Thread reporter = new Thread(() -> {
      try {
        while (true) {
          progress.println("progress " + bp.done.get() + " " + total);
          progress.flush();
          Thread.sleep(500);
        }
      } catch (InterruptedException e) {
        // finished
      }
    });
    reporter.setDaemon(true);
    reporter.start();
    int[] order = bp.order(threads);
    reporter.interrupt();
    reporter.join();
    ByteBuffer out = ByteBuffer.allocate(4 * numDocs).order(ByteOrder.LITTLE_ENDIAN);
    out.asIntBuffer().put(order);
    Path tmp = Paths.get(output + ".part");
    Files.write(tmp, out.array());
    Files.move(tmp, Paths.get(output), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    progress.println("progress " + total + " " + total);
    progress.flush();
  }

  /** {@code Bisection PREFIX NUM_DOCS RANK_FILE|- DEPTH ITERATIONS THREADS OUTPUT}. */
  public static void main(String[] args) throws Exception {
    if (args.length != 7) {
      System.err.println("usage: Bisection PREFIX NUM_DOCS RANK_FILE|- DEPTH ITERATIONS THREADS OUTPUT");
      System.exit(2);
    }
    run(args[0], Integer.parseInt(args[1]), "-".equals(args[2]) ? null : args[2], Integer.parseInt(args[3]),
        Integer.parseInt(args[4]), Integer.parseInt(args[5]), args[6], System.out);
  }
}
