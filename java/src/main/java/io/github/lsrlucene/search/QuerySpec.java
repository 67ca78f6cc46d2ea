package io.github.lsrlucene.search;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.github.lsrlucene.Json;
import io.github.lsrlucene.QuerySpecException;
import io.github.lsrlucene.query.ClauseGroupQuery;
import io.github.lsrlucene.query.CombinedTermQuery;
import io.github.lsrlucene.query.SignedImpactQuery;
import io.github.lsrlucene.query.WindowQuery;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.index.Term;

/**
 * One line of a query-spec JSONL file:
 * <pre>
 * {"qid": "1", "terms": {"t": w, ...}, "pairs": [["a", "b", w], ...],
 *  "windows": [{"terms": [["t1", q1], ["t2", q2]], "ordered": true, "width": 2, "weight": 1.0}],
 *  "rerank": 1000, "mode": "signed"|"boolean", "field": "contents", "exclude": {"text": "dogs"}}
 * </pre>
 * Only {@code qid} and {@code terms} are required ({@code terms} may be empty when pairs or
 * windows exist). Weights are finite numbers of either sign ({@code mode: boolean} and windows need
 * weights &ge; 0). {@code exclude} (a {@link TextFilter} expression) removes the documents whose text it matches.
 * A {@code text} key is allowed and ignored; other keys are errors.
 */
public final class QuerySpec {
  private static final Set<String> KEYS = Set.of("qid", "terms", "pairs", "windows", "rerank", "mode", "field", "text", "exclude");

  /**
   * Smallest float weight magnitude the float first phase takes as it is: weight &times; impact (&ge; 1) and every sum
   * of them stay normal floats, so float rounding stays relative and the rescoring band holds. A spec with a
   * smaller non-zero weight (one that rounds to zero or to a subnormal float among them) is searched exhaustively
   * ({@link #floatSafe} false): every document its clauses match is scored in double.
   */
  public static final float SAFE_MIN_WEIGHT = 0x1p-100f;

  /** A proximity clause of the spec. */
  public static final class Window {
    public final String[] terms;
    public final float[] weights;
    public final boolean ordered;
    public final int width;
    public final float weight;
    /** q_i &times; window weight as written (double): the exact per-term factors of the window score. */
    public final double[] exactFactors;

    Window(String[] terms, double[] weights, boolean ordered, int width, double weight) {
      this.terms = terms;
      this.weights = new float[weights.length];
      this.exactFactors = new double[weights.length];
      for (int i = 0; i < weights.length; i++) {
        this.weights[i] = (float) weights[i];
        this.exactFactors[i] = weights[i] * weight;
      }
      this.ordered = ordered;
      this.width = width;
      this.weight = (float) weight;
    }

    /** The clause as a {@link WindowQuery} with q_i scaled by the window weight. */
    public WindowQuery toQuery(String field, float maxPayload) {
      float[] q = new float[weights.length];
      for (int i = 0; i < q.length; i++) {
        q[i] = weights[i] * weight;
      }
      return new WindowQuery(field, terms, q, ordered, width, maxPayload);
    }
  }

  public final String qid;
  public final String where;
  public final String field;
  public final boolean booleanMode;
  public final LinkedHashMap<String, Float> terms = new LinkedHashMap<>();
  /** The term weights as written (double), for exact scores; {@link #terms} holds them as float for the query. */
  public final LinkedHashMap<String, Double> exactTerms = new LinkedHashMap<>();
  public final List<SignedImpactQuery.SignedPair> pairs = new ArrayList<>();
  /** Each pair's weight as written (double), parallel to {@link #pairs}. */
  public final List<Double> exactPairWeights = new ArrayList<>();
  public final List<Window> windows = new ArrayList<>();
  public final int rerank;
  /**
   * Whether the float first phase plus double rescoring of a band is exact for this spec: false when a non-zero
   * weight is below {@link #SAFE_MIN_WEIGHT} as a float (its clause then holds a stand-in float weight of the same
   * sign, so the query still matches the same documents, and search scores every match in double).
   */
  public boolean floatSafe = true;
  /**
   * The strict filter of explicit exclusions ({@code "exclude"}: a {@link TextFilter} expression over the index's
   * text sidecar): documents it matches are skipped inside the search, so the top k is filled by the others; null:
   * none.
   */
  public Query exclude;

  private QuerySpec(String qid, String where, String field, boolean booleanMode, int rerank) {
    this.qid = qid;
    this.where = where;
    this.field = field;
    this.booleanMode = booleanMode;
    this.rerank = rerank;
  }

  /** Parses one JSON line; {@code where} (e.g. "file:3") prefixes error messages. */
  public static QuerySpec parse(String json, String where) {
    String src = where == null || where.isEmpty() ? "query spec" : where;
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new QuerySpecException(src + ": malformed JSON (" + e.getOriginalMessage() + ")");
    }
    if (node == null || !node.isObject()) {
      throw new QuerySpecException(src + ": expected a JSON object");
    }
    JsonNode qidNode = node.get("qid");
    if (qidNode == null || !(qidNode.isTextual() || qidNode.isIntegralNumber()) || qidNode.asText().isEmpty()) {
      throw new QuerySpecException(src + ": missing or invalid \"qid\" (a non-empty string)");
    }
    String qid = qidNode.asText();
    if (qid.chars().anyMatch(Character::isWhitespace)) {
      throw new QuerySpecException(src + ": qid '" + qid + "' contains whitespace");
    }
    String at = where == null || where.isEmpty() ? "query " + qid : "query " + qid + " (" + where + ")";
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!KEYS.contains(key)) {
        throw new QuerySpecException(at + ": unknown key \"" + key + "\" (known: " + KEYS + ")");
      }
    }
    String field = "contents";
    if (node.has("field")) {
      if (!node.get("field").isTextual()) {
        throw new QuerySpecException(at + ": \"field\" must be a string");
      }
      field = node.get("field").asText();
    }
    String mode = node.has("mode") ? node.get("mode").asText() : "signed";
    if (!mode.equals("signed") && !mode.equals("boolean")) {
      throw new QuerySpecException(at + ": \"mode\" must be \"signed\" or \"boolean\", got \"" + mode + "\"");
    }
    int rerank = 0;
    if (node.has("rerank")) {
      JsonNode r = node.get("rerank");
      if (!r.isIntegralNumber() || r.asLong() < 0 || r.asLong() > Integer.MAX_VALUE) {
        throw new QuerySpecException(at + ": \"rerank\" must be a non-negative integer");
      }
      rerank = r.asInt();
    }
    QuerySpec spec = new QuerySpec(qid, where, field, mode.equals("boolean"), rerank);
    JsonNode terms = node.get("terms");
    if (terms == null || !terms.isObject()) {
      throw new QuerySpecException(at + ": \"terms\" must be an object of term -> weight");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = terms.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      double w = number(e.getValue(), at + ": weight of term '" + e.getKey() + "'");
      if (e.getKey().isEmpty()) {
        throw new QuerySpecException(at + ": empty term");
      }
      checkText(e.getKey(), at + ": term");
      if (spec.booleanMode && w < 0) {
        throw new QuerySpecException(at + ": mode \"boolean\" needs weights >= 0; term '" + e.getKey() + "' has " + w);
      }
      spec.addTerm(e.getKey(), w);
    }
    JsonNode pairs = node.get("pairs");
    if (pairs != null && !pairs.isNull()) {
      if (!pairs.isArray()) {
        throw new QuerySpecException(at + ": \"pairs\" must be a list of [a, b, weight]");
      }
      for (JsonNode p : pairs) {
        if (!p.isArray() || p.size() != 3 || !p.get(0).isTextual() || !p.get(1).isTextual()) {
          throw new QuerySpecException(at + ": each pair must be [\"a\", \"b\", weight], got " + p);
        }
        double w = number(p.get(2), at + ": weight of pair (" + p.get(0).asText() + ", " + p.get(1).asText() + ")");
        checkText(p.get(0).asText(), at + ": pair term");
        checkText(p.get(1).asText(), at + ": pair term");
        if (spec.booleanMode && w < 0) {
          throw new QuerySpecException(at + ": mode \"boolean\" needs pair weights >= 0, got " + w);
        }
        if (w != 0) {
          spec.pairs.add(new SignedImpactQuery.SignedPair(p.get(0).asText(), p.get(1).asText(), spec.queryWeight(w)));
          spec.exactPairWeights.add(w);
        }
      }
    }
    JsonNode exclude = node.get("exclude");
    if (exclude != null && !exclude.isNull()) {
      spec.exclude = TextFilter.query(exclude, at + ": \"exclude\"");
    }
    JsonNode windows = node.get("windows");
    if (windows != null && !windows.isNull()) {
      if (!windows.isArray()) {
        throw new QuerySpecException(at + ": \"windows\" must be a list of objects");
      }
      for (JsonNode wn : windows) {
        spec.windows.add(window(wn, at, spec));
      }
    }
    if (spec.exactTerms.isEmpty() && spec.pairs.isEmpty() && (spec.windows.isEmpty() || rerank > 0)) {
      throw new QuerySpecException(at + ": no non-zero term or pair weight"
          + (spec.windows.isEmpty() ? "" : " (windows with \"rerank\" need a first-stage query)"));
    }
    return spec;
  }

  /**
   * A plain spec of signed terms given as parallel arrays (no JSON to write and parse for each query):
   * {@code terms[i]} weighs {@code weights[i]}; weights must be finite, repeated terms add up, zero weights drop.
   */
  public static QuerySpec ofTerms(String qid, String field, String[] terms, double[] weights) {
    return ofTerms(qid, field, terms, weights, false);
  }

  /** As {@link #ofTerms(String, String, String[], double[])}, in boolean mode when {@code booleanMode}. */
  public static QuerySpec ofTerms(String qid, String field, String[] terms, double[] weights, boolean booleanMode) {
    if (terms.length != weights.length) {
      throw new QuerySpecException("query " + qid + ": " + terms.length + " terms but " + weights.length + " weights");
    }
    QuerySpec spec = new QuerySpec(qid, "", field, booleanMode, 0);
    LinkedHashMap<String, Double> merged = new LinkedHashMap<>();
    for (int i = 0; i < terms.length; i++) {
      if (terms[i] == null || terms[i].isEmpty()) {
        throw new QuerySpecException("query " + qid + ": empty term");
      }
      checkText(terms[i], "query " + qid + ": term");
      if (!Double.isFinite(weights[i]) || !Float.isFinite((float) weights[i])) {
        throw new QuerySpecException("query " + qid + ": weight of term '" + terms[i] + "' must be finite, got " + weights[i]);
      }
      merged.merge(terms[i], weights[i], Double::sum);
    }
    for (Map.Entry<String, Double> e : merged.entrySet()) {
      spec.addTerm(e.getKey(), e.getValue());
    }
    return spec;
  }

  /** Adds a term of non-zero double weight {@code w} (zero: nothing), its float query weight as {@link #queryWeight}. */
  private void addTerm(String term, double w) {
    if (w != 0) {
      exactTerms.put(term, w);
      terms.put(term, queryWeight(w));
    }
  }

  /**
   * The float weight of a clause of non-zero double weight {@code w} in the first-phase query: {@code (float) w},
   * or, below {@link #SAFE_MIN_WEIGHT}, a stand-in of the same sign (so the clause still matches) that marks the
   * spec for exhaustive exact search.
   */
  private float queryWeight(double w) {
    float f = (float) w;
    if (Math.abs(f) < SAFE_MIN_WEIGHT) {
      floatSafe = false;
      return Math.copySign(SAFE_MIN_WEIGHT, (float) Math.signum(w));
    }
    return f;
  }

  /**
   * Refuses text with a lone UTF-16 surrogate (JSON {@code "\\ud800"}): it has no UTF-8 form, and Lucene would
   * look up U+FFFD instead.
   */
  static void checkText(String text, String what) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new QuerySpecException(what + " '" + text.replace(c, '?') + "' holds a lone surrogate (U+"
            + Integer.toHexString(c).toUpperCase() + " at character " + i + "): not Unicode text");
      }
    }
  }

  /**
   * Parses every non-blank line of a query-spec JSONL file in order, handing each spec to
   * {@code check} before the next line is read; qids must be unique.
   */
  static List<QuerySpec> parseFile(String queriesJsonl, Consumer<QuerySpec> check) throws IOException {
    List<QuerySpec> specs = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    Path in = Paths.get(queriesJsonl);
    if (!Files.exists(in)) {
      throw new NoSuchFileException(queriesJsonl + " (no such query file)");
    }
    try (BufferedReader br = Files.newBufferedReader(in, StandardCharsets.UTF_8)) {
      String line;
      int no = 0;
      while ((line = br.readLine()) != null) {
        no++;
        if (line.isBlank()) {
          continue;
        }
        QuerySpec spec = QuerySpec.parse(line, queriesJsonl + ":" + no);
        if (!seen.add(spec.qid)) {
          throw new QuerySpecException(spec.label() + ": duplicate qid");
        }
        check.accept(spec);
        specs.add(spec);
      }
    }
    return specs;
  }

  private static Window window(JsonNode wn, String at, QuerySpec spec) {
    if (!wn.isObject() || !wn.has("terms") || !wn.get("terms").isArray() || wn.get("terms").size() == 0) {
      throw new QuerySpecException(at + ": each window needs a non-empty \"terms\" list, got " + wn);
    }
    for (Iterator<String> it = wn.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!Set.of("terms", "ordered", "width", "weight").contains(key)) {
        throw new QuerySpecException(at + ": unknown window key \"" + key + "\"");
      }
    }
    JsonNode ts = wn.get("terms");
    String[] terms = new String[ts.size()];
    double[] q = new double[ts.size()];
    for (int i = 0; i < ts.size(); i++) {
      JsonNode t = ts.get(i);
      if (t.isTextual()) {
        terms[i] = t.asText();
        q[i] = 1;
      } else if (t.isArray() && t.size() == 2 && t.get(0).isTextual()) {
        terms[i] = t.get(0).asText();
        q[i] = number(t.get(1), at + ": window weight of '" + terms[i] + "'");
      } else {
        throw new QuerySpecException(at + ": window terms must be [\"t\", weight] or \"t\", got " + t);
      }
      checkText(terms[i], at + ": window term");
      if (q[i] < 0) {
        throw new QuerySpecException(at + ": window weight of '" + terms[i] + "' must be >= 0, got " + q[i]);
      }
    }
    boolean ordered = !wn.has("ordered") || wn.get("ordered").asBoolean(true);
    int width = terms.length;
    if (wn.has("width")) {
      if (!wn.get("width").isIntegralNumber() || wn.get("width").asInt() < 1) {
        throw new QuerySpecException(at + ": window \"width\" must be a positive integer");
      }
      width = wn.get("width").asInt();
    }
    double weight = wn.has("weight") ? number(wn.get("weight"), at + ": window \"weight\"") : 1;
    if (weight < 0) {
      throw new QuerySpecException(at + ": window \"weight\" must be >= 0, got " + weight);
    }
    Window win = new Window(terms, q, ordered, width, weight);
    try {
      new WindowQuery("check", terms, win.weights, ordered, width); // validates distinct terms / width
    } catch (QuerySpecException e) {
      throw new QuerySpecException(at + ": " + e.getMessage());
    }
    for (int i = 0; i < q.length; i++) {
      float product = win.weights[i] * win.weight;
      if (!Float.isFinite(product)) {
        throw new QuerySpecException(at + ": window weight of '" + terms[i] + "' times the window weight must be "
            + "finite as a float, got " + win.exactFactors[i]);
      }
      if (win.exactFactors[i] != 0 && Math.abs(product) < SAFE_MIN_WEIGHT) {
        spec.floatSafe = false;
      }
    }
    return win;
  }

  /** A finite number that a float holds finite (double precision kept: exact scores use it as written). */
  private static double number(JsonNode v, String what) {
    if (v == null || !v.isNumber()) {
      throw new QuerySpecException(what + " must be a number, got " + v);
    }
    double d = v.asDouble();
    if (!Double.isFinite(d) || !Float.isFinite((float) d)) {
      throw new QuerySpecException(what + " must be finite, got " + v.asText());
    }
    return d;
  }

  /** Label for error messages: "query QID (file:line)". */
  public String label() {
    return where == null || where.isEmpty() ? "query " + qid : "query " + qid + " (" + where + ")";
  }

  /** Whether window clauses rescore the first stage's top {@link #rerank} (a two-phase search), not add to it. */
  public boolean reranks() {
    return rerank > 0 && !windows.isEmpty();
  }

  /** The first-stage query: signed (or Anserini-style boolean) impact part, pairs, and windows when not reranking. */
  public Query firstStage(String windowField, float maxPayload) {
    return firstStage(windowField, maxPayload, null);
  }

  /**
   * The first-stage query, signed parts shifted by the collection's max impacts when the index searched is one
   * shard of the collection (null: the index's own; see {@link SignedImpactQuery.Builder#collectionMaxImpacts}).
   */
  public Query firstStage(String windowField, float maxPayload, Map<String, Long> collectionMaxImpacts) {
    boolean windowsHere = rerank == 0 && !windows.isEmpty();
    if (booleanMode) {
      List<Query> clauses = new ArrayList<>();
      for (Map.Entry<String, Float> e : terms.entrySet()) {
        clauses.add(new BoostQuery(new TermQuery(new Term(field, e.getKey())), e.getValue()));
      }
      for (SignedImpactQuery.SignedPair p : pairs) {
        clauses.add(new CombinedTermQuery(field, p.a, p.b, p.w));
      }
      if (windowsHere) {
        for (Window w : windows) {
          clauses.add(w.toQuery(windowField, maxPayload));
        }
      }
      return clauses.isEmpty() ? new MatchNoDocsQuery() : ClauseGroupQuery.disjunction(clauses);
    }
    SignedImpactQuery.Builder b = SignedImpactQuery.builder(field).collectionMaxImpacts(collectionMaxImpacts);
    for (Map.Entry<String, Float> e : terms.entrySet()) {
      b.term(e.getKey(), e.getValue());
    }
    for (SignedImpactQuery.SignedPair p : pairs) {
      b.pair(p.a, p.b, p.w);
    }
    if (windowsHere) {
      for (Window w : windows) {
        b.positive(w.toQuery(windowField, maxPayload));
      }
    }
    return b.build();
  }
}
