package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes TREC run lines of {@link SingleIndexSearcher} hits; a batch of specs is searched on a fixed
 * thread pool, a bounded number of queries ahead, and written in input order. Lines are byte for byte
 * what Python's {@code lsr_lucene.io.runs} writes for the same hits ({@link RunBuffer#putScore}).
 */
public final class RunWriter {
  private static final byte[] Q0 = " Q0 ".getBytes(StandardCharsets.UTF_8);

  private final SingleIndexSearcher searcher;
  private final ExternalIds ids;

  RunWriter(SingleIndexSearcher searcher) {
    this.searcher = searcher;
    this.ids = searcher.ids;
  }

  /** Checks the arguments of a batch run (before any query is read). */
  static void checkArgs(int threads, String tag) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be >= 1, got " + threads);
    }
    if (tag == null || tag.isEmpty() || tag.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException("run tag must be a non-empty word, got '" + tag + "'");
    }
  }

  /**
   * Searches {@code specs} with {@code threads} threads and writes their TREC run to {@code runPath}
   * in input order (plain queries with heap factor {@code heapFactor}); returns the number of queries.
   */
  int write(List<QuerySpec> specs, String runPath, int k, int threads, String tag, float heapFactor)
      throws IOException {
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "lsr-search-" + threadNo.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    try (java.io.OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(Paths.get(runPath)), 1 << 20)) {
      ArrayDeque<Future<RunBuffer>> pending = new ArrayDeque<>();
      ArrayDeque<QuerySpec> pendingSpecs = new ArrayDeque<>();
      int window = Math.max(4, threads * 8);
      for (QuerySpec spec : specs) {
        pending.add(pool.submit(() -> {
          RunBuffer buf = new RunBuffer(Math.min(k, ids.ids.length) * (spec.qid.length() + tag.length() + ids.maxIdLength + 32));
          format(spec.qid, searcher.search(spec, k, null, heapFactor), tag, buf);
          return buf;
        }));
        pendingSpecs.add(spec);
        if (pending.size() >= window) {
          RunBuffer b = take(pending.poll(), pendingSpecs.poll());
          out.write(b.bytes, 0, b.length);
        }
      }
      while (!pending.isEmpty()) {
        RunBuffer b = take(pending.poll(), pendingSpecs.poll());
        out.write(b.bytes, 0, b.length);
      }
    } finally {
      pool.shutdownNow();
    }
    return specs.size();
  }

  private static RunBuffer take(Future<RunBuffer> f, QuerySpec spec) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while searching " + spec.label(), e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof QuerySpecException) {
        throw (QuerySpecException) c;
      }
      if (c instanceof IOException || c instanceof UncheckedIOException) {
        throw new IOException(spec.label() + ": " + c, c);
      }
      throw new IllegalStateException(spec.label() + ": search failed: " + c, c);
    }
  }

  private void format(String qid, Hits hits, String tag, RunBuffer buf) {
    byte[] q = qid.getBytes(StandardCharsets.UTF_8);
    byte[] t = tag.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < hits.docs.length; i++) {
      putLine(buf, q, ids.idBytes[hits.docs[i]], i + 1, hits.scores[i], t);
    }
  }

  /** One run line: {@code qid Q0 docid rank score tag}. */
  private static void putLine(RunBuffer buf, byte[] qid, byte[] docid, int rank, double score, byte[] tag) {
    putLine(buf, qid, docid, 0, docid.length, rank, score, tag);
  }

  /** As above, the docid the {@code length} bytes of {@code docid} from {@code offset}. */
  static void putLine(RunBuffer buf, byte[] qid, byte[] docid, int offset, int length, int rank, double score,
                      byte[] tag) {
    buf.put(qid);
    buf.put(Q0);
    buf.put(docid, offset, length);
    buf.put((byte) ' ');
    buf.putLong(rank);
    buf.put((byte) ' ');
    buf.putScore(score);
    buf.put((byte) ' ');
    buf.put(tag);
    buf.put((byte) '\n');
  }

  /**
   * Run lines of hits given in run order, formatted as the searcher writes them (the test that Java and Python
   * write the same bytes calls this).
   */
  public static String formatLines(String qid, String[] docids, double[] scores, String tag) {
    if (docids.length != scores.length) {
      throw new IllegalArgumentException(docids.length + " docids but " + scores.length + " scores");
    }
    RunBuffer buf = new RunBuffer(64);
    byte[] q = qid.getBytes(StandardCharsets.UTF_8);
    byte[] t = tag.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < docids.length; i++) {
      putLine(buf, q, docids[i].getBytes(StandardCharsets.UTF_8), i + 1, scores[i], t);
    }
    return new String(buf.bytes, 0, buf.length, StandardCharsets.UTF_8);
  }
}
