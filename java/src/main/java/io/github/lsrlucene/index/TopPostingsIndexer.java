package io.github.lsrlucene.index;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The top-postings sidecar ({@code <index>/top-postings}): for every term of the impact field, only its
 * {@code postingsPerTerm} highest impacts (ties: lower docid first), in a one-segment Lucene index whose docids
 * match the main index's, with each document's whole vector beside it as binary doc values (a forward index).
 * Approximate search runs its first phase on the short lists and scores its candidates exactly from the forward
 * field; the main index stays as Anserini built it.
 */
public final class TopPostingsIndexer {
  /** Folder of the sidecar inside the main index folder. */
  public static final String DIR = "top-postings";
  /** Commit user-data key holding the postings kept per term. */
  public static final String POSTINGS_KEY = "postings_per_term";
  /** Commit user-data key holding the number of terms of the main index's field (the forward field's term ids). */
  public static final String TERMS_KEY = "terms";
  /**
   * Binary doc values of each document's whole vector: (term id, impact) pairs in ascending term id, term ids being
   * ranks in the main index's term order; exact scores of approximate search's candidates come from it. Each number
   * is an unsigned little-endian 16-bit number when every term id and impact fits (at most 65,536 terms, impacts
   * below 65,536), else a 32-bit one ({@link #FORWARD_BYTES_KEY}).
   */
  public static final String FORWARD_FIELD = "forward";
  /** Commit user-data key holding the bytes of one forward-field entry (4: two 16-bit numbers, 8: two 32-bit). */
  public static final String FORWARD_BYTES_KEY = "forward_bytes";
  /** Postings held in memory per chunk of documents while the sidecar is written. */
  static final int CHUNK = 1 << 24;
  public static final String ID_FIELD = "id";
  private static final FieldType TYPE = new FieldType();

  static {
    TYPE.setTokenized(true);
    TYPE.setStored(false);
    TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    TYPE.freeze();
  }

  private TopPostingsIndexer() {}

  /**
   * Writes {@code <indexDir>/top-postings} (replacing an old one only when complete) from the index's
   * {@code field}; returns {documents, terms, kept postings, all postings}.
   */
  public static long[] build(String indexDir, String field, int postingsPerTerm) throws IOException {
    if (postingsPerTerm <= 0) {
      throw new IllegalArgumentException("postings per term must be positive, got " + postingsPerTerm);
    }
    Path index = Paths.get(indexDir);
    try (Directory mainDir = FSDirectory.open(index); DirectoryReader main = DirectoryReader.open(mainDir)) {
      if (main.leaves().size() != 1) {
        throw new IllegalStateException(indexDir + ": the index has " + main.leaves().size()
            + " segments; the top-postings sidecar needs one (as lsr-lucene index writes it)");
      }
      LeafReader leaf = main.leaves().get(0).reader();
      int maxDoc = leaf.maxDoc();
      Bits live = leaf.getLiveDocs(); // postings of deleted documents are not kept
      Terms terms = leaf.terms(field);
      // pass 1: each term's cut (an impact histogram when its list is too long), postings per document
      List<String> names = new ArrayList<>();
      List<int[]> cuts = new ArrayList<>();
      int[] perDoc = new int[maxDoc];
      long all = 0;
      int maxImpact = 0;
      if (terms != null) {
        TermsEnum te = terms.iterator();
        PostingsEnum pe = null;
        for (BytesRef t = te.next(); t != null; t = te.next()) {
          names.add(t.utf8ToString());
          cuts.add(te.docFreq() <= postingsPerTerm ? new int[] {0, Integer.MAX_VALUE} : cut(te, postingsPerTerm, live));
          pe = te.postings(pe, PostingsEnum.FREQS);
          for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
            if (live == null || live.get(d)) {
              perDoc[d]++;
              all++;
              maxImpact = Math.max(maxImpact, pe.freq());
            }
          }
        }
      }
      String[] ids = DocIds.read(main, "id");
      int forward = names.size() <= 0x10000 && maxImpact < 0x10000 ? 4 : 8;
      long kept = write(index, terms, names, cuts, perDoc, live, ids, postingsPerTerm, field, forward);
      return new long[] {maxDoc, names.size(), kept, all};
    }
  }

  /** Postings kept per term by the sidecar of {@code indexDir}, 0 when it has none. */
  public static int postingsPerTerm(String indexDir) throws IOException {
    Path path = Paths.get(indexDir).resolve(DIR);
    if (!Files.isDirectory(path)) {
      return 0;
    }
    try (Directory dir = FSDirectory.open(path)) {
      if (!DirectoryReader.indexExists(dir)) {
        return 0;
      }
      String v = org.apache.lucene.index.SegmentInfos.readLatestCommit(dir).getUserData().get(POSTINGS_KEY);
      return v == null ? 0 : Integer.parseInt(v);
    }
  }

  /**
   * {minimum impact kept, postings at that impact kept} so that exactly {@code p} of the term's postings are kept:
   * every impact above the cut, and the lowest docids among those at it.
   */
  private static int[] cut(TermsEnum te, int p, org.apache.lucene.util.Bits live) throws IOException {
    Map<Integer, Integer> histogram = new HashMap<>();
    PostingsEnum pe = te.postings(null, PostingsEnum.FREQS);
    for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
      if (live == null || live.get(d)) {
        histogram.merge(pe.freq(), 1, Integer::sum);
      }
    }
    List<Integer> values = new ArrayList<>(histogram.keySet());
    values.sort(java.util.Collections.reverseOrder());
    int above = 0;
    for (int v : values) {
      int n = histogram.get(v);
      if (above + n >= p) {
        return new int[] {v, p - above};
      }
      above += n;
    }
    return new int[] {0, Integer.MAX_VALUE};
  }

  /**
   * Writes the sidecar document by document, in chunks of documents holding at most {@link #CHUNK} postings (each
   * chunk one more pass over the postings, so memory stays bounded): every document gets its kept postings as the
   * impact field and all its postings as the forward field; returns the postings kept.
   */
  private static long write(Path index, Terms terms, List<String> names, List<int[]> cuts, int[] perDoc, Bits live,
                            String[] ids, int postingsPerTerm, String field, int forward) throws IOException {
    Path out = index.resolve(DIR);
    Path tmp = Files.createTempDirectory(index, "." + DIR + ".tmp-");
    long kept = 0;
    try {
      try (Directory dir = FSDirectory.open(tmp)) {
        IndexWriterConfig cfg = new IndexWriterConfig(new WhitespaceAnalyzer())
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setMergePolicy(new LogDocMergePolicy()) // adjacent segments only: docids stay the main index's
            .setRAMBufferSizeMB(256)
            .setUseCompoundFile(false);
        int[] room = new int[cuts.size()]; // postings at exactly the cut still to keep, per term
        for (int i = 0; i < room.length; i++) {
          room[i] = cuts.get(i)[1];
        }
        try (IndexWriter w = new IndexWriter(dir, cfg)) {
          int docs = perDoc.length;
          for (int from = 0; from < docs; ) {
            int to = from;
            long size = 0;
            while (to < docs && (to == from || size + perDoc[to] <= CHUNK)) {
              size += perDoc[to++];
            }
            kept += writeChunk(w, terms, names, cuts, room, perDoc, live, ids, from, to, (int) size, field, forward);
            from = to;
          }
          w.forceMerge(1);
          Map<String, String> user = new HashMap<>();
          user.put(POSTINGS_KEY, Integer.toString(postingsPerTerm));
          user.put(TERMS_KEY, Integer.toString(names.size()));
          user.put(FORWARD_BYTES_KEY, Integer.toString(forward));
          user.put("documents", Integer.toString(docs));
          user.put("field", field);
          user.put("format", "lsr-lucene-top-postings-2");
          w.setLiveCommitData(user.entrySet());
          w.commit();
        }
      }
      PositionalIndexer.install(tmp, out);
    } catch (IOException | RuntimeException e) {
      PositionalIndexer.deleteTree(tmp);
      throw e;
    }
    return kept;
  }

  /** Adds documents [from, to) (holding {@code size} postings); returns how many of their postings are kept. */
  private static long writeChunk(IndexWriter w, Terms terms, List<String> names, List<int[]> cuts, int[] room,
                                 int[] perDoc, Bits live, String[] ids, int from, int to, int size, String field,
                                 int forward) throws IOException {
    int[] start = new int[to - from + 1];
    for (int d = from; d < to; d++) {
      start[d - from + 1] = start[d - from] + perDoc[d];
    }
    int[] fill = java.util.Arrays.copyOf(start, to - from);
    int[] ords = new int[size];
    int[] freqs = new int[size];
    boolean[] keep = new boolean[size];
    if (terms != null) {
      TermsEnum te = terms.iterator();
      PostingsEnum pe = null;
      int ord = 0;
      for (BytesRef t = te.next(); t != null; t = te.next(), ord++) {
        pe = te.postings(pe, PostingsEnum.FREQS);
        int[] cut = cuts.get(ord);
        for (int d = pe.advance(from); d < to; d = pe.nextDoc()) {
          if (live != null && !live.get(d)) {
            continue;
          }
          int f = pe.freq();
          int at = fill[d - from]++;
          ords[at] = ord; // terms come in order: each document's postings in ascending term order
          freqs[at] = f;
          keep[at] = f > cut[0] || (f == cut[0] && room[ord]-- > 0);
        }
      }
    }
    long kept = 0;
    byte[] buf = new byte[64];
    for (int d = from; d < to; d++) {
      Document doc = new Document();
      doc.add(new BinaryDocValuesField(ID_FIELD, new BytesRef(ids[d] == null ? "" : ids[d])));
      int a = start[d - from];
      int b = start[d - from + 1];
      int n = 0;
      for (int i = a; i < b; i++) {
        n += keep[i] ? 1 : 0;
      }
      if (n > 0) {
        String[] tn = new String[n];
        int[] tf = new int[n];
        int j = 0;
        for (int i = a; i < b; i++) {
          if (keep[i]) {
            tn[j] = names.get(ords[i]);
            tf[j++] = freqs[i];
          }
        }
        doc.add(new Field(field, new WeightedTerms(tn, tf, n), TYPE));
        kept += n;
      }
      if (buf.length < (b - a) * forward) {
        buf = new byte[(b - a) * forward];
      }
      int len = 0;
      for (int i = a; i < b; i++) { // (term id, impact) as two little-endian numbers of forward / 2 bytes each
        for (int shift = 0; shift < forward * 4; shift += 8) {
          buf[len++] = (byte) (ords[i] >>> shift);
        }
        for (int shift = 0; shift < forward * 4; shift += 8) {
          buf[len++] = (byte) (freqs[i] >>> shift);
        }
      }
      doc.add(new BinaryDocValuesField(FORWARD_FIELD, new BytesRef(buf, 0, len)));
      w.addDocument(doc); // documents with no kept posting stay as placeholders: docids stay aligned
    }
    return kept;
  }

}
