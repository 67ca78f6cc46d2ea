package io.github.lsrlucene;

/** A query specification the user can fix (bad weight, unknown field, malformed JSON); the message names the query. */
public class QuerySpecException extends IllegalArgumentException {
  public QuerySpecException(String message) {
    super(message);
  }

  public QuerySpecException(String message, Throwable cause) {
    super(message, cause);
  }
}
