"""The long-document sweep behind scripts/run_longdocs.sh: every method × number of segments, λ fitted on half
the queries, BM25 baselines on the same documents; ``results`` evaluates the runs and writes the table and plot."""
from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from lsr_lucene import cli_options as opt
from lsr_lucene.encode.cli import add_dtype_arguments
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.longdocs.cli import fit_metric
from lsr_lucene.longdocs.collections import QUERY_MODES, load_collection
from lsr_lucene.longdocs.indexes import AGGREGATIONS, build_aggregate_index, build_segment_index
from lsr_lucene.longdocs.queries import QUERY_COMBINE, Query, encode_queries, quantised_query, split_queries
from scripts.longdocs.results import evaluate_runs, file_label, segment_label, write_results
from lsr_lucene.io.runs import answered as answered_qids, write_run
from lsr_lucene.longdocs.runs import collapse, with_tail
from lsr_lucene.longdocs.sdm_features import (SdmSettings, exact_features, feature_table, read_own_arrays,
                                              soft_features_for)
from lsr_lucene.longdocs.segment import parse_segment_id, within_first
from lsr_lucene.longdocs.segment_search import segment_hits
from lsr_lucene.longdocs.store import STATE, encode_segments_dir, read_segment_vectors, read_segments

SEGMENT_COUNTS = (1, 2, 3, 4, 5, 8)  # swept below the cap ("all"): the 1..5, and 8 for the trend


def write_qrels(qrels: Mapping[str, Mapping[str, int]], qids: Iterable[str], path: str | Path) -> Path:
    """TREC qrels of the given queries only (so trec_eval -c averages over exactly them)."""
    path = Path(path)
    lines = [f"{q} 0 {d} {g}\n" for q in sorted(qids) for d, g in sorted(qrels.get(q, {}).items())]
    write_text_atomic(path, "".join(lines))
    return path


def _segment_ids_by_doc(encoded: str | Path) -> dict[str, list[str]]:
    """Indexed (non-empty) segment ids of each document, in order."""
    out: dict[str, list[str]] = defaultdict(list)
    for seg_id, vector in read_segment_vectors(encoded):
        if vector:
            out[parse_segment_id(seg_id)[0]].append(seg_id)
    return dict(out)


def _truncated_corpus(segments: str | Path, k: int | None, output: Path) -> Path:
    """Documents made of their first k segments (for the BM25 baselines at the same length)."""
    if output.exists():
        return output
    docs: dict[str, list[str]] = defaultdict(list)
    for seg_id, text in read_segments(segments):
        doc_id, number = parse_segment_id(seg_id)
        if k is None or number < k:
            docs[doc_id].append(text)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(output, "".join(json.dumps({"id": d, "title": "", "text": " ".join(t)}, ensure_ascii=False)
                                       + "\n" for d, t in docs.items()))
    return output


def _log(message: str) -> None:
    print(f"[longdocs {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class ExperimentConfig:
    """Everything the sweep needs (the options of ``main``)."""

    collection: str = "fire2017"
    work: str = "work/fire2017"
    output: str = "runs/longdocs"
    data: str | None = None
    topics: str | None = None
    qrels: str | None = None
    query_mode: str = "citations"
    query_combine: str = "auto"
    model: str = "splade-tiny"
    max_tokens: int = 400
    max_segments: int | None = None
    top_k: int = 8
    scale: float = 100
    ngram: int = 2
    width: int = 8
    max_clauses: int | None = None
    depth: int = 1000
    soft_depth: int = 1000
    fit_metric: str = "map"
    threads: int = 2
    dtype: str = "fp32"  # documents' encoder precision (queries: always fp32; lsr_lucene.encode.precision)
    baselines: bool = True
    soft: bool = True
    methods: tuple = ()


class Experiment:
    """The long-document sweep of one collection; every artefact is cached under ``work``."""

    def __init__(self, cfg: ExperimentConfig):
        self.cfg = cfg
        self.work = Path(cfg.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.out = Path(cfg.output)
        self.out.mkdir(parents=True, exist_ok=True)
        self.coll = load_collection(cfg.collection, cfg.query_mode, cfg.data, cfg.topics, cfg.qrels)
        judged = [q for q in self.coll.queries if q in self.coll.qrels]
        if len(judged) < 2:
            raise InputError(f"{cfg.collection}: need at least 2 judged queries to fit λ on half, have {len(judged)}")
        self.train, self.test = split_queries(judged)
        self.qids = sorted(self.coll.queries)
        self.qrels_test = write_qrels(self.coll.qrels, self.test, self.work / "qrels-test.txt")
        cap = cfg.max_segments
        self.cap = cap
        self.ks: list[int | None] = [*(k for k in SEGMENT_COUNTS if cap is None or k < cap), cap]
        self.tag = f"first{cap}" if cap else "all"
        self.runs = self.work / f"runs-{self.tag}"  # SDM candidates and "all" depend on the cap
        self.prefix = self.coll.name if cap is None else f"{self.coll.name}-{self.tag}"  # output file names
        self.encoder = None
        self.results: list[dict] = []
        self.notes: list[str] = [f"queries: {self.coll.note}",
                                 f"split: {len(self.train)} training / {len(self.test)} test queries "
                                 "(sorted ids, alternating); figures are on the test half"]

    # ---- artefacts -----------------------------------------------------------------------------------
    def get_encoder(self):
        if self.encoder is None:
            from lsr_lucene.encode.encoder import SparseEncoder

            self.encoder = SparseEncoder(model=self.cfg.model, max_length=512, threads=self.cfg.threads,
                                         dtype=self.cfg.dtype)
        return self.encoder

    def segments(self) -> Path:
        from lsr_lucene.io.corpus import count_docs, read_corpus
        from lsr_lucene.longdocs.segment import Segmenter, write_segments

        path = self.work / f"segments-{self.cfg.max_tokens}.jsonl"
        if not path.exists():
            _log(f"segmenting {self.coll.corpus} into {path}")
            tokenizer = self.get_encoder().tokenizer
            counts = write_segments(read_corpus(self.coll.corpus), Segmenter(tokenizer, self.cfg.max_tokens), path,
                                    total=count_docs(self.coll.corpus))
            write_text_atomic(path.with_suffix(".counts.json"), json.dumps(counts, indent=2))
        return path

    def encoded(self) -> Path:
        path = self.work / f"encoded-{self.tag}"
        state = path / STATE
        if not (state.exists() and json.loads(state.read_text()).get("complete")):
            reuse = self.smaller_encoding()
            _log(f"encoding segments into {path} (resumable{f', reusing {reuse}' if reuse else ''})")
            info = encode_segments_dir(self.segments(), path, self.get_encoder(), scale=self.cfg.scale,
                                       top_k=self.cfg.top_k if self.cfg.soft else 0, limit=self.cap, reuse=reuse)
            _log(f"encoded: {info}")
        return path

    def smaller_encoding(self) -> Path | None:
        """The complete encoding with the largest smaller cap (its segments need not be encoded again)."""
        found = []
        for state in self.work.glob("encoded-first*/" + STATE):
            info = json.loads(state.read_text())
            limit = info["settings"].get("limit")
            if info.get("complete") and limit and (self.cap is None or limit < self.cap):
                found.append((limit, state.parent))
        return max(found)[1] if found else None

    def segment_index(self) -> Path:
        path = self.work / f"index-segments-{self.tag}"
        if not path.exists():
            _log(f"indexing segments with positions into {path}")
            build_segment_index(self.encoded(), path, threads=self.cfg.threads)
        return path

    def queries(self) -> dict[str, Query]:
        if not hasattr(self, "_queries"):
            from lsr_lucene.encode.precision import QUERY_DTYPE, note_documents_precision

            cache = self.work / f"queries-{self.cfg.query_mode}-{QUERY_DTYPE}.json"  # (older caches: any precision)
            self._queries = encode_queries(self.coll.queries, self.get_encoder(), cache=cache)
            note_documents_precision(self.get_encoder().dtype)
        return self._queries

    def run_path(self, name: str, k: int | None) -> Path:
        return self.runs / f"{name}-k{file_label(k, self.cap)}.run"

    # ---- first stage: segment impact scores ---------------------------------------------------------
    def segment_scores(self, combine: str) -> dict[str, dict[str, float]]:
        from lsr_lucene.index.impact import read_index_metadata

        cache = self.work / f"segment-scores-{self.tag}-{self.cfg.query_mode}-{combine}.json"
        if cache.exists():
            return json.loads(cache.read_text())
        index = self.segment_index()
        hits = read_index_metadata(index).get("indexed", 100000)
        q_int = {q: quantised_query(v, self.cfg.scale, combine) for q, v in self.queries().items()}
        _log(f"impact scores of all segments ({combine}-combined queries)")
        scores = segment_hits(index, q_int, hits=hits, threads=self.cfg.threads)
        write_text_atomic(cache, json.dumps(scores))
        return scores

    def choose_combine(self) -> str:
        from lsr_lucene.io.ranking import ranking as rank
        from lsr_lucene.longdocs.sdm import average_precision

        if self.cfg.query_combine != "auto":
            return self.cfg.query_combine
        best, best_value, values = QUERY_COMBINE[0], -1.0, {}  # an AP is >= 0: the first one is replaced
        for combine in QUERY_COMBINE:
            scores = self.segment_scores(combine)
            value = sum(average_precision(rank(collapse(scores.get(q, {}), 1)), self.coll.qrels[q])
                        for q in self.train) / len(self.train)
            values[combine] = round(value, 4)
            if value > best_value:
                best, best_value = combine, value
        self.notes.append(f"query passages combined by {best} (training MAP of score-max@1: {values})")
        return best

    # ---- methods ---------------------------------------------------------------------------------------
    def score_max(self, seg_scores, k) -> dict[str, dict[str, float]]:
        return {q: collapse(seg_scores.get(q, {}), k) for q in self.qids}

    def aggregation_runs(self, combine: str) -> None:
        from lsr_lucene.search.impact import plain_specs, run_specs

        q_int = {q: quantised_query(v, self.cfg.scale, combine) for q, v in self.queries().items()}
        first_run = self.run_path("first", None)
        for method in AGGREGATIONS:
            for k in ([None] if method == "first" else self.ks):
                if method != "first" and k == 1:
                    continue  # rep-*@1 is the first segment
                run = first_run if method == "first" else self.run_path(method, k)
                if run.exists():
                    continue
                index = self.work / ("index-first" if method == "first" else
                                     f"index-{method}-k{file_label(k, self.cap)}")
                if not index.exists():
                    _log(f"indexing {method} of the first {segment_label(k, self.cap)} segments")
                    build_aggregate_index(self.encoded(), method, k, index, threads=self.cfg.threads)
                run_specs(index, plain_specs(q_int), run, hits=1000, threads=self.cfg.threads, tag=method)

    def candidates(self, seg_scores, depth: int) -> dict[str, set[str]]:
        """Union over the segment counts of each query's top-``depth`` score-max documents."""
        from lsr_lucene.io.ranking import ranking as rank

        out: dict[str, set[str]] = {q: set() for q in self.qids}
        for k in self.ks:
            for q, docs in self.score_max(seg_scores, k).items():
                out[q].update(rank(docs)[:depth])
        return out

    def sdm_features(self, kind: str, seg_scores, combine: str) -> dict[str, dict]:
        """qid -> docid -> segment number -> (T, O, U) for the candidates (cached)."""
        from lsr_lucene.search.spec_searcher import SpecSearcher

        settings = SdmSettings(self.cfg.ngram, self.cfg.width, self.cfg.max_clauses)
        name = (f"features-{kind}-{self.tag}-{self.cfg.query_mode}-{combine}-n{settings.ngram}-w{settings.width}"
                f"-c{settings.max_clauses or 'all'}-d{self.cfg.depth if kind == 'exact' else self.cfg.soft_depth}.json")
        cache = self.work / name
        meta = cache.with_suffix(".meta.json")
        if cache.exists():
            if meta.exists():
                self.notes.append(json.loads(meta.read_text())["note"])
            data = json.loads(cache.read_text())
            return {q: {d: {int(n): tuple(v) for n, v in segs.items()} for d, segs in docs.items()}
                    for q, docs in data.items()}
        by_doc = _segment_ids_by_doc(self.encoded())
        depth = self.cfg.depth if kind == "exact" else self.cfg.soft_depth
        cands = self.candidates(seg_scores, depth)
        norm = self.cfg.scale * self.cfg.scale
        out = {}
        started = time.perf_counter()
        if kind == "exact":
            searcher = SpecSearcher(self.segment_index())
        else:
            from lsr_lucene.longdocs.softsdm import TopKStore

            store = TopKStore(self.encoded() / "soft")
            wanted = {s for q in self.qids for d in cands[q] for s in by_doc.get(d, [])}
            vocab = self.get_encoder().tokenizer.get_vocab()
            tokens = read_own_arrays(self.encoded(), wanted, vocab)
        try:
            from lsr_lucene.progress import progress_bar

            for q in progress_bar(self.qids, desc=f"{kind} SDM features", file=sys.stderr):
                seg_ids = [s for d in sorted(cands[q]) for s in by_doc.get(d, [])]
                if kind == "exact":
                    extra = exact_features(searcher, self.queries()[q], seg_ids, settings)
                else:
                    extra = soft_features_for(store, tokens, self.queries()[q], seg_ids, settings, vocab)
                t_scores = {s: seg_scores.get(q, {}).get(s, 0.0) for s in seg_ids}
                out[q] = feature_table(t_scores, extra, norm)
        finally:
            if kind == "exact":
                searcher.close()
        note = (f"{kind} SDM features of {sum(len(v) for v in cands.values())} query-document candidates "
                f"({sum(len(by_doc.get(d, [])) for q in self.qids for d in cands[q])} query-segment pairs) "
                f"in {time.perf_counter() - started:.0f}s")
        self.notes.append(note)
        write_text_atomic(meta, json.dumps({"note": note}))
        write_text_atomic(cache, json.dumps({q: {d: {str(n): list(v) for n, v in segs.items()}
                                                  for d, segs in docs.items()} for q, docs in out.items()}))
        return out

    def sdm_runs(self, kind: str, seg_scores, combine: str) -> list[dict]:
        """Fit λ per segment count on the training half, write runs; returns the fitted λ rows."""
        from lsr_lucene.io.ranking import ranking as rank
        from lsr_lucene.longdocs.sdm import drop_lambdas, fit_lambdas, save_lambdas, score_documents

        features = self.sdm_features(kind, seg_scores, combine)
        drop_lambdas(self.segment_index(), f"{kind}-sdm/")
        depth = self.cfg.depth if kind == "exact" else self.cfg.soft_depth
        fitted_rows = []
        for k in self.ks:
            top = {q: set(rank(docs)[:depth]) for q, docs in self.score_max(seg_scores, k).items()}
            feats_k = {q: {d: features[q][d] for d in top[q] if d in features.get(q, {})} for q in self.qids}
            for pooling in (("feature", "segment") if kind == "exact" else ("feature",)):
                name = f"{kind}-sdm" + ("" if pooling == "feature" else "-segpool")
                fitted = fit_lambdas({q: feats_k[q] for q in self.train}, self.coll.qrels, k=k, pooling=pooling,
                                     metric=self.cfg.fit_metric)
                fitted.update({"ngram": self.cfg.ngram, "width": self.cfg.width, "query_combine": combine,
                               "train_queries": "sorted judged ids, even positions", "segments_cap": self.cap})
                for label in {"all" if k is None or k == self.cap else str(k), str(k) if k else "all"}:
                    save_lambdas(self.segment_index(), f"{kind}-sdm/{pooling}/k={label}", fitted)
                fitted_rows.append({"method": name, "k": segment_label(k, self.cap), **{
                    x: fitted[x] for x in ("lambda_T", "lambda_O", "lambda_U")},
                    f"train {self.cfg.fit_metric}": fitted[f"train_{self.cfg.fit_metric}"],
                    f"train {self.cfg.fit_metric} (T only)": fitted[f"train_{self.cfg.fit_metric}_unigram_only"]})
                lam = (fitted["lambda_T"], fitted["lambda_O"], fitted["lambda_U"])
                first = self.score_max(seg_scores, k)
                scores = {q: with_tail(score_documents(feats_k[q], lam, k, pooling), first[q]) for q in self.qids}
                write_run(scores, self.run_path(name, k), name, overwrite=True, hits=1000)  # the sweep's files
        return fitted_rows

    def ablation(self, seg_scores, combine: str, grid=((2, 4), (2, 8), (2, 16), (3, 8), (3, 16))) -> None:
        """ExactSDM with other n-gram sizes and window widths at the largest segment count: fitted on the
        training half, nDCG@10 and MAP on the test half (fast metrics, same definitions as trec_eval)."""
        import pandas as pd

        from lsr_lucene.eval.trec import to_markdown
        from lsr_lucene.search.spec_searcher import SpecSearcher
        from lsr_lucene.io.ranking import ranking as rank
        from lsr_lucene.longdocs.sdm import evaluate_lambdas, fit_lambdas

        k = self.ks[-1]
        by_doc = _segment_ids_by_doc(self.encoded())
        rows = []
        with SpecSearcher(self.segment_index()) as searcher:
            for ngram, width in grid:
                settings = SdmSettings(ngram, width, self.cfg.max_clauses)
                features = {}
                for q in self.qids:
                    top = rank(collapse(seg_scores.get(q, {}), k))[:self.cfg.depth]
                    seg_ids = [s for d in top for s in by_doc.get(d, []) if within_first(s, k)]
                    extra = exact_features(searcher, self.queries()[q], seg_ids, settings)
                    features[q] = feature_table({s: seg_scores.get(q, {}).get(s, 0.0) for s in seg_ids}, extra,
                                                self.cfg.scale * self.cfg.scale)
                fitted = fit_lambdas({q: features[q] for q in self.train}, self.coll.qrels, k=k,
                                     metric=self.cfg.fit_metric)
                lam = (fitted["lambda_T"], fitted["lambda_O"], fitted["lambda_U"])
                test = {q: features[q] for q in self.test}
                rows.append({"n-gram": ngram, "width": width, "lambda_O": lam[1], "lambda_U": lam[2],
                             "nDCG@10": evaluate_lambdas(test, self.coll.qrels, lam, k, metric="ndcg@10"),
                             "MAP": evaluate_lambdas(test, self.coll.qrels, lam, k, metric="map")})
        table = pd.DataFrame(rows).set_index(["n-gram", "width"])
        text = (f"# ExactSDM n-gram size and window width on {self.coll.name} ({segment_label(k, self.cap)} segments)\n\n"
                f"λ fitted on the training half ({self.cfg.fit_metric}); nDCG@10 and MAP on the test half.\n\n"
                + to_markdown(table, ".4g"))
        (self.out / f"{self.prefix}-ablation.md").write_text(text)

    def bm25_runs(self) -> None:
        from lsr_lucene.search import bm25

        topics = {q: t for q, t in self.coll.bm25_topics().items() if q in set(self.test)}  # nothing to fit
        for k in self.ks + ["full"]:
            label = "full" if isinstance(k, str) else file_label(k, self.cap)
            runs = {name: self.runs / f"{name}-k{label}.run" for name in ("bm25", "bm25-rm3", "bm25-sdm")}
            if all(p.exists() for p in runs.values()):
                continue
            if isinstance(k, str):  # "full"
                corpus = self.coll.corpus
            else:
                corpus = str(_truncated_corpus(self.segments(), k, self.work / "bm25" / f"corpus-k{label}.jsonl"))
            index = self.work / "bm25" / f"index-k{label}"
            bm25.ensure_bm25_index(corpus, index, threads=self.cfg.threads)
            for name, path in runs.items():
                if not path.exists():
                    _log(f"{name} on documents cut to {label} segments")
                    bm25.bm25_run(index, topics, path, threads=self.cfg.threads, rm3=name == "bm25-rm3",
                                  sdm=name == "bm25-sdm", tag=name)
                    answered = answered_qids(path)
                    if len(answered) < len(topics):
                        self.notes.append(f"{name} at {label} segments answered {len(answered)} of {len(topics)} "
                                          "queries")

    # ---- the sweep ------------------------------------------------------------------------------------
    def run(self) -> dict:
        seg_scores_combine = self.choose_combine()
        seg_scores = self.segment_scores(seg_scores_combine)
        self.runs.mkdir(parents=True, exist_ok=True)
        for k in self.ks:
            write_run(self.score_max(seg_scores, k), self.run_path("score-max", k), "score-max", overwrite=True,
                      hits=1000)
        methods = set(self.cfg.methods) or {"aggregations", "exact", "soft", "baselines", "ablation"}
        if "aggregations" in methods:
            self.aggregation_runs(seg_scores_combine)
        lambdas = []
        if "exact" in methods:
            lambdas += self.sdm_runs("exact", seg_scores, seg_scores_combine)
        if "soft" in methods and self.cfg.soft and self.cfg.top_k > 0:
            lambdas += self.sdm_runs("soft", seg_scores, seg_scores_combine)
        if "baselines" in methods and self.cfg.baselines:
            self.bm25_runs()
        if "ablation" in methods:
            self.ablation(seg_scores, seg_scores_combine)
        results = evaluate_runs(self.runs, self.qrels_test)
        cfg = self.cfg
        notes = self.notes + [
            f"segments of at most {cfg.max_tokens} WordPiece tokens; 'all' is capped at the first {self.cap} segments"
            if self.cap else "all segments",
            f"ExactSDM/SoftSDM: n-gram {cfg.ngram}, unordered width {cfg.width}; rerank the top {cfg.depth} (SoftSDM "
            f"{cfg.soft_depth}) score-max documents; '-segpool' rows pool the combined score over segments instead "
            "of each feature",
            "BM25 rows: Anserini on the same documents cut to the first k segments ('full': uncut)"]
        return write_results(results, lambdas, notes, self.out, self.prefix, self.coll.name, self.ks, self.cap,
                             cfg.max_tokens)


def main(argv: list[str] | None = None) -> int:
    """``python -m scripts.longdocs.experiment``: the sweep into --output (once ``lsr-lucene longdocs experiment``)."""
    parser = opt.Parser(prog="python -m scripts.longdocs.experiment",
                        description="sweep the number of segments for every method; table and plot")
    parser.add_argument("--collection", default="fire2017")
    parser.add_argument("--data", default=None, help="data root holding fire2017/ (default ../shared/data)")
    parser.add_argument("--topics", default=None, help="with a corpus JSONL as --collection")
    parser.add_argument("--qrels", default=None, help="with a corpus JSONL as --collection")
    parser.add_argument("--work", default=None, help="cache directory (default work/<collection>)")
    opt.add_output(parser, "folder where the table and plot go", required=False, default="runs/longdocs")
    parser.add_argument("--query-mode", choices=QUERY_MODES, default="citations")
    parser.add_argument("--query-combine", choices=QUERY_COMBINE + ("auto",), default="auto")
    opt.add_encoder(parser, "splade-tiny", "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_number(parser, "--max-tokens", default=400, help="segment size limit in model tokens")
    parser.add_argument("--max-segments", default="none",
                        help="cap 'all' at the first N segments ('none', the default: every segment)")
    opt.add_number(parser, "--top-k", kind=opt.NON_NEGATIVE_INT, default=8,
                   help="SoftSDM top-k terms per position (0: no SoftSDM)")
    opt.add_number(parser, "--ngram", kind=opt.POSITIVE_INT, default=2)
    opt.add_number(parser, "--width", kind=opt.POSITIVE_INT, default=8)
    opt.add_number(parser, "--max-clauses", kind=opt.POSITIVE_INT, default=None)
    opt.add_number(parser, "--depth", kind=opt.POSITIVE_INT, default=1000,
                   help="ExactSDM reranks this many score-max documents")
    opt.add_number(parser, "--soft-depth", kind=opt.POSITIVE_INT, default=1000,
                        help="SoftSDM reranks this many (the rest keep their score-max order below)")
    parser.add_argument("--fit-metric", type=fit_metric, default="map", metavar="MEASURE",
                        help="measure the λ fit maximises: map or ndcg_cut_10 (eval's names; nDCG@10 too)")
    parser.add_argument("--methods", default="aggregations,exact,soft,baselines,ablation",
                        help="comma list of aggregations, exact, soft, baselines, ablation (n-gram/width grid)")
    opt.add_threads(parser, help="threads of every step")
    add_dtype_arguments(parser)
    args = parser.parse_args(argv)
    cap = None if args.max_segments.lower() in ("none", "all") else int(args.max_segments)
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = set(methods) - {"aggregations", "exact", "soft", "baselines", "ablation"}
    if unknown:
        raise InputError(f"--methods: unknown {sorted(unknown)} (known: aggregations, exact, soft, baselines, "
                         "ablation)")
    name = Path(args.collection).name if Path(args.collection).exists() else args.collection
    cfg = ExperimentConfig(collection=args.collection, work=args.work or f"work/{name}", output=args.output,
                           data=args.data, topics=args.topics, qrels=args.qrels, query_mode=args.query_mode,
                           query_combine=args.query_combine, model=args.model, max_tokens=args.max_tokens,
                           max_segments=cap, top_k=args.top_k, ngram=args.ngram, width=args.width,
                           max_clauses=args.max_clauses, depth=args.depth, soft_depth=args.soft_depth,
                           fit_metric=args.fit_metric, threads=args.threads, dtype=args.dtype, soft=args.top_k > 0,
                           baselines="baselines" in methods, methods=methods)
    out = Experiment(cfg).run()
    print(f"wrote {out['results']}")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
