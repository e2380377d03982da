"""Does the knowledge base cover a question? The calibration of `KnowledgeBase.support` (issue 25).

    python -m benchmarks.retrieval.scope [--json]

`support` is the idf-weighted share of a question's terms that one chunk holds
(`LanguageBM25.coverage`). The router leans to guidance above `SUPPORTED_AT` and to out of scope
below `UNSUPPORTED_AT` (assistant/extract/routing/router.py). Both are chosen on the dev
questions: in scope, the knowledge questions of benchmarks/retrieval/queries.yaml and the
guidance rows of the dev chat corpus and the routing bank; out of scope, the out-of-scope rows
of both. They are checked on questions they were not chosen on: in scope, the retrieval sets
heldout.yaml and fresh.yaml; out of scope and in scope, the guidance and out-of-scope turns of
the chat held-out sets conversations.yaml and fresh.yaml. Reported per set: the share of each
kind below, between and above the two thresholds, and the precision and recall of "below" as
out of scope.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
SUPPORTED = ("en", "nl", "fr", "tr", "de", "es")


def _retrieval(name: str) -> list[tuple[str, str]]:
    data = yaml.safe_load((HERE / name).read_text("utf-8"))
    return [(lang, item["q"]) for lang, items in data.items() if lang in SUPPORTED
            for item in items]  # fmt: skip


def dev_questions() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(in scope, out of scope) questions the thresholds are chosen on."""
    from assistant.extract.routing.bank import examples
    from benchmarks.chat_intents import rows

    inside = _retrieval("queries.yaml")
    outside: list[tuple[str, str]] = []
    for r in rows():
        if r["intent"] in ("guidance", "out_of_scope") and r["lang"] in SUPPORTED:
            (inside if r["intent"] == "guidance" else outside).append((r["lang"], r["text"]))
    for intent, lang, text in examples():
        if intent in ("guidance", "out_of_scope") and lang in SUPPORTED:
            (inside if intent == "guidance" else outside).append((lang, text))
    return inside, outside


def test_questions() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(in scope, out of scope) questions the thresholds were not chosen on."""
    from benchmarks.chat_heldout.run import CONVERSATIONS, FRESH, conversations

    inside = _retrieval("heldout.yaml") + _retrieval("fresh.yaml")
    outside: list[tuple[str, str]] = []
    for path in (CONVERSATIONS, FRESH):
        for conv in conversations(path):
            if conv["lang"] not in SUPPORTED:
                continue
            for turn in conv["turns"]:
                if turn["intent"] == "guidance":
                    inside.append((conv["lang"], turn["text"]))
                elif turn["intent"] == "out_of_scope":
                    outside.append((conv["lang"], turn["text"]))
    return inside, outside


def bands(kb: Any, questions: list[tuple[str, str]], low: float, high: float) -> dict[str, int]:
    """How many of `questions` score below `low`, between, and at or above `high`."""
    out = {"below": 0, "between": 0, "above": 0}
    for lang, text in questions:
        value = kb.support(text, lang)
        out["below" if value < low else "above" if value >= high else "between"] += 1
    return out


def report(kb: Any, low: float, high: float) -> dict[str, Any]:
    result: dict[str, Any] = {"unsupported_at": low, "supported_at": high}
    for name, (inside, outside) in (("dev", dev_questions()), ("test", test_questions())):
        ins, outs = bands(kb, inside, low, high), bands(kb, outside, low, high)
        flagged = ins["below"] + outs["below"]
        result[name] = {
            "in_scope": ins,
            "out_of_scope": outs,
            "out_of_scope_precision": round(outs["below"] / flagged, 3) if flagged else 1.0,
            "out_of_scope_recall": round(outs["below"] / len(outside), 3) if outside else 1.0,
            "in_scope_above": round(ins["above"] / len(inside), 3) if inside else 1.0,
        }
    return result


def main(argv: list[str] | None = None) -> int:
    from assistant.extract.routing.router import SUPPORTED_AT, UNSUPPORTED_AT
    from knowledge.base import KnowledgeBase
    from knowledge.config import KnowledgeConfig

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(KnowledgeConfig(data_dir=Path(tmp), retrieval="bm25"))
        kb.build()
        result = report(kb, UNSUPPORTED_AT, SUPPORTED_AT)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"thresholds: out of scope below {UNSUPPORTED_AT}, covered at {SUPPORTED_AT} or more")
    for name in ("dev", "test"):
        r = result[name]
        print(f"  {name}: in scope {r['in_scope']}, out of scope {r['out_of_scope']}; "
              f"'below' as out of scope: precision {r['out_of_scope_precision']}, recall "
              f"{r['out_of_scope_recall']}; in scope covered {r['in_scope_above']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
