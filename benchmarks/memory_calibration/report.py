"""Markdown tables of calibration results, for benchmarks/README.md.

    python -m benchmarks.memory_calibration.report [RESULTS.jsonl ...] [--update-readme]

Prints (or writes between the `memory-calibration` markers of benchmarks/README.md) one row per
case: measured peak, our estimate, Accelerate's and DeepSpeed's figures, and their errors.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.memory_calibration.compare import CaseResult
from benchmarks.memory_calibration.run import load_results

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
BEGIN, END = "<!-- memory-calibration:begin -->", "<!-- memory-calibration:end -->"
MIB = 2**20


def _signed(fraction: float) -> str:
    """'+1.2%'; a rounded zero shows as '0.0%', never '-0.0%'."""
    text = f"{fraction:+.1%}"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def _pct(estimated: int, measured: int) -> str:
    return _signed((estimated - measured) / measured)


def _worst_part(result: CaseResult) -> str:
    errors = {k: v for k, v in result.category_errors.items() if v is not None}
    if not errors:
        return "-"
    name = max(errors, key=lambda k: abs(errors[k] or 0.0))
    worst = errors[name] or 0.0
    return "all 0.0%" if abs(worst) < 0.0005 else f"{name} {_signed(worst)}"


def table(results: Sequence[CaseResult]) -> str:
    """One row per case."""
    rows = [
        "| case | peak at | measured MiB | ours MiB | error | worst part | Accelerate MiB "
        "| error | DeepSpeed states MiB | error |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        m = r.measured_peak
        rows.append(
            f"| `{r.id}` | {r.measured.peak_phase} | {m / MIB:.1f} | {r.estimated_peak / MIB:.1f} "
            f"| {_pct(r.estimated_peak, m)} | {_worst_part(r)} | {r.accelerate_peak / MIB:.1f} "
            f"| {_pct(r.accelerate_peak, m)} | {r.deepspeed_model_states / MIB:.1f} "
            f"| {_pct(r.deepspeed_model_states, m)} |"
        )
    return "\n".join(rows)


def summary(results: Sequence[CaseResult]) -> str:
    """Mean and worst absolute error of each calculator."""

    def stats(values: list[float]) -> str:
        return f"mean {statistics.fmean(values):.1%}, worst {max(values):.1%}"

    ours = [abs(r.error) for r in results]
    acc = [abs(r.accelerate_peak - r.measured_peak) / r.measured_peak for r in results]
    ds = [abs(r.deepspeed_model_states - r.measured_peak) / r.measured_peak for r in results]
    inside = sum(r.within_bounds for r in results)
    return (
        f"{len(results)} cases, {inside} within the bounds (total ±10 %, parts ±15 %). "
        f"Absolute error of the peak: ours {stats(ours)}; Accelerate {stats(acc)}; "
        f"DeepSpeed model states {stats(ds)}."
    )


def cuda_overheads(results: Sequence[CaseResult]) -> str:
    """What the CUDA cases say about the fragmentation and context defaults ('' without any)."""
    cuda = [r for r in results if r.measured.cuda_reserved is not None]
    if not cuda:
        return ""
    frag = [(r.measured.cuda_reserved or 0) / r.measured.peak.total - 1 for r in cuda]
    outside = [(r.measured.cuda_outside_allocator or 0) / MIB for r in cuda]
    return (
        f"CUDA ({len(cuda)} cases): peak reserved / peak allocated - 1 = median "
        f"{statistics.median(frag):.1%}, max {max(frag):.1%} (the fragmentation default is "
        f"10 %); memory in use outside the allocator (context, kernels, libraries): median "
        f"{statistics.median(outside):.0f} MiB, max {max(outside):.0f} MiB (default 1024 MiB)."
    )


def render(results: Sequence[CaseResult]) -> str:
    cuda = cuda_overheads(results)
    extra = f"\n\n{cuda}" if cuda else ""
    return f"{summary(results)}{extra}\n\n{table(results)}\n"


def update_readme(text: str, readme: Path = README) -> None:
    """Replace what stands between the markers in benchmarks/README.md."""
    content = readme.read_text(encoding="utf-8")
    if BEGIN not in content or END not in content:
        raise SystemExit(f"{readme} has no {BEGIN} ... {END} block")
    head, rest = content.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_calibration.report")
    parser.add_argument("results", nargs="*", type=Path, default=[HERE / "results/cpu.jsonl"])
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args(argv)
    results = [r for path in args.results for r in load_results(path)]
    text = render(results)
    if args.update_readme:
        update_readme(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
