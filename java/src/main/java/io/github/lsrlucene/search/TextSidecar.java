package io.github.lsrlucene.search;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.index.DocIds;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.FixedBitSet;

/**
 * The text sidecar of an index ({@code <index>/text}, {@link io.github.lsrlucene.index.TextIndexer}) opened for
 * search, after checking that its document i is the main index's document i; the documents a text filter matches.
 */
final class TextSidecar implements Closeable {
  private final Directory dir;
  private final DirectoryReader reader;

  private TextSidecar(Directory dir, DirectoryReader reader) {
    this.dir = dir;
    this.reader = reader;
  }

  /** The one-line error of an index without a (usable) text field, naming the command that builds it. */
  static QuerySpecException missing(Path index, String why) {
    boolean there = Files.exists(index.resolve(TextFilter.DIR));
    return new QuerySpecException(index.resolve(TextFilter.DIR) + ": " + why + "; explicit exclusions (-word, NOT "
        + "word) read this text field: build it with lsr-lucene index --index " + index + " --text"
        + (there ? " --overwrite" : ""));
  }

  static TextSidecar open(Path index, String[] docIds) throws IOException {
    Path p = index.resolve(TextFilter.DIR);
    if (!Files.isDirectory(p)) {
      throw missing(index, "no text field");
    }
    Directory d = FSDirectory.open(p);
    if (!DirectoryReader.indexExists(d)) {
      d.close();
      throw missing(index, "no text index in this folder");
    }
    DirectoryReader r = DirectoryReader.open(d);
    try {
      if (r.maxDoc() != docIds.length) {
        throw missing(index, "holds " + r.maxDoc() + " documents but the index has " + docIds.length);
      }
      String[] tids = DocIds.read(r, TextFilter.ID_FIELD);
      for (int i = 0; i < docIds.length; i++) {
        if (docIds[i] != null && !docIds[i].equals(tids[i])) {
          throw missing(index, "docid " + i + " is '" + docIds[i] + "' in the index but '" + tids[i]
              + "' in the text field (the index changed after it was built)");
        }
      }
    } catch (IOException | RuntimeException e) {
      r.close();
      d.close();
      throw e;
    }
    return new TextSidecar(d, r);
  }

  /** The global docids (main index = sidecar) that {@code q} matches. */
  FixedBitSet matches(Query q) throws IOException {
    return TextFilter.matches(reader, q);
  }

  @Override
  public void close() throws IOException {
    reader.close();
    dir.close();
  }
}
