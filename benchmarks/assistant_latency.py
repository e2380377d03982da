"""Offline-policy turn latency: p50/p95 over scripted multi-turn conversations in six languages.

    .venv/bin/python -m benchmarks.assistant_latency [--data-dir DIR] [--rounds N] [--json]

Every turn runs the whole path the CLI and the app use: language choice, slot extraction, the
agent graph with the offline policy, the tools (estimator, ranking over the built-in catalog,
knowledge-base search with the default embedder), answer composition and the grounding check.
The knowledge base is built (or opened) and every conversation is run once before timing, so
the figures are warm. Target: p50 <= 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

# Each conversation: a job, amendments, a guidance or mixed question. 6 languages x 2 x 5 = 60.
# The scenario tests script the same conversations and check every turn's state and tools.
CONVERSATIONS_FILE = Path(__file__).resolve().parents[1] / "tests/assistant/data/conversations.yaml"


def load_conversations() -> dict[str, list[list[str]]]:
    """Per language, the scripted conversations (lists of user messages)."""
    data: dict[str, list[list[str]]] = yaml.safe_load(CONVERSATIONS_FILE.read_text("utf-8"))
    return data


TARGET_P50_MS = 100.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _summary(ms: list[float], cpu_ms: list[float]) -> dict[str, float]:
    return {
        "turns": len(ms),
        "p50_ms": round(_percentile(ms, 0.5), 1),
        "p95_ms": round(_percentile(ms, 0.95), 1),
        "mean_ms": round(statistics.fmean(ms), 1),
        "max_ms": round(max(ms), 1),
        "cpu_p50_ms": round(_percentile(cpu_ms, 0.5), 1),
        "cpu_p95_ms": round(_percentile(cpu_ms, 0.95), 1),
    }


def run(data_dir: Path, rounds: int) -> dict[str, object]:
    """Warm up, then time every scripted turn `rounds` times; latencies in milliseconds."""
    from assistant.agent.conversation import Assistant, Session
    from assistant.settings import Settings

    t0 = time.perf_counter()
    assistant = Assistant(Settings(data_dir=data_dir, llm=None))
    assistant.warm_up()
    warm_up_s = time.perf_counter() - t0
    conversations_by_lang = load_conversations()
    for conversations in conversations_by_lang.values():
        for script in conversations:
            session = Session()
            for message in script:
                assistant.respond(message, session).result  # noqa: B018
    wall: dict[str, list[float]] = {lang: [] for lang in conversations_by_lang}
    cpu: dict[str, list[float]] = {lang: [] for lang in conversations_by_lang}
    ungrounded = 0
    for _ in range(rounds):
        for lang, conversations in conversations_by_lang.items():
            for script in conversations:
                session = Session()
                for message in script:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    result = assistant.respond(message, session).result
                    wall[lang].append((time.perf_counter() - start) * 1000)
                    cpu[lang].append((time.process_time() - start_cpu) * 1000)
                    ungrounded += not result.grounded
    return {
        "overall": _summary(
            [ms for v in wall.values() for ms in v], [ms for v in cpu.values() for ms in v]
        ),
        "per_language": {lang: _summary(wall[lang], cpu[lang]) for lang in conversations_by_lang},
        "ungrounded_turns": ungrounded,
        "warm_up_s": round(warm_up_s, 1),
        "target_p50_ms": TARGET_P50_MS,
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the knowledge index lives (default: a temporary folder)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="timed passes over the script")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        report = run(args.data_dir or Path(tmp), args.rounds)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    overall = report["overall"]
    assert isinstance(overall, dict)
    print(
        f"offline-policy turn latency over {overall['turns']} turns (warm): "
        f"p50 {overall['p50_ms']} ms, p95 {overall['p95_ms']} ms, max {overall['max_ms']} ms; "
        f"CPU p50 {overall['cpu_p50_ms']} ms, p95 {overall['cpu_p95_ms']} ms "
        f"(target p50 <= {TARGET_P50_MS:g} ms)"
    )
    for lang, row in report["per_language"].items():  # type: ignore[attr-defined]
        print(
            f"  {lang}: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms; "
            f"CPU p50 {row['cpu_p50_ms']} ms"
        )
    print(f"ungrounded answers: {report['ungrounded_turns']}; warm-up {report['warm_up_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
