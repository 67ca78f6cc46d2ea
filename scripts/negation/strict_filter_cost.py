"""What the strict filter of explicit exclusions costs on a judged collection: the text field's size and build time
beside the impact index's, and search time with and without an exclusion, measured in one interleaved run.

``python -m scripts.negation.strict_filter_cost --vectors VECTORS --topics TOPICS --word frequency --work DIR``
(NPL: the vectors of ``lsr-lucene encode --corpus ../shared/data/npl/corpus.jsonl``). Prints one Markdown table.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import torch

    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.index.impact import build_impact_index, index_size
    from lsr_lucene.index.text_field import TEXT_DIR, build_text_field
    from lsr_lucene.io.topics import read_topics

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--topics", required=True)
    ap.add_argument("--word", default="frequency", help="the word every topic excludes (-WORD)")
    ap.add_argument("--work", required=True, help="scratch folder (the index is built there)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    index = Path(args.work) / "index"
    started = time.perf_counter()
    build_impact_index(args.vectors, index, threads=2, overwrite=True, text=False)
    index_seconds = time.perf_counter() - started
    text = build_text_field(index)
    topics = read_topics(args.topics)
    plain = parse_topics({q: t.replace("-", " ") for q, t in topics.items()})
    excluded = parse_topics({q: t.replace("-", " ") + f" -{args.word}" for q, t in topics.items()})
    with ComposeSearcher(index, dense="none") as searcher:
        plans = searcher.plans(plain), searcher.plans(excluded)
        for comps, plan in zip((plain, excluded), plans):
            searcher.rank(comps, plan, 1000)  # warm
        seconds = [0.0, 0.0]
        for _ in range(args.repeats):
            for i, (comps, plan) in enumerate(zip((plain, excluded), plans)):
                t = time.perf_counter()
                searcher.rank(comps, plan, 1000)
                seconds[i] += time.perf_counter() - t
        removed = searcher.backend.excluded_count(excluded[0].exclude)
    size = index_size(index)
    print(f"CPU capability {torch.backends.cpu.get_cpu_capability()}; {text['documents']:,} documents\n")
    print("| measure | value |\n|:---|---:|")
    print(f"| impact index (stored vectors included), MB | {(size - text['size_bytes']) / 1e6:.1f} |")
    print(f"| text field ({TEXT_DIR}/), MB | {text['size_bytes'] / 1e6:.1f} |")
    print(f"| impact index build, s | {index_seconds:.1f} |")
    print(f"| text field build, s | {text['seconds']:.1f} |")
    print(f"| documents -{args.word} removes | {removed:,} |")
    print(f"| search time with / without -{args.word} ({len(plain)} topics, k 1000, exact) | "
          f"{seconds[1] / seconds[0]:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
