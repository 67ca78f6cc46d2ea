package io.github.lsrlucene.search;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/** Growable byte buffer of run lines (UTF-8), written without intermediate Strings. */
final class RunBuffer {
  private static final byte[] ZEROS = "000000".getBytes(StandardCharsets.US_ASCII);
  byte[] bytes;
  int length;
  private final byte[] digits = new byte[20];

  RunBuffer(int capacity) {
    bytes = new byte[Math.max(capacity, 16)];
  }

  private void ensure(int extra) {
    if (length + extra > bytes.length) {
      bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + extra));
    }
  }

  void put(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, bytes, length, b.length);
    length += b.length;
  }

  void put(byte b) {
    ensure(1);
    bytes[length++] = b;
  }

  void putLong(long v) {
    ensure(21);
    if (v < 0) {
      bytes[length++] = '-';
      v = -v;
    }
    if (v <= Integer.MAX_VALUE) {
      putInt((int) v);
      return;
    }
    int n = 0;
    do {
      digits[n++] = (byte) ('0' + (v % 10));
      v /= 10;
    } while (v > 0);
    while (n > 0) {
      bytes[length++] = digits[--n];
    }
  }

  /** Non-negative int in decimal (int division is much cheaper than long division). */
  private void putInt(int v) {
    int n = 0;
    do {
      int q = v / 10;
      digits[n++] = (byte) ('0' + (v - q * 10));
      v = q;
    } while (v > 0);
    while (n > 0) {
      bytes[length++] = digits[--n];
    }
  }

  /** {@code v} with six decimals, like Python's {@code f"{v:.6f}"} and Anserini's %.6f. */
  void putScore(double v) {
    if (!Double.isFinite(v) || Math.abs(v) >= 1e12) {
      put(String.format(Locale.ROOT, "%.6f", v).getBytes(StandardCharsets.UTF_8));
      return;
    }
    long scaled = Math.round(Math.abs(v) * 1e6);
    if (v < 0) {
      put((byte) '-');
    }
    putLong(scaled / 1000000);
    put((byte) '.');
    int frac = (int) (scaled % 1000000);
    ensure(6);
    if (frac == 0) {
      System.arraycopy(ZEROS, 0, bytes, length, 6);
      length += 6;
      return;
    }
    for (int i = 5; i >= 0; i--) {
      int q = frac / 10;
      bytes[length + i] = (byte) ('0' + (frac - q * 10));
      frac = q;
    }
    length += 6;
  }
}
