"""Intent routing and slot extraction on the labelled dev corpus, per intent and per language.

    .venv/bin/python -m benchmarks.chat_intents [--json] [--errors]

Every row of tests/assistant/data/chat_corpus.yaml (own messages in six languages, disjoint from
the router's example bank) is routed with `assistant.extract.route_intent` after the conversation
its `prior` names; the slots it sets (`extract_slots(...).given()`) are compared exactly with the
row's, where the row has them. Latency: extraction + routing per message (embedding included),
warm. Targets: intent accuracy >= 95 % per language, slot exact-match >= 95 %.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "tests/assistant/data/chat_corpus.yaml"
PRIOR_JOB = {"model": "meta-llama/Llama-3.1-8B", "method": "qlora", "tokens": 2e8}


def rows() -> list[dict[str, Any]]:
    """The corpus rows as dicts: lang, prior, intent, text, slots (or None)."""
    data = yaml.safe_load(CORPUS.read_text("utf-8"))["rows"]
    keys = ("lang", "prior", "intent", "text", "slots")
    return [dict(zip(keys, row, strict=True)) for row in data]


def evaluate() -> dict[str, Any]:
    """Route and extract every row; accuracies, confusions, slot matches, latencies (ms)."""
    from assistant.extract import INTENTS, extract_slots, route_intent
    from tools.job import JobSpec

    prior = {"none": JobSpec(), "job": JobSpec.model_validate(PRIOR_JOB)}
    items = rows()
    route_intent("warm up", "en", JobSpec(), extract_slots("warm up", "en"))
    by_lang: dict[str, list[bool]] = defaultdict(list)
    by_intent: dict[str, list[bool]] = defaultdict(list)
    slot_hits: list[bool] = []
    errors, latencies = [], []
    for row in items:
        start = time.perf_counter()
        update = extract_slots(row["text"], row["lang"])
        routed = route_intent(row["text"], row["lang"], prior[row["prior"]], update)
        latencies.append((time.perf_counter() - start) * 1000)
        ok = routed.intent == row["intent"]
        by_lang[row["lang"]].append(ok)
        by_intent[row["intent"]].append(ok)
        if not ok:
            errors.append(f"{row['lang']} {row['intent']} -> {routed.intent}: {row['text']}")
        if row["slots"] is not None:
            got = update.model_dump(mode="json", exclude_none=True, exclude={"clear"})
            hit = got == row["slots"]
            slot_hits.append(hit)
            if not hit:
                errors.append(f"{row['lang']} slots {got} != {row['slots']}: {row['text']}")
    rate = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    ordered = sorted(latencies)
    return {
        "rows": len(items),
        "intent_accuracy": rate([ok for v in by_lang.values() for ok in v]),
        "per_language": {lang: rate(v) for lang, v in sorted(by_lang.items())},
        "per_intent": {i: rate(by_intent[i]) for i in INTENTS},
        "slot_rows": len(slot_hits),
        "slot_exact_match": rate(slot_hits),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--errors", action="store_true", help="list every miss")
    args = parser.parse_args(argv)
    report = evaluate()
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"{report['rows']} rows: intent accuracy {report['intent_accuracy']}, slot exact-match "
          f"{report['slot_exact_match']} over {report['slot_rows']} rows; routing p50 "
          f"{report['p50_ms']} ms, p95 {report['p95_ms']} ms")  # fmt: skip
    print("per language:", report["per_language"])
    print("per intent:", report["per_intent"])
    if args.errors:
        print("\n".join(report["errors"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
