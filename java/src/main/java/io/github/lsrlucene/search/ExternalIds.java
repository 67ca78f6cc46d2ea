package io.github.lsrlucene.search;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * External ids of an index by Lucene docid (null for deleted documents), with what searching needs
 * of them: their rank in id order (ties), their UTF-8 bytes (run lines), and an id &rarr; docid map.
 */
final class ExternalIds {
  final String[] ids;
  final int[] idOrd;
  final int[] ordToDoc;
  final int maxIdLength;
  final byte[][] idBytes;
  private volatile Map<String, Integer> idToDoc;

  ExternalIds(String[] ids) {
    this.ids = ids;
    idOrd = rankIds(ids);
    ordToDoc = new int[idOrd.length];
    for (int d = 0; d < idOrd.length; d++) {
      ordToDoc[idOrd[d]] = d;
    }
    int longest = 0;
    idBytes = new byte[ids.length][];
    for (int d = 0; d < ids.length; d++) {
      idBytes[d] = ids[d] == null ? new byte[0] : ids[d].getBytes(StandardCharsets.UTF_8);
      longest = Math.max(longest, idBytes[d].length);
    }
    maxIdLength = longest;
  }

  /** Rank of each docid's external id in ascending UTF-8 byte order (= Python str order). */
  static int[] rankIds(String[] ids) {
    int n = ids.length;
    byte[][] bytes = new byte[n][];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
      bytes[i] = ids[i] == null ? null : ids[i].getBytes(StandardCharsets.UTF_8);
    }
    Arrays.sort(order, (a, b) -> {
      byte[] x = bytes[a];
      byte[] y = bytes[b];
      if (x == null || y == null) {
        return x == null ? (y == null ? Integer.compare(a, b) : 1) : -1;
      }
      int c = Arrays.compareUnsigned(x, y);
      return c != 0 ? c : Integer.compare(a, b);
    });
    int[] rank = new int[n];
    for (int i = 0; i < n; i++) {
      rank[order[i]] = i;
    }
    return rank;
  }

  /** External id &rarr; docid, built on first use. */
  Map<String, Integer> idMap() {
    Map<String, Integer> m = idToDoc;
    if (m == null) {
      synchronized (this) {
        if (idToDoc == null) {
          Map<String, Integer> built = new HashMap<>(ids.length * 2);
          for (int d = 0; d < ids.length; d++) {
            if (ids[d] != null) {
              built.put(ids[d], d);
            }
          }
          idToDoc = built;
        }
        m = idToDoc;
      }
    }
    return m;
  }
}
