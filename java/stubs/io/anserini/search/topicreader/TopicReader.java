package io.anserini.search.topicreader;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.SortedMap;

/** Compile-time stub of Anserini 1.7.1's TopicReader (signatures only; never packaged). */
public abstract class TopicReader<K> {
  protected Path topicFile;

  public TopicReader(Path topicFile) throws IOException {
    this.topicFile = topicFile;
  }

  public SortedMap<K, Map<String, String>> read() throws IOException {
    throw new UnsupportedOperationException("stub");
  }

  public abstract SortedMap<K, Map<String, String>> read(BufferedReader reader) throws IOException;
}
