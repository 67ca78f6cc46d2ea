package io.github.lsrlucene.search;

/** Hits of one query: Lucene docids and true (unshifted) scores, best first. */
final class Hits {
  final int[] docs;
  final double[] scores;

  Hits(int[] docs, double[] scores) {
    this.docs = docs;
    this.scores = scores;
  }
}
