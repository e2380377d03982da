"""Do guidance answers contain the fact that answers the question? (issue 25, pattern 1)

    python -m benchmarks.retrieval.answers [--errors] [--json]

Each question of answers.yaml goes through the real offline assistant (a fresh conversation,
the knowledge index built in a temporary folder, as the CLI runs it). Per question: routed as
guidance, the labelled entry cited, and the answer's text matching the fact's key. Reported per
split (dev: the 1st, 3rd... question of each language; test: the others) and per language.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

QUESTIONS = Path(__file__).with_name("answers.yaml")
CHECKS = ("guidance", "entry", "answer")


def questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    """Every question with its language and split."""
    data: dict[str, list[dict[str, Any]]] = yaml.safe_load(path.read_text("utf-8"))
    return [
        {**item, "lang": lang, "split": "dev" if n % 2 == 0 else "test"}
        for lang, items in data.items()
        for n, item in enumerate(items)
    ]


def score(item: dict[str, Any], result: Any) -> dict[str, bool]:
    """The three checks of one answered question."""
    return {
        "guidance": result.intent == "guidance",
        "entry": any(c.topic == item["topic"] for c in result.citations),
        "answer": re.search(item["key"], result.answer, flags=re.IGNORECASE) is not None,
    }


def run(assistant: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
    from assistant.agent.conversation import Session

    groups: dict[str, list[dict[str, bool]]] = defaultdict(list)
    errors = []
    for item in items:
        result = assistant.respond(item["q"], Session()).result
        checks = score(item, result)
        for group in ("all", item["split"], item["lang"]):
            groups[group].append(checks)
        if not all(checks.values()):
            failed = [k for k, ok in checks.items() if not ok]
            errors.append(f"{item['split']} {item['lang']} {item['q']!r}: {failed}: "
                          f"{result.answer[:160]!r}")  # fmt: skip
    rates = {
        g: {"questions": len(v), **{k: round(sum(c[k] for c in v) / len(v), 3) for k in CHECKS}}
        for g, v in groups.items()
    }
    return {"rates": rates, "errors": errors}


def main(argv: list[str] | None = None) -> int:
    from benchmarks.chat_heldout.run import _offline_assistant

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list every miss")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        report = run(_offline_assistant(Path(tmp)), questions())
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"  {'group':6} {'n':>3}" + "".join(f"{k:>10}" for k in CHECKS))
    for group, r in report["rates"].items():
        print(f"  {group:6} {r['questions']:3}" + "".join(f"{r[k]:10.3f}" for k in CHECKS))
    if args.errors:
        print("\n".join(report["errors"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
