package io.github.lsrlucene;

/** Version marker of the lsr_lucene Java classes. */
public final class Version {
  public static final String VERSION = "0.1.0";
  private Version() {}
}
