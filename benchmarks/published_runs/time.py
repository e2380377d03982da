"""GPU Advisor's time model against published, measured training throughput.

    python -m benchmarks.published_runs.time [--shared ../shared] [--json FILE]

For every case of ../shared/calibration/training_throughput_published.json: the run as
`benchmarks.published_runs.time_cases` reads it, the time model's hours for 1e9 tokens on the
stated GPUs (or GPU-hours for whole runs without a GPU count), and the ratio predicted /
published time (above 1: the model is too slow; below 1: too fast). The QLoRA de-quantization
row is compared as seconds per micro-step. Summaries: share within +-25 % and +-50 %, median and
range of the ratio, by quality (the file marks the torchtune rows 'suspect'), stack, method and
GPU. Run as a module (`-m`): the file name shadows the standard library's `time` otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.published_runs.time_cases import (
    WHOLE_RUN_DAYS,
    ThroughputCase,
    base_params,
    case_assumptions,
    case_gpu,
    case_job,
    case_shape,
    load_cases,
)
from benchmarks.published_runs.time_plans import case_layout, whole_run_goodput
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.step import dequant_seconds, run_time
from tools.ranking.time.work import TrainingWork, training_work

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DATA = Path("calibration") / "training_throughput_published.json"
BILLION = 1e9
BANDS = (0.25, 0.50)


@dataclass(frozen=True)
class Prediction:
    """One case: what was published, what the model says, and the plan it used."""

    id: str
    stack: str
    method: str
    gpu: str
    quality: str
    gpus: int
    plan: str
    published: float
    predicted: float
    unit: str
    utilisation: float | None

    @property
    def ratio(self) -> float:
        return self.predicted / self.published


def predict(case: ThroughputCase, assumptions: ThroughputAssumptions) -> Prediction:
    """The time model's figure for `case` in the unit the case publishes."""
    assumptions = case_assumptions(case, assumptions)
    job, gpu = case_job(case), case_gpu(case)
    total, trainable = base_params(job)
    if case.kind == "minutes_per_1k_iterations":
        work = training_work(job, BILLION, total, trainable, assumptions)
        extra = dequant_seconds(work, gpu, 1, assumptions)
        published = float(case.expected["qlora_extra_seconds_per_micro_step"])
        return _row(case, 1, "single GPU", published, extra, "s per micro-step (QLoRA)", None)
    whole_run = case.gpu.count is None
    tokens = float(case.measured["tokens"]) if whole_run else BILLION
    work = training_work(job, tokens, total, trainable, assumptions)
    count = case.gpu.count or _whole_run_gpus(case, work, assumptions)
    layout, label = case_layout(case, job, count)
    result = run_time(work, gpu, case_shape(case, count), layout, assumptions)
    assert result is not None, f"{case.id}: no peak for {job.precision} on {gpu.id}"
    if whole_run:
        hours = result.hours / whole_run_goodput(case, job, layout, count, result.hours)
        gpu_seconds_per_billion = hours * 3600 * count / tokens * BILLION
        published = float(case.expected["gpu_seconds_per_1e9_tokens"])
        return _row(case, count, label, published, gpu_seconds_per_billion, "GPU-s / 1e9 tokens",
                    result.utilisation)  # fmt: skip
    published = float(case.expected["seconds_per_1e9_tokens"])
    return _row(case, count, label, published, result.hours * 3600, "s / 1e9 tokens",
                result.utilisation)  # fmt: skip


def _row(
    case: ThroughputCase,
    gpus: int,
    plan: str,
    published: float,
    predicted: float,
    unit: str,
    utilisation: float | None,
) -> Prediction:
    return Prediction(case.id, case.stack, case.method, case.gpu.type, case.quality, gpus, plan,
                      published, predicted, unit, utilisation)  # fmt: skip


def _whole_run_gpus(
    case: ThroughputCase, work: TrainingWork, assumptions: ThroughputAssumptions
) -> int:
    """GPUs of the power-of-two node count that trains the run within WHOLE_RUN_DAYS at one
    node's modelled speed (see time_cases)."""
    per_node = case.gpu.gpus_per_node or 8
    job = case_job(case)
    layout, _ = case_layout(case, job, per_node)
    one_node = run_time(work, case_gpu(case), case_shape(case, per_node), layout, assumptions)
    assert one_node is not None
    nodes = max(1, math.ceil(one_node.hours / (WHOLE_RUN_DAYS * 24)))
    return 2 ** math.ceil(math.log2(nodes)) * per_node


def within(rows: Iterable[Prediction], band: float) -> float:
    """Share of rows whose ratio is within 1 +- band."""
    items = list(rows)
    if not items:
        return 0.0
    return sum(1 for r in items if abs(r.ratio - 1.0) <= band) / len(items)


def summary(rows: list[Prediction]) -> str:
    if not rows:
        return "-"
    ratios = [r.ratio for r in rows]
    return (
        f"{len(rows)} cases: {within(rows, 0.25):.0%} within ±25 %, {within(rows, 0.5):.0%}"
        f" within ±50 %; ratio median {statistics.median(ratios):.2f},"
        f" range {min(ratios):.2f}-{max(ratios):.2f}"
    )


def report(rows: list[Prediction]) -> list[str]:
    """Markdown: the per-case table, then the summaries."""
    lines = [
        "| case | stack | method | GPU | GPUs | plan | published | predicted | unit | ratio |"
        " utilisation | quality |",
        "|---|---|---|---|---:|---|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        util = f"{r.utilisation:.2f}" if r.utilisation is not None else "-"
        lines.append(
            f"| `{r.id}` | {r.stack} | {r.method} | {r.gpu} | {r.gpus:,} | {r.plan} |"
            f" {r.published:,.4g} | {r.predicted:,.4g} | {r.unit} | {r.ratio:.2f} | {util} |"
            f" {r.quality} |"
        )
    ok = [r for r in rows if r.quality == "ok"]
    lines += ["", f"- quality ok: {summary(ok)}", f"- all cases: {summary(rows)}"]
    for title, key in (("stack", "stack"), ("method", "method"), ("GPU", "gpu")):
        for value in sorted({getattr(r, key) for r in rows}):
            group = [r for r in rows if getattr(r, key) == value]
            lines.append(f"- {title} {value}: {summary(group)}")
    return lines


def run(shared: Path, assumptions: ThroughputAssumptions | None = None) -> list[Prediction]:
    """Every case's prediction under `assumptions` (default: the model's own)."""
    a = assumptions or ThroughputAssumptions()
    return [predict(case, a) for case in load_cases(shared / DATA)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared folder")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if not (args.shared / DATA).is_file():
        print(f"{args.shared / DATA} not found", file=sys.stderr)
        return 2
    rows = run(args.shared)
    print("\n".join(report(rows)))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
