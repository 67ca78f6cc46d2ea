package io.github.lsrlucene.search;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One batch of query specs searched on several indexes of one collection (the shards one process holds), each
 * index's top k packed for the merge ({@link ShardHits}, which merges them into the collection's run): exact search
 * carries each spec's threshold from shard to shard, as one index carries its collector's queue across segments.
 */
public final class ShardSearcher {
  private ShardSearcher() {}

  /**
   * The batch {@code specsJsonl} (JSONL text, one spec a line) on every index of {@code shards}, top k each.
   * Spec i subtracts the collection's max impacts {@code boundTerms}/{@code boundValues} of its
   * {@code boundCounts[i]} entries, which follow spec i - 1's (none: each index's own). Exact search ({@code h} 1)
   * of several shards carries each spec's threshold across them ({@link #searchCarried}); the heap factor below 1
   * searches the shards side by side on {@code threads} threads (each shard's batch on one; one shard: on them all).
   */
  static ShardBatch search(SingleIndexSearcher[] shards, String specsJsonl, int k, int[] boundCounts,
                           String[] boundTerms, long[] boundValues, float h, int threads) throws IOException {
    RunWriter.checkArgs(threads, "batch");
    List<QuerySpec> specs = parseBatch(specsJsonl, shards); // once for all shards, checked against each
    List<Map<String, Long>> bounds = batchBounds(specs.size(), boundCounts, boundTerms, boundValues);
    if (shards.length > 1 && SingleIndexSearcher.checkHeapFactor(h) == 1f && specs.size() >= threads) {
      return searchCarried(shards, specs, bounds, k, threads);
    }
    SingleIndexSearcher.checkK(k);
    byte[][] packs = new byte[shards.length][];
    double[] seconds = new double[shards.length];
    runEach(shards.length, threads, s -> {
      long started = System.nanoTime();
      Hits[] hits = new Hits[specs.size()];
      runEach(hits.length, shards.length == 1 ? threads : 1,
          i -> hits[i] = shards[s].search(specs.get(i), k, bounds.get(i), h));
      packs[s] = ShardHits.pack(hits, shards[s].ids);
      seconds[s] = (System.nanoTime() - started) / 1e9;
    });
    return new ShardBatch(packs, seconds);
  }

  /** The specs of a batch (JSONL text, one spec a line), each checked against every index of {@code shards}. */
  private static List<QuerySpec> parseBatch(String specsJsonl, SingleIndexSearcher[] shards) {
    List<QuerySpec> specs = new ArrayList<>();
    for (String line : specsJsonl.split("\n")) {
      if (!line.isBlank()) {
        QuerySpec spec = QuerySpec.parse(line, "");
        for (SingleIndexSearcher shard : shards) {
          shard.checkSpec(spec);
        }
        specs.add(spec);
      }
    }
    return specs;
  }

  /** Each spec's collection max impacts ({@link #search}'s layout; null: none). */
  private static List<Map<String, Long>> batchBounds(int specs, int[] boundCounts, String[] boundTerms,
                                                     long[] boundValues) {
    if (boundCounts.length != specs || boundTerms.length != boundValues.length) {
      throw new IllegalArgumentException(specs + " specs, " + boundCounts.length + " bound counts, "
          + boundTerms.length + " bound terms and " + boundValues.length + " values");
    }
    List<Map<String, Long>> bounds = new ArrayList<>(specs);
    int at = 0;
    for (int count : boundCounts) {
      Map<String, Long> map = null;
      if (count > 0) {
        map = new HashMap<>(count * 2);
        for (int j = at; j < at + count; j++) {
          map.put(boundTerms[j], boundValues[j]);
        }
      }
      bounds.add(map);
      at += count;
    }
    return bounds;
  }

  /** The packed hits of one batch on several shards ({@link #search}), and each shard's seconds. */
  public static final class ShardBatch {
    private final byte[][] packs;
    public final double[] seconds;

    ShardBatch(byte[][] packs, double[] seconds) {
      this.packs = packs;
      this.seconds = seconds;
    }

    /** Shard {@code i}'s hits ({@link ShardHits} layout). */
    public byte[] pack(int i) {
      return packs[i];
    }
  }

  /**
   * Exact search of a batch on several shards with each spec's queue carried across them (a batch of at least as
   * many specs as threads: one spec searched shard after shard is slower than its shards side by side on idle threads,
   * so a smaller batch, a single query say, is searched side by side): each spec searched on one
   * thread (threads over the batch's specs), shard after shard, the largest first; once the shards searched return
   * k hits together, their k best exact scores start the next shard's queue ({@link TopKCollector#carry}), so it
   * skips what cannot enter the collection's top k, as one index skips across its segments: its k-th best F is a
   * floor (the collection's top k holds k documents of at least F; ties at F still compete), and a later shard
   * returns only its hits of at least F. Once every shard is searched, each returns only its hits of at least the
   * node's k-th best score (the earlier shards' lists cut too): at k=1,000 on 4 shards about half what they found.
   * The merged top k is the one of every shard's full top k.
   */
  private static ShardBatch searchCarried(SingleIndexSearcher[] shards, List<QuerySpec> specs,
                                          List<Map<String, Long>> bounds, int k, int threads) throws IOException {
    SingleIndexSearcher.checkK(k);
    Integer[] order = new Integer[shards.length]; // largest first (its k-th score is the highest floor), then by number
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> shards[a].reader.maxDoc() != shards[b].reader.maxDoc()
        ? Integer.compare(shards[b].reader.maxDoc(), shards[a].reader.maxDoc()) : Integer.compare(a, b));
    Hits[][] hits = new Hits[shards.length][specs.size()];
    AtomicLongArray nanos = new AtomicLongArray(shards.length);
    runEach(specs.size(), threads, q -> {
      QuerySpec spec = specs.get(q);
      boolean carries = !spec.reranks(); // a rerank's final scores are no floor
      double[] best = new double[0]; // the best k exact scores of the shards searched so far, descending
      for (int s : order) {
        long started = System.nanoTime();
        boolean full = carries && best.length == k;
        Hits found = shards[s].search(spec, k, bounds.get(q), 1f, full ? best : null);
        hits[s][q] = full ? atLeast(found, best[k - 1]) : found;
        best = bestScores(best, hits[s][q].scores, k);
        nanos.addAndGet(s, System.nanoTime() - started);
      }
      if (carries && best.length == k) { // the node's k-th best: a hit below it is not in the collection's top k
        for (int s : order) {
          hits[s][q] = atLeast(hits[s][q], best[k - 1]);
        }
      }
    });
    byte[][] packs = new byte[shards.length][];
    double[] seconds = new double[shards.length];
    for (int s = 0; s < shards.length; s++) {
      packs[s] = ShardHits.pack(hits[s], shards[s].ids);
      seconds[s] = nanos.get(s) / 1e9;
    }
    return new ShardBatch(packs, seconds);
  }

  /** A task of {@link #runEach}. */
  interface NumberedTask {
    void run(int i) throws IOException;
  }

  /**
   * Runs {@code task} for 0 .. n - 1 on {@code threads} daemon threads (one thread or one task: on this one), and
   * rethrows the first failure as the task threw it.
   */
  static void runEach(int n, int threads, NumberedTask task) throws IOException {
    if (threads == 1 || n < 2) {
      for (int i = 0; i < n; i++) {
        task.run(i);
      }
      return;
    }
    ExecutorService pool = Executors.newFixedThreadPool(
        Math.min(threads, n), r -> {
          Thread t = new Thread(r, "lsr-shard-search");
          t.setDaemon(true);
          return t;
        });
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        final int at = i;
        futures.add(pool.submit(() -> {
          try {
            task.run(at);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while searching a batch", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof UncheckedIOException) {
        throw ((UncheckedIOException) c).getCause();
      }
      if (c instanceof RuntimeException) {
        throw (RuntimeException) c;
      }
      throw new IOException(c);
    } finally {
      pool.shutdownNow();
    }
  }

  /** The hits of at least {@code floor} (best first: a prefix). */
  private static Hits atLeast(Hits hits, double floor) {
    int m = 0;
    while (m < hits.scores.length && hits.scores[m] >= floor) {
      m++;
    }
    return m == hits.scores.length ? hits
        : new Hits(Arrays.copyOf(hits.docs, m), Arrays.copyOf(hits.scores, m));
  }

  /** The best k of two descending score lists, descending. */
  private static double[] bestScores(double[] a, double[] b, int k) {
    double[] out = new double[Math.min(k, a.length + b.length)];
    int i = 0;
    int j = 0;
    for (int o = 0; o < out.length; o++) {
      out[o] = j >= b.length || (i < a.length && a[i] >= b[j]) ? a[i++] : b[j++];
    }
    return out;
  }
}
