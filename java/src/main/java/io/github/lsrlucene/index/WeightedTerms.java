package io.github.lsrlucene.index;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.TermFrequencyAttribute;

/**
 * One token per term, its impact carried as a custom term frequency: what Anserini indexes from a text
 * that repeats each term weight times, without building or tokenizing that text.
 */
final class WeightedTerms extends TokenStream {
  private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
  private final TermFrequencyAttribute freq = addAttribute(TermFrequencyAttribute.class);
  private final String[] terms;
  private final int[] weights;
  private final int size;
  private int next;

  WeightedTerms(String[] terms, int[] weights, int size) {
    this.terms = terms;
    this.weights = weights;
    this.size = size;
  }

  @Override
  public boolean incrementToken() {
    if (next >= size) {
      return false;
    }
    clearAttributes();
    term.setEmpty().append(terms[next]);
    freq.setTermFrequency(weights[next]);
    next++;
    return true;
  }

  @Override
  public void reset() throws java.io.IOException {
    super.reset();
    next = 0;
  }
}
