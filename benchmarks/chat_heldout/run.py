"""The held-out conversations through the full offline turn, scored per language and intent.

    python -m benchmarks.chat_heldout [--rounds N] [--json] [--errors] [--against DIR]

Every conversation of conversations.yaml runs turn by turn through the real `Assistant` (offline
policy, built-in catalog, knowledge index built in a temporary folder), exactly as the CLI and
the app run a turn. Per turn: the routed intent against the label, the whole job state after the
turn (`TurnResult.state`) against the label, the answer's shape (every kind of content the turn
`expect`s, judged by structure: `benchmarks.chat_heldout.shapes`), the answer language (the
turn's language, and the language detected in the answer text itself, both against the label),
grounding (`TurnResult.grounded`, the project's grounding check), and the turn's wall and CPU
time. Rates are reported per language and per labelled intent. The
first pass scores and warms; `--rounds` more passes are timed. `--against DIR` runs the same
conversations on another checkout (e.g. main) in a subprocess right after, so both sets of
figures come from the same machine under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

try:
    from benchmarks.chat_heldout.shapes import missing_kinds
except ModuleNotFoundError:  # run as a file on another checkout (--code): this folder's copy
    from shapes import missing_kinds  # type: ignore[import-not-found,no-redef]

CONVERSATIONS = Path(__file__).with_name("conversations.yaml")
FRESH = Path(__file__).with_name("fresh.yaml")  # the second held-out set (2026-12-02)
FROZEN = Path(__file__).with_name("frozen_1207.yaml")  # the third, scored once (2026-12-07)
SUPPORTED = ("en", "nl", "fr", "tr", "de", "es")
TARGETS = {"intent": 0.95, "slots": 0.95, "shape": 0.95, "language": 1.0, "grounded": 1.0,
           "p50_ms": 100.0, "p95_ms": 300.0}  # fmt: skip
RATES = ("intent", "slots", "shape", "language", "grounded", "full")
FOREIGN_WORDS = 5  # a line of this many own words is a fragment worth checking
SURE = 0.8
_MARKUP = re.compile(r"\*\*|\||`|^[-#>]+\s*", re.M)


def conversations(path: Path = CONVERSATIONS) -> list[dict[str, Any]]:
    """The held-out conversations: id, lang, turns (text, intent, state, expect, answer
    language; an unsupported language is answered in English)."""
    data: list[dict[str, Any]] = yaml.safe_load(path.read_text("utf-8"))["conversations"]
    for conv in data:
        default = conv["lang"] if conv["lang"] in SUPPORTED else "en"
        for turn in conv["turns"]:
            turn.setdefault("answer", default)
    return data


def messages(path: Path = CONVERSATIONS) -> list[str]:
    """Every message of a held-out set."""
    return [turn["text"] for conv in conversations(path) for turn in conv["turns"]]


def answer_language(text: str) -> tuple[str, list[str]]:
    """The language of an answer's own words (markup, names, numbers and shared jargon set
    aside, as `assistant.languages` reads a message): the majority over its lines, and the lines
    of `FOREIGN_WORDS` words or more read surely as another of the six languages."""
    from assistant.languages import _own_words
    from knowledge.langid import detect_language

    votes: Counter[str] = Counter()
    found = []
    for line in _MARKUP.sub(" ", text).splitlines():
        words = _own_words(line)
        if len(words) < 2:
            continue
        detected = detect_language(" ".join(words))
        votes[detected.code] += len(words)
        found.append((line, detected, len(words)))
    major = votes.most_common(1)[0][0] if votes else "en"
    foreign = [line.strip() for line, d, n in found if d.code != major and d.code in SUPPORTED
               and n >= FOREIGN_WORDS and d.score >= SURE]  # fmt: skip
    return major, foreign


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def score_turn(turn: dict[str, Any], result: Any) -> dict[str, Any]:
    """One turn's result against its labels: intent, slots, shape, language, grounded."""
    detected, foreign = answer_language(result.answer)
    want = turn["answer"]
    missing = missing_kinds(turn, result)
    checks = {
        "intent": result.intent == turn["intent"],
        "slots": result.state == turn["state"],
        "shape": not missing,
        "language": result.language == want and detected == want and not foreign,
        "grounded": bool(result.grounded),
    }
    return {
        **checks,
        "full": all(checks.values()),  # the turn fully right: every check at once
        "got": {
            "intent": result.intent,
            "state": result.state,
            "language": result.language,
            "detected": detected,
            "foreign": foreign,
            "missing": missing,
        },
    }


def run(assistant: Any, convs: list[dict[str, Any]], rounds: int = 0) -> dict[str, Any]:
    """Score every turn of `convs` once through `assistant` (warming up), then time `rounds`
    passes."""
    from assistant.agent.conversation import Session

    scores: dict[str, list[dict[str, bool]]] = defaultdict(list)
    by_intent: dict[str, list[dict[str, bool]]] = defaultdict(list)
    errors: list[str] = []
    whole: dict[str, list[bool]] = defaultdict(list)  # language -> conversations right end to end
    confusion: Counter[tuple[str, str]] = Counter()  # (labelled intent, routed intent) -> turns
    for conv in convs:
        session = Session()
        right = True
        for turn in conv["turns"]:
            result = assistant.respond(turn["text"], session).result
            score = score_turn(turn, result)
            scores[conv["lang"]].append(score)
            by_intent[turn["intent"]].append(score)
            errors += _errors(conv, turn, score, result.answer)
            right = right and score["full"]
            confusion[(turn["intent"], result.intent)] += 1
        whole[conv["lang"]].append(right)
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        for conv in convs:
            session = Session()
            for turn in conv["turns"]:
                start, start_cpu = time.perf_counter(), time.process_time()
                assistant.respond(turn["text"], session).result  # noqa: B018
                wall[conv["lang"]].append((time.perf_counter() - start) * 1000)
                cpu[conv["lang"]].append((time.process_time() - start_cpu) * 1000)
    report = _report(scores, by_intent, wall, cpu, errors, len(convs))
    report["end_to_end"] = {
        "all": sum(sum(v) for v in whole.values()),
        **{
            lang: f"{sum(v)}/{len(v)}"
            for lang, v in sorted(whole.items(), key=lambda kv: _order(kv[0]))
        },
    }
    report["confusion"] = {f"{want} -> {got}": n for (want, got), n in sorted(confusion.items())}
    report["out_of_scope"] = _precision_recall(confusion, "out_of_scope")
    return report


def _precision_recall(confusion: Counter[tuple[str, str]], intent: str) -> dict[str, float]:
    """Precision and recall of routing to `intent` (1.0 where nothing was routed or labelled)."""
    hit = confusion[(intent, intent)]
    routed = sum(n for (_, got), n in confusion.items() if got == intent)
    labelled = sum(n for (want, _), n in confusion.items() if want == intent)
    return {"precision": round(hit / routed, 3) if routed else 1.0,
            "recall": round(hit / labelled, 3) if labelled else 1.0}  # fmt: skip


def _errors(
    conv: dict[str, Any], turn: dict[str, Any], score: dict[str, Any], answer: str
) -> list[str]:
    got, out = score["got"], []
    where = f"{conv['id']} {turn['text']!r}"
    if not score["intent"]:
        out.append(f"intent {where}: {got['intent']} (want {turn['intent']})")
    if not score["slots"]:
        out.append(f"slots {where}: {got['state']} (want {turn['state']})")
    if not score["shape"]:
        out.append(f"shape {where}: missing {got['missing']}: {answer[:120]!r}")
    if not score["language"]:
        out.append(f"language {where}: turn {got['language']}, answer reads "
                   f"{got['detected']} (want {turn['answer']}), foreign lines {got['foreign']}: "
                   f"{answer[:80]!r}")  # fmt: skip
    if not score["grounded"]:
        out.append(f"ungrounded {where}: {answer[:120]!r}")
    return out


def _rates(items: list[dict[str, Any]]) -> dict[str, float]:
    return {key: round(sum(s[key] for s in items) / len(items), 3) for key in RATES}


def _timing(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(_percentile(wall, 0.5), 1),
        "p95_ms": round(_percentile(wall, 0.95), 1),
        "cpu_p50_ms": round(_percentile(cpu, 0.5), 1),
        "cpu_p95_ms": round(_percentile(cpu, 0.95), 1),
    }


def _report(
    scores: dict[str, list[dict[str, Any]]],
    by_intent: dict[str, list[dict[str, Any]]],
    wall: dict[str, list[float]],
    cpu: dict[str, list[float]],
    errors: list[str],
    count: int,
) -> dict[str, Any]:
    every = [s for items in scores.values() for s in items]
    per_language = {
        lang: {"turns": len(items), **_rates(items), **_timing(wall[lang], cpu[lang])}
        for lang, items in sorted(scores.items(), key=lambda kv: _order(kv[0]))
    }
    return {
        "conversations": count,
        "turns": len(every),
        "overall": {**_rates(every), **_timing([w for v in wall.values() for w in v],
                                               [c for v in cpu.values() for c in v])},
        "per_language": per_language,
        "per_intent": {intent: {"turns": len(items), **_rates(items)}
                       for intent, items in sorted(by_intent.items())},
        "errors": errors,
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 1),
    }  # fmt: skip


def _order(lang: str) -> int:
    langs = (*SUPPORTED, "it", "pt")
    return langs.index(lang) if lang in langs else len(langs)


def _table(name: str, report: dict[str, Any]) -> str:
    head = f"{name}: {report['conversations']} conversations, {report['turns']} turns " \
           f"(load {report['load_average_1m']} on {report['cpu_count']} CPUs)"  # fmt: skip
    cols = "".join(f"{key[:6]:>7}" for key in RATES)
    lines = [head, f"  {'lang':12} {'turns':>5}{cols}  p50ms  p95ms  cpu50  cpu95"]
    rows = [
        ("all", report["overall"] | {"turns": report["turns"]}),
        *report["per_language"].items(),
    ]
    for lang, r in rows:
        rates = "".join(f"{r[key]:7.3f}" for key in RATES)
        lines.append(f"  {lang:12} {r['turns']:5}{rates} {r['p50_ms']:6.1f} {r['p95_ms']:6.1f} "
                     f"{r['cpu_p50_ms']:6.1f} {r['cpu_p95_ms']:6.1f}")  # fmt: skip
    lines.append(f"  {'intent':12} {'turns':>5}{cols}")
    for intent, r in report["per_intent"].items():
        lines.append(f"  {intent:12} {r['turns']:5}" + "".join(f"{r[key]:7.3f}" for key in RATES))
    if "confusion" in report:
        wrong = [f"{pair} {n}" for pair, n in report["confusion"].items()
                 if pair.split(" -> ")[0] != pair.split(" -> ")[1]]  # fmt: skip
        oos = report["out_of_scope"]
        lines.append(f"  out of scope: precision {oos['precision']:.3f}, recall "
                     f"{oos['recall']:.3f}; misrouted (label -> routed, turns): "
                     f"{', '.join(wrong) or 'none'}")  # fmt: skip
    if "end_to_end" in report:
        e2e = report["end_to_end"]
        per = ", ".join(f"{lang} {v}" for lang, v in e2e.items() if lang != "all")
        lines.append(f"  conversations right end to end: {e2e['all']} of "
                     f"{report['conversations']} ({per})")  # fmt: skip
    return "\n".join(lines)


def _against(checkout: Path, rounds: int, path: Path) -> dict[str, Any]:
    """The same run on another checkout's code (this file and the conversations stay ours)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--json", "--code", str(checkout),
               "--rounds", str(rounds), "--conversations", str(path.resolve())]  # fmt: skip
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=True)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _offline_assistant(data_dir: Path) -> Any:
    """The real assistant as the CLI runs it offline: built-in catalog, the knowledge index
    built in `data_dir`, no language model."""
    from assistant.agent.conversation import Assistant
    from assistant.settings import Settings

    assistant = Assistant(Settings(data_dir=data_dir, llm=None))
    assistant.warm_up()
    return assistant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="timed passes after the scored one")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--errors", action="store_true", help="list every miss")
    parser.add_argument("--against", type=Path, help="also run another checkout (e.g. main)")
    parser.add_argument(
        "--conversations",
        type=Path,
        default=CONVERSATIONS,
        help=f"the set to run (default {CONVERSATIONS.name}; also {FRESH.name}, {FROZEN.name})",
    )
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)  # the checkout to import
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        report = run(_offline_assistant(Path(tmp)), conversations(args.conversations), args.rounds)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(_table("this checkout", report))
    if args.errors:
        print("\n".join(report["errors"]))
    if args.against is not None:
        print(
            _table(
                f"against {args.against}", _against(args.against, args.rounds, args.conversations)
            )
        )
    return 0


if __name__ == "__main__":
    if "--code" in sys.argv:  # run as a file on another checkout: import its packages first
        sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])
    sys.exit(main())
