package io.github.lsrlucene.index;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.lucene.index.CodecReader;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.MultiTerms;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.index.Sorter;
import org.apache.lucene.index.SortingCodecReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Docid reordering with Lucene core only: exports the document-term graph of a field (for a
 * reordering computed elsewhere, e.g. recursive graph bisection in Python) and rewrites an index in a
 * given document order through {@link SortingCodecReader} and {@link IndexWriter#addIndexes}, so no
 * lucene-misc jar is needed. The rewritten index is a normal single-segment index of the default codec
 * (what Anserini's IndexCollection writes, non-compound files); its postings, impacts (block-max
 * data), norms, stored fields and doc values are rewritten in the new order, and the commit's user
 * data is kept.
 */
public final class Reorderer {
  private static final int CHUNK = 1 << 16;

  private Reorderer() {}

  private static Directory openIndex(String indexDir) throws IOException {
    Path path = Paths.get(indexDir);
    if (!Files.isDirectory(path)) {
      throw new NoSuchFileException(indexDir + " (no such index folder)");
    }
    Directory dir = FSDirectory.open(path);
    if (!DirectoryReader.indexExists(dir)) {
      dir.close();
      throw new IllegalArgumentException(indexDir + " holds no Lucene index");
    }
    return dir;
  }

  /**
   * Writes the postings of {@code field} term by term: {@code <prefix>.docs} holds every posting's
   * (global) docid as a little-endian int32, terms in index order and docids ascending within a term;
   * {@code <prefix>.offsets} the int64 start of each term's postings plus the total. Returns
   * {maxDoc, terms, postings, deleted documents, segments}.
   */
  public static long[] exportPostings(String indexDir, String field, String prefix) throws IOException {
    try (Directory dir = openIndex(indexDir); DirectoryReader reader = DirectoryReader.open(dir)) {
      Terms terms = MultiTerms.getTerms(reader, field);
      if (terms == null) {
        throw new IllegalArgumentException(indexDir + ": index has no postings in field '" + field + "'");
      }
      long postings = 0;
      long count = 0;
      try (FileChannel docs = FileChannel.open(Paths.get(prefix + ".docs"), StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
          FileChannel offsets = FileChannel.open(Paths.get(prefix + ".offsets"), StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
        ByteBuffer db = ByteBuffer.allocateDirect(4 * CHUNK).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer ob = ByteBuffer.allocateDirect(8 * CHUNK).order(ByteOrder.LITTLE_ENDIAN);
        TermsEnum te = terms.iterator();
        PostingsEnum pe = null;
        while (te.next() != null) {
          ob.putLong(postings);
          if (!ob.hasRemaining()) {
            flush(ob, offsets);
          }
          count++;
          pe = te.postings(pe, PostingsEnum.NONE);
          for (int d = pe.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = pe.nextDoc()) {
            db.putInt(d);
            postings++;
            if (!db.hasRemaining()) {
              flush(db, docs);
            }
          }
        }
        ob.putLong(postings);
        flush(ob, offsets);
        flush(db, docs);
      }
      return new long[] {reader.maxDoc(), count, postings, reader.numDeletedDocs(), reader.leaves().size()};
    }
  }

  private static void flush(ByteBuffer buf, FileChannel ch) throws IOException {
    buf.flip();
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
    buf.clear();
  }

  /** A permutation as a DocMap; {@code newToOld[i]} is the old docid of new document i. */
  static Sorter.DocMap docMap(int[] newToOld) {
    int n = newToOld.length;
    int[] oldToNew = new int[n];
    java.util.Arrays.fill(oldToNew, -1);
    for (int i = 0; i < n; i++) {
      int old = newToOld[i];
      if (old < 0 || old >= n || oldToNew[old] != -1) {
        throw new IllegalArgumentException("not a permutation of 0.." + (n - 1) + " (entry " + i + " is " + old + ")");
      }
      oldToNew[old] = i;
    }
    return new Sorter.DocMap() {
      @Override
      public int oldToNew(int docID) {
        return oldToNew[docID];
      }

      @Override
      public int newToOld(int docID) {
        return newToOld[docID];
      }

      @Override
      public int size() {
        return n;
      }
    };
  }

  /** Reads a permutation written as little-endian int32 (new position -> old docid). */
  static int[] readPermutation(String file) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(Paths.get(file))).order(ByteOrder.LITTLE_ENDIAN);
    int[] out = new int[b.remaining() / 4];
    b.asIntBuffer().get(out);
    return out;
  }

  /**
   * Writes the index at {@code indexDir} into the empty or new folder {@code outDir} with its documents
   * in the order of the permutation file (new docid i is old docid {@code perm[i]}). The input must
   * have one segment and no deleted documents (Anserini's -optimize output); it is never modified.
   * Returns the number of documents written.
   */
  public static int apply(String indexDir, String permutationFile, String outDir) throws IOException {
    int[] newToOld = readPermutation(permutationFile);
    try (Directory dir = openIndex(indexDir); DirectoryReader reader = DirectoryReader.open(dir)) {
      if (reader.leaves().size() != 1) {
        throw new IllegalArgumentException(indexDir + ": index has " + reader.leaves().size()
            + " segments; reordering needs one (merge it first)");
      }
      if (reader.numDeletedDocs() > 0) {
        throw new IllegalArgumentException(indexDir + ": index has " + reader.numDeletedDocs()
            + " deleted documents; reordering needs an index without deletions");
      }
      if (newToOld.length != reader.maxDoc()) {
        throw new IllegalArgumentException(permutationFile + ": permutation of " + newToOld.length
            + " documents for an index of " + reader.maxDoc());
      }
      LeafReaderContext leaf = reader.leaves().get(0);
      CodecReader codecReader = (SegmentReader) leaf.reader();
      CodecReader sorted = SortingCodecReader.wrap(codecReader, docMap(newToOld), null);
      Map<String, String> userData = reader.getIndexCommit().getUserData();
      IndexWriterConfig cfg = new IndexWriterConfig()
          .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
          .setUseCompoundFile(false);
      try (Directory out = FSDirectory.open(Paths.get(outDir)); IndexWriter w = new IndexWriter(out, cfg)) {
        w.addIndexes(sorted);
        if (!userData.isEmpty()) {
          w.setLiveCommitData(userData.entrySet());
        }
        w.commit();
      }
      return newToOld.length;
    }
  }

  /** Merges a multi-segment index into one segment at {@code outDir} (docids keep their global order). */
  public static int mergeInto(String indexDir, String outDir) throws IOException {
    try (Directory dir = openIndex(indexDir); DirectoryReader reader = DirectoryReader.open(dir)) {
      if (reader.numDeletedDocs() > 0) {
        throw new IllegalArgumentException(indexDir + ": index has " + reader.numDeletedDocs()
            + " deleted documents; reordering needs an index without deletions");
      }
      CodecReader[] leaves = new CodecReader[reader.leaves().size()];
      for (int i = 0; i < leaves.length; i++) {
        leaves[i] = (SegmentReader) reader.leaves().get(i).reader();
      }
      IndexWriterConfig cfg = new IndexWriterConfig()
          .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
          .setUseCompoundFile(false);
      try (Directory out = FSDirectory.open(Paths.get(outDir)); IndexWriter w = new IndexWriter(out, cfg)) {
        w.addIndexes(leaves);
        w.forceMerge(1);
        w.commit();
      }
      return reader.maxDoc();
    }
  }
}
