package io.github.lsrlucene.index;

import io.github.lsrlucene.query.DenseImpacts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.lucene.codecs.CodecUtil;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.util.BytesRef;

/**
 * Writes the dense-impacts sidecar ({@link DenseImpacts}) of an impact index: per segment, every term of
 * {@code field} whose document frequency is at least {@code minDfShare} of the segment's documents and whose
 * impacts all fit a byte, as one byte per document. The main index is not touched (Anserini opens it as before).
 */
public final class DenseImpactsIndexer {
  /** File of the sidecar holding the minimum document-frequency share it was built with. */
  public static final String SHARE_FILE = "min_df_share";

  private DenseImpactsIndexer() {}

  /**
   * Writes {@code <indexDir>/dense-impacts} (replacing an old one only when complete); returns {dense terms,
   * bytes written, postings they hold}.
   */
  public static long[] build(String indexDir, String field, double minDfShare) throws IOException {
    if (!(minDfShare > 0 && minDfShare <= 1)) {
      throw new IllegalArgumentException("the minimum document-frequency share must be in (0, 1], got " + minDfShare);
    }
    Path index = Paths.get(indexDir);
    Path tmp = index.resolve(DenseImpacts.DIR + ".tmp");
    deleteTree(tmp);
    Files.createDirectories(tmp);
    long dense = 0;
    long bytes = 0;
    long postings = 0;
    try (Directory mainDir = FSDirectory.open(index); DirectoryReader main = DirectoryReader.open(mainDir);
         Directory out = FSDirectory.open(tmp)) {
      for (LeafReaderContext ctx : main.leaves()) {
        SegmentReader seg = (SegmentReader) ctx.reader();
        int maxDoc = seg.maxDoc();
        long minDf = Math.max(1, (long) Math.ceil(minDfShare * maxDoc));
        // first pass: the terms that qualify (so that their count leads the file); second: each row written as it is
        // filled, one row on the heap at a time
        java.util.List<BytesRef> names = new java.util.ArrayList<>();
        Terms terms = seg.terms(field);
        TermsEnum te = terms == null ? TermsEnum.EMPTY : terms.iterator();
        PostingsEnum pe = null;
        for (BytesRef t = te.next(); t != null; t = te.next()) {
          if (te.docFreq() >= minDf && fitsByte(pe = te.postings(pe, PostingsEnum.FREQS))) {
            names.add(BytesRef.deepCopyOf(t)); // stays on its postings otherwise: exactness over speed
          }
        }
        String name = seg.getSegmentName() + "." + DenseImpacts.EXTENSION;
        byte[] row = new byte[maxDoc];
        try (IndexOutput o = out.createOutput(name, IOContext.DEFAULT)) {
          CodecUtil.writeIndexHeader(o, DenseImpacts.CODEC, DenseImpacts.VERSION, seg.getSegmentInfo().info.getId(), "");
          o.writeVInt(maxDoc);
          o.writeVInt(names.size());
          for (BytesRef t : names) {
            te.seekExact(t);
            Arrays.fill(row, (byte) 0);
            pe = te.postings(pe, PostingsEnum.FREQS);
            for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
              row[d] = (byte) pe.freq();
              postings++;
            }
            o.writeString(DenseImpacts.key(field, t.utf8ToString()));
            o.writeBytes(row, maxDoc);
          }
          CodecUtil.writeFooter(o);
          bytes += o.getFilePointer();
        }
        dense += names.size();
      }
    }
    // the share, for rebuilding the sidecar after the index changes (reorder)
    Files.writeString(tmp.resolve(SHARE_FILE), Double.toString(minDfShare) + "\n");
    Path dest = index.resolve(DenseImpacts.DIR);
    Path old = index.resolve(DenseImpacts.DIR + ".old");
    deleteTree(old);
    if (Files.exists(dest)) {
      Files.move(dest, old);
    }
    Files.move(tmp, dest);
    deleteTree(old);
    return new long[] {dense, bytes, postings};
  }

  /** Whether every impact of a postings list fits an unsigned byte. */
  private static boolean fitsByte(PostingsEnum pe) throws IOException {
    for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
      if (pe.freq() > 255) {
        return false;
      }
    }
    return true;
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(q);
      }
    }
  }
}
