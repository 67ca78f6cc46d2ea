package io.github.lsrlucene.index;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.lsrlucene.query.ImpactSimilarity;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.ConcurrentMergeScheduler;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogByteSizeMergePolicy;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

/**
 * Builds the index Anserini's IndexCollection builds from JsonVectorCollection files with {@code -impact
 * -pretokenized -storeRaw} (fields {@code id}: string + binary doc values, {@code raw}: the pretty-printed
 * JSON, {@code contents}: DOCS_AND_FREQS with norm 1 from {@link ImpactSimilarity}), but gives each term its
 * weight as a custom term frequency ({@link WeightedTerms}) instead of building a text that repeats the term
 * weight times and tokenizing it: the same postings for a fraction of the work.
 *
 * <p>One thread reads lines and hands batches to {@code threads} workers that parse them into documents, so one
 * big file uses every thread; one writer thread adds the batches in input order, and merges join adjacent
 * segments only, so docids are the input order for any number of threads (a BP order from a seed reproduces). Runs in the background: {@link #start}, poll {@link #indexed()}, then
 * {@link #finish()}. Input is expected to be validated (lsr_lucene.index.impact); a malformed line fails with
 * its file and line.
 */
public final class ImpactIndexer implements Runnable {
  static final String ID = "id";
  static final String RAW = "raw";
  static final String CONTENTS = "contents";
  static final int BATCH = 256;
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final FieldType CONTENTS_TYPE = new FieldType();

  static {
    CONTENTS_TYPE.setTokenized(true);
    CONTENTS_TYPE.setStored(false);
    CONTENTS_TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    CONTENTS_TYPE.freeze();
  }

  private final String[] files;
  private final String indexDir;
  private final int threads;
  private final boolean optimize;
  private final double ramBufferMb;
  private final AtomicLong indexed = new AtomicLong();
  private final AtomicLong empty = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Thread thread;

  /** Lines of one batch and where the first came from (file, line number) for error messages. */
  private static final class Batch {
    final List<String> lines = new ArrayList<>(BATCH);
    final String file;
    final long firstLine;
    final CompletableFuture<List<Document>> documents = new CompletableFuture<>();

    Batch(String file, long firstLine) {
      this.file = file;
      this.firstLine = firstLine;
    }
  }

  private static final Batch END = new Batch("", 0);

  private ImpactIndexer(String[] files, String indexDir, int threads, boolean optimize, double ramBufferMb) {
    this.files = files.clone();
    this.indexDir = indexDir;
    this.threads = Math.max(1, threads);
    this.optimize = optimize;
    this.ramBufferMb = ramBufferMb;
    this.thread = new Thread(this, "lsr-impact-indexer");
    this.thread.setDaemon(true);
  }

  /** Starts indexing {@code files} into a new index at {@code indexDir} in the background. */
  public static ImpactIndexer start(String[] files, String indexDir, int threads, boolean optimize,
      double ramBufferMb) {
    ImpactIndexer indexer = new ImpactIndexer(files, indexDir, threads, optimize, ramBufferMb);
    indexer.thread.start();
    return indexer;
  }

  /** Documents added so far. */
  public long indexed() {
    return indexed.get();
  }

  /** Documents skipped so far because no term has a positive weight (Anserini: "empty"). */
  public long empty() {
    return empty.get();
  }

  public boolean isDone() {
    return !thread.isAlive();
  }

  /** Waits for the end; rethrows a failure as an IOException carrying its message. */
  public long[] finish() throws IOException, InterruptedException {
    thread.join();
    Throwable t = failure.get();
    if (t != null) {
      throw t instanceof IOException ? (IOException) t : new IOException(String.valueOf(t.getMessage()), t);
    }
    return new long[] {indexed.get(), empty.get()};
  }

  @Override
  public void run() {
    IndexWriterConfig config = new IndexWriterConfig(new WhitespaceAnalyzer())
        .setSimilarity(new ImpactSimilarity())
        .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
        .setRAMBufferSizeMB(ramBufferMb)
        .setUseCompoundFile(false)
        .setMergePolicy(new LogByteSizeMergePolicy())  // merges adjacent segments only: docids keep input order
        .setMergeScheduler(new ConcurrentMergeScheduler());
    try (FSDirectory dir = FSDirectory.open(Paths.get(indexDir));
         IndexWriter writer = new IndexWriter(dir, config)) {
      BlockingQueue<Batch> work = new ArrayBlockingQueue<>(2 * threads);
      BlockingQueue<Batch> ordered = new ArrayBlockingQueue<>(4 * threads + 2);
      List<Thread> helpers = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        helpers.add(new Thread(() -> work(work), "lsr-impact-indexer-" + i));
      }
      helpers.add(new Thread(() -> read(work, ordered), "lsr-impact-indexer-reader"));
      for (Thread t : helpers) {
        t.start();
      }
      try {
        write(ordered, writer);
      } finally {
        for (Thread t : helpers) {
          t.join();
        }
      }
      if (failure.get() == null) {
        if (optimize) {
          writer.forceMerge(1);
        }
        writer.commit();
      } else {
        writer.rollback();
      }
    } catch (Throwable t) {
      failure.compareAndSet(null, t);
    }
  }

  /** The only thread that adds documents: it takes batches in input order, so docids follow the input. */
  private void write(BlockingQueue<Batch> ordered, IndexWriter writer) throws InterruptedException {
    while (true) {
      Batch batch = ordered.take();
      if (batch == END) {
        return;
      }
      List<Document> docs;
      try {
        docs = batch.documents.get();
      } catch (java.util.concurrent.ExecutionException e) {
        failure.compareAndSet(null, e.getCause());
        continue;  // keep draining so that the reader never blocks on a full queue
      }
      if (failure.get() != null) {
        continue;
      }
      try {
        for (Document doc : docs) {
          writer.addDocument(doc);
          indexed.incrementAndGet();
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t);
      }
    }
  }

  private static BufferedReader open(String file) throws IOException {
    InputStream in = Files.newInputStream(Path.of(file));
    if (file.endsWith(".gz")) {
      in = new GZIPInputStream(in, 1 << 16);
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 20);
  }

  /** Reads lines into batches, each queued for a worker and, in input order, for the writer. */
  private void read(BlockingQueue<Batch> work, BlockingQueue<Batch> ordered) {
    try {
      for (String file : files) {
        try (BufferedReader in = open(file)) {
          long lineNo = 0;
          Batch batch = null;
          String line;
          while ((line = in.readLine()) != null && failure.get() == null) {
            lineNo++;
            if (line.isBlank()) {
              continue;
            }
            if (batch == null) {
              batch = new Batch(file, lineNo);
            }
            batch.lines.add(line);
            if (batch.lines.size() == BATCH) {
              ordered.put(batch);
              work.put(batch);
              batch = null;
            }
          }
          if (batch != null && failure.get() == null) {
            ordered.put(batch);
            work.put(batch);
          }
        }
        if (failure.get() != null) {
          break;
        }
      }
    } catch (Throwable t) {
      failure.compareAndSet(null, t);
    } finally {
      try {
        ordered.put(END);
        for (int i = 0; i < threads; i++) {
          work.put(END);
        }
      } catch (InterruptedException e) {
        failure.compareAndSet(null, e);
      }
    }
  }

  /** Parses batches into documents (in parallel with other workers); the writer adds them in input order. */
  private void work(BlockingQueue<Batch> work) {
    String[] terms = new String[64];
    int[] weights = new int[64];
    while (true) {
      Batch batch;
      try {
        batch = work.take();
      } catch (InterruptedException e) {
        failure.compareAndSet(null, e);
        return;
      }
      if (batch == END) {
        return;
      }
      if (failure.get() != null) {
        batch.documents.complete(List.of());
        continue;
      }
      try {
        List<Document> docs = new ArrayList<>(batch.lines.size());
        for (String line : batch.lines) {
          JsonNode node;
          try {
            node = MAPPER.readTree(line);
          } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(batch.file + " (batch from line " + batch.firstLine + "): malformed JSON ("
                + e.getOriginalMessage() + ")", e);
          }
          JsonNode id = node.get(ID);
          JsonNode vector = node.get("vector");
          if (id == null || vector == null || !vector.isObject()) {
            throw new IOException(batch.file + " (batch from line " + batch.firstLine + "): a document without "
                + "\"id\" or \"vector\"");
          }
          int n = 0;
          for (Iterator<Map.Entry<String, JsonNode>> it = vector.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int w = e.getValue().asInt();
            if (w <= 0) {
              continue;  // Anserini repeats a term weight times: zero and negative weights leave no posting
            }
            if (n == terms.length) {
              terms = java.util.Arrays.copyOf(terms, 2 * n);
              weights = java.util.Arrays.copyOf(weights, 2 * n);
            }
            terms[n] = e.getKey();
            weights[n++] = w;
          }
          if (n == 0) {
            empty.incrementAndGet();
            continue;
          }
          String docId = id.asText();
          Document doc = new Document();
          doc.add(new StringField(ID, docId, Field.Store.YES));
          doc.add(new BinaryDocValuesField(ID, new BytesRef(docId)));
          doc.add(new StoredField(RAW, node.toPrettyString()));
          doc.add(new Field(CONTENTS, new WeightedTerms(Arrays.copyOf(terms, n), Arrays.copyOf(weights, n), n),
              CONTENTS_TYPE));
          docs.add(doc);
        }
        batch.documents.complete(docs);
      } catch (Throwable t) {
        batch.documents.completeExceptionally(t);
      }
    }
  }
}
