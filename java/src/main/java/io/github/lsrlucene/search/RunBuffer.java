package io.github.lsrlucene.search;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

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
    put(b, 0, b.length);
  }

  void put(byte[] b, int offset, int n) {
    ensure(n);
    System.arraycopy(b, offset, bytes, length, n);
    length += n;
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

  /**
   * {@code v} with six decimals, byte for byte what Python's {@code '%.6f' % v} prints (lsr_lucene.io.runs):
   * the exact binary value rounded half to even, a minus sign whenever the sign bit is set (also for
   * {@code -0.0} and values that round to zero), {@code inf}/{@code -inf}/{@code nan} for non-finite values.
   */
  void putScore(double v) {
    if (!Double.isFinite(v)) {
      put((Double.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf").getBytes(StandardCharsets.US_ASCII));
      return;
    }
    if (Double.doubleToRawLongBits(v) < 0) {
      put((byte) '-');
    }
    double a = Math.abs(v);
    long scaled = micros(a);
    if (scaled < 0) { // beyond a long: exact decimal expansion
      put(new BigDecimal(a).setScale(6, RoundingMode.HALF_EVEN).toPlainString().getBytes(StandardCharsets.US_ASCII));
      return;
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

  /**
   * {@code a} (finite, non-negative) times 10^6 rounded half to even on its exact binary value, or -1 when that
   * does not fit a long. Fast path: the double product {@code a * 1e6} is within one ulp of the exact one, so
   * when its fraction is further than that from one half its rounding is the exact rounding; otherwise (near a
   * half-way point, or beyond 2^52 where the product has no fraction bits) BigDecimal decides exactly.
   */
  static long micros(double a) {
    double scaled = a * 1e6;
    if (scaled < TWO_52) {
      double floor = Math.floor(scaled);
      double frac = scaled - floor;
      if (Math.abs(frac - 0.5) > 4 * Math.ulp(scaled)) {
        return (long) floor + (frac > 0.5 ? 1 : 0);
      }
    }
    if (a >= 9.2e12) {
      return -1;
    }
    return new BigDecimal(a).setScale(6, RoundingMode.HALF_EVEN).unscaledValue().longValueExact();
  }

  private static final double TWO_52 = 4503599627370496.0;
}
