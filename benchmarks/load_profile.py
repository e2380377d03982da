"""Where a worker's CPU goes: py-spy samples of the thread holding the GIL, filed in buckets.

Used by `benchmarks.load --profile DIR` (py-spy: `pip install py-spy`; it reads the worker's
memory from outside, so the worker is not slowed down much).
"""

from __future__ import annotations

import collections
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

BUCKETS: list[tuple[str, tuple[str, ...]]] = [
    ("web: chat messages from events", ("events_to_chat_messages",)),
    ("assistant: grounding check of the answer", ("assistant/agent/evidence.py",
                                                  "assistant/grounding/")),
    ("assistant: ranking (tools.advice.rank_job)", ("rank_job",)),
    ("assistant: memory estimate (tools.advice.estimate_job)", ("estimate_job",)),
    ("assistant: knowledge search, Python part", ("KnowledgeBase.search",)),
    ("assistant: offline policy and answer text", ("assistant/agent/policy.py",
                                                   "assistant/answers/")),
    ("assistant: turn planning (extraction, intent)", ("plan_turn",)),
    ("assistant: LangChain/LangGraph machinery", ("Assistant._run", "ToolNode", "Turn.__iter__")),
    ("gradio: output files looked for (move_files_to_cache)", ("move_files_to_cache",)),
    ("gradio: outputs postprocessed (Chatbot messages)", ("postprocess_data",)),
    ("gradio: root URLs added to outputs", ("add_root_url",)),
    ("gradio: streaming diffs", ("diff.<locals>", "diff (gradio")),
    ("gradio: queue analytics", ("compute_analytics_summary",)),
    ("gradio: other per-event work (queue, process_api, state)",
     ("gradio/queueing.py", "process_api", "gradio/route_utils.py", "gradio/blocks.py")),
    ("HTTP and SSE transport (uvicorn, starlette, routes)",
     ("uvicorn/", "starlette/", "gradio/routes.py", "fastapi/")),
]  # fmt: skip
OTHER = "other Python (event loop, threads handing work over)"
NATIVE = "outside the GIL (native code: the e5 query embedding, socket I/O)"
PROFILE_RATE = 100


def breakdown(raw: str) -> dict[str, int]:
    """Samples per bucket of a py-spy `--format raw` profile ('frame;frame;... count' lines);
    each stack counts in the first bucket whose marker it contains."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.splitlines():
        stack, _, number = line.rpartition(" ")
        if not stack or not number.isdigit():
            continue
        bucket = next((n for n, keys in BUCKETS if any(k in stack for k in keys)), OTHER)
        counts[bucket] += int(number)
    return dict(counts)


def start_profiler(pid: int, out: Path) -> subprocess.Popen[bytes] | None:
    program = shutil.which("py-spy")
    if program is None:
        print("  --profile: py-spy is not installed (pip install py-spy); no profile")
        return None
    argv = [program, "record", "--pid", str(pid), "--rate", str(PROFILE_RATE), "--gil",
            "--nonblocking", "--format", "raw", "--output", str(out)]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(
    proc: subprocess.Popen[bytes], out: Path, turns: int, cpu_s: float
) -> dict[str, Any]:
    """Worker w1's CPU per turn by bucket (ms) and outside the GIL (native code). Samples count
    time holding the GIL; when that exceeds the CPU the process got (other processes took the
    cores), the buckets are scaled down to the CPU and the native part cannot be told apart."""
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    if not out.exists() or turns == 0:
        return {}
    counts = breakdown(out.read_text(encoding="utf-8"))
    held_s = sum(counts.values()) / PROFILE_RATE
    python_s = min(held_s, cpu_s)
    ms = {
        name: round(1000 * python_s * n / sum(counts.values()) / turns, 1)
        for name, n in sorted(counts.items(), key=lambda item: -item[1])
    }
    ms[NATIVE] = round(1000 * (cpu_s - python_s) / turns, 1)
    return {"ms_per_turn": ms, "gil_held_s": round(held_s, 1), "cpu_s": round(cpu_s, 1),
            "contended": held_s > cpu_s}  # fmt: skip
