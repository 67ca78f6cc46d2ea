package io.github.lsrlucene.index;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.ParallelLeafReader;

/**
 * Joins an impact index with its positional sidecar ({@link PositionalIndexer}, {@code <index>/positions})
 * docid by docid, after checking that both are single segments holding the same documents in the same order.
 */
public final class PositionalSidecar {
  private PositionalSidecar() {
  }

  /** The main index's only segment joined with the sidecar's; {@code docIds} are the main index's external ids. */
  public static ParallelLeafReader join(Path indexPath, DirectoryReader main, DirectoryReader pos, String[] docIds)
      throws IOException {
    String where = indexPath.resolve(PositionalIndexer.POSITIONS_DIR).toString();
    if (main.leaves().size() != 1) {
      throw new IllegalStateException(where + ": the main index has " + main.leaves().size()
          + " segments, so its docids no longer match the positional field; rebuild the positional field");
    }
    if (pos.leaves().size() != 1) {
      throw new IllegalStateException(where + ": the positional index has " + pos.leaves().size() + " segments (expected 1); rebuild it");
    }
    LeafReader m = main.leaves().get(0).reader();
    LeafReader p = pos.leaves().get(0).reader();
    if (m.maxDoc() != p.maxDoc()) {
      throw new IllegalStateException(where + ": holds " + p.maxDoc() + " documents but the index has " + m.maxDoc()
          + "; rebuild the positional field");
    }
    String[] pids = DocIds.read(pos, PositionalIndexer.ID_FIELD);
    for (int d = 0; d < docIds.length; d++) {
      if (docIds[d] != null && !docIds[d].equals(pids[d])) {
        throw new IllegalStateException(where + ": docid " + d + " is '" + docIds[d] + "' in the index but '" + pids[d]
            + "' in the positional field; rebuild the positional field");
      }
    }
    return new ParallelLeafReader(false, m, p);
  }
}
