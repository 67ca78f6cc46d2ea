package io.github.lsrlucene.query;

/** A scorer of shifted scores that also knows its last score in double, so unshifting it loses no bits. */
interface ExactShifted {
  /** The last {@code score()} in double: shift + positive &minus; negative. */
  double lastShiftedScore();
}
