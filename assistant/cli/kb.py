"""`gpu-advisor kb build|search|stats`: the knowledge base from the command line.

gpu-advisor kb build [--source DIR]
gpu-advisor kb search "QUERY" [--lang xx] [--k N] [--json]
gpu-advisor kb stats [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knowledge.base import IndexStats, KnowledgeBase
    from knowledge.retrieval import Passage


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "kb",
        help="build, search and inspect the knowledge base",
        description="The multilingual knowledge base (guides and FAQs) and its search index.",
    )
    actions = parser.add_subparsers(dest="kb_action", metavar="ACTION", required=True)

    build = actions.add_parser("build", help="(re)build the index; progress on stderr")
    build.add_argument(
        "--source",
        type=Path,
        action="append",
        default=None,
        metavar="DIR",
        help="also ingest the .md/.txt files under DIR (repeatable); remembered by later searches",
    )
    build.set_defaults(handler=run_build)

    search = actions.add_parser("search", help="the best passages for a question")
    search.add_argument("query", help="the question, in any language")
    search.add_argument(
        "--lang", default=None, help="answer language (ISO code); default: detected"
    )
    search.add_argument("--k", type=int, default=5, help="number of passages (default 5)")
    search.add_argument("--json", action="store_true", help="JSON list, best first")
    search.set_defaults(handler=run_search)

    stats = actions.add_parser("stats", help="what the index holds and whether it is current")
    stats.add_argument("--json", action="store_true", help="JSON object")
    stats.set_defaults(handler=run_stats)


class _Progress:
    """Chunks embedded / total on stderr: one updating line on a terminal, else every 10%."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            end = "\n" if done == total else ""
            print(f"\rembedding chunks: {done}/{total}", end=end, file=sys.stderr, flush=True)
            return
        tenth = done * 10 // max(total, 1)
        if tenth != self.last_tenth or done == total:
            self.last_tenth = tenth
            print(f"embedding chunks: {done}/{total}", file=sys.stderr, flush=True)


def _knowledge_base(sources: list[Path] | None = None) -> KnowledgeBase:
    from assistant.settings import Settings
    from knowledge.base import KnowledgeBase

    logger = logging.getLogger("knowledge")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    config = Settings().knowledge_config()
    return KnowledgeBase(config, extra_sources=sources, progress=_Progress())


def run_build(args: argparse.Namespace) -> int:
    sources = [p.expanduser().resolve() for p in args.source] if args.source else []
    base = _knowledge_base(sources)
    try:
        stats = base.build()
    finally:
        base.close()
    print(_format_stats(stats))
    return 0


def run_search(args: argparse.Namespace) -> int:
    base = _knowledge_base()
    try:
        passages = base.search(args.query, lang=args.lang, k=args.k)
    finally:
        base.close()
    if args.json:
        print(json.dumps([p.public() for p in passages], ensure_ascii=False, indent=2))
    else:
        print(format_passages(passages))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    base = _knowledge_base()
    try:
        stats = base.stats()
    finally:
        base.close()
    print(stats.model_dump_json(indent=2) if args.json else _format_stats(stats))
    return 0


def format_passages(passages: list[Passage]) -> str:
    """Numbered passages with topic, language, score and source; a note on a language fallback."""
    if not passages:
        return "no passages found"
    blocks = []
    for rank, p in enumerate(passages, start=1):
        head = f"{rank}. {p.title}  [{p.topic or 'file'} · {p.lang} · score {p.score:.4f}]"
        body = textwrap.indent(textwrap.fill(" ".join(p.text.split()), width=96), "   ")
        lines = [head, body, f"   source: {p.source}"]
        if p.lang_fallback:
            lines.append(f"   (no {p.query_lang} version of this topic; shown in {p.lang})")
        if p.lexical_only:
            lines.append("   (keyword search only: the vector store is unavailable)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _format_stats(stats: IndexStats) -> str:
    lines = [f"index: {stats.status}" + (f" ({stats.detail})" if stats.detail else "")]
    lines.append(f"data dir: {stats.data_dir}  store: {stats.store}")
    if stats.embedder_id:
        per_lang = ", ".join(f"{lang} {n}" for lang, n in stats.chunks_per_language.items())
        lines.append(f"embedder: {stats.embedder_id}")
        lines.append(f"chunks: {stats.chunk_count} ({per_lang}); topics: {stats.topic_count}")
        lines.append(f"built: {stats.built_at} in {stats.build_seconds} s")
    if stats.extra_sources:
        lines.append("extra sources: " + ", ".join(stats.extra_sources))
    return "\n".join(lines)
