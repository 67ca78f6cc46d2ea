package io.anserini.search.topicreader;

import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.search.AnseriniSpecs;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.SortedMap;

/**
 * Anserini hook ({@code SearchCollection -topicReader QuerySpec}): a query-spec JSONL file, one topic
 * per line, keyed by qid, the whole line as the "title" that {@code QuerySpecQueryGenerator} parses.
 * A bad line is reported on one {@code error:} line naming file:line (Anserini replaces the exception
 * of a topic reader by its own "Unable to load topic reader" message).
 */
public class QuerySpecTopicReader extends TopicReader<String> {
  public QuerySpecTopicReader(Path topicFile) throws IOException {
    super(topicFile);
  }

  @Override
  public SortedMap<String, Map<String, String>> read(BufferedReader reader) throws IOException {
    try {
      return AnseriniSpecs.readTopics(reader, String.valueOf(topicFile));
    } catch (QuerySpecException e) {
      System.err.println("error: " + e.getMessage());
      throw e;
    }
  }
}
