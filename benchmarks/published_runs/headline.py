"""The estimator and the time model scored as a stranger would: leave one source out.

    python -m benchmarks.published_runs.headline [--frozen | --all] [--before] [--json FILE]
                                                 [--write-band]

Cases: the shared development set and the project's additions from new sources
(`evidence.py`: dev + tune by default; `--frozen` scores the frozen half alone, which is
reported once). Memory is scored twice: with the mechanisms each case's prose states
(`stated`) and with the stack's defaults alone (`defaults`: what a user who names the stack
gets). No memory constant is fitted to published runs (the CUDA context and the allocator
margin come from outside the set: tools/job/defaults.py), so its leave-one-source-out figure
is its plain figure. Time: `loso.time_scores` with the fitted constants of
`tools.ranking.time.fitted`; `--before` instead fits the constants the time model of
2026-12-01 fitted to the development sources (`BEFORE_FITTED`), to show what that practice
gives on sources it did not see. Every summary prints per origin, source, stack, GPU
generation and method.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from benchmarks.published_runs.cases import PublishedCase
from benchmarks.published_runs.evidence import Origin, Tagged, evidence
from benchmarks.published_runs.loso import Scored, time_scores, within
from benchmarks.published_runs.memory import CaseResult, Mode, run_cases, write_band
from tools.errors import UnknownNameError
from tools.gpus import lookup_gpu
from tools.ranking.time.fitted import FITTED, Fitted, RunTraits

GROUPS = ("origin", "source", "stack", "generation", "method")


def _is(arch: str, *precisions: str) -> Callable[[RunTraits], bool]:
    return lambda t: t.architecture == arch and (not precisions or t.precision in precisions)


# What tools/ranking/time/assumptions.py of 2026-12-01 says it set from the development runs.
BEFORE_FITTED: tuple[Fitted, ...] = (
    Fitted("gemm_efficiency.Hopper", 0.3, 0.9, _is("Hopper", "bf16", "bf16-true", "fp16"),
           "Hopper GEMM share: the development optimum"),
    Fitted("gemm_efficiency.Ampere", 0.4, 0.9, _is("Ampere"), "Ampere GEMM share: llm-foundry"),
    Fitted("attention_efficiency.Hopper", 0.05, 0.6, _is("Hopper"),
           "H100 attention: torchtitan's long-context table"),
    Fitted("fp8_gemm_efficiency.Hopper", 0.2, 0.8, _is("Hopper", "fp8"), "FP8 share: speedups"),
    Fitted("qlora_dequant_efficiency", 0.1, 1.0, lambda t: t.method == "qlora",
           "back-solved from LitGPT's QLoRA row"),
)  # fmt: skip


# China-market export variants of the same chips (the same architecture, capped links).
_EXPORT_VARIANTS = {"A800": "A100-80GB-SXM", "H800": "H100-SXM", "H20": "H100-SXM"}


def generation_of(gpu: str) -> str:
    """The GPU's architecture from a case's GPU name ('H100-96GB-HBM2e', 'RTX4090-24GB',
    'H100 (8x, memory variant not stated)', 'A800-80GB')."""
    first = re.split(r"[\s(]", gpu.strip(), maxsplit=1)[0]
    chip = first.split("-")[0]
    names = (gpu, first, chip, "-".join(first.split("-")[:2]), _EXPORT_VARIANTS.get(chip, ""))
    for name in names:
        if not name:
            continue
        try:
            return lookup_gpu(name).architecture
        except UnknownNameError:
            continue
    return "unknown"


def memory_scores(cases: Sequence[Tagged], mode: Mode) -> list[Scored]:
    """Every memory case under `mode`; no fitted constant, so `loso` equals `ratio`."""
    published = [PublishedCase.model_validate(t.raw) for t in cases]
    by_id = {t.id: t for t in cases}
    return [_scored(r, by_id[r.id]) for r in run_cases(published, mode)]


def _scored(r: CaseResult, tagged: Tagged) -> Scored:
    decision = None if r.ratio is not None else _fit_ok(r)
    return Scored(
        id=r.id, origin=tagged.origin, source=tagged.source, stack=r.stack, method=r.method,
        generation=generation_of(r.gpu), gpu=r.gpu, quality="ok", ratio=r.ratio, loso=r.ratio,
        ok=decision if decision is not None else not r.rejected, outcome=r.outcome,
        tight=r.tight,
    )  # fmt: skip


def _fit_ok(r: CaseResult) -> bool | None:
    if r.outcome == "oom":
        return bool(r.oom_predicted)
    return not r.rejected


def summary_line(rows: Sequence[Scored], bands: tuple[float, float]) -> str:
    measured = [r for r in rows if r.loso is not None]
    if not measured:
        return "no figures"
    ratios = [r.loso for r in measured if r.loso is not None]
    low, high = bands
    return (
        f"{len(measured)} | {within(measured, low):.0%} | {within(measured, high):.0%} | "
        f"{statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f}"
    )


def table(rows: Sequence[Scored], bands: tuple[float, float]) -> list[str]:
    """One Markdown table: all, then each group of GROUPS."""
    low, high = (f"±{b:.0%}" for b in bands)
    lines = [f"| group | figures | within {low} | within {high} | median | range |",
             "|---|---:|---:|---:|---:|---|", f"| all | {summary_line(rows, bands)} |"]  # fmt: skip
    for key in GROUPS:
        for value in sorted({getattr(r, key) for r in rows}):
            group = [r for r in rows if getattr(r, key) == value]
            if any(r.loso is not None for r in group):
                lines.append(f"| {key} {value} | {summary_line(group, bands)} |")
    return lines


def fit_checks(rows: Sequence[Scored]) -> str:
    ran = [r for r in rows if r.outcome == "ran"]
    rejected = [r.id for r in ran if r.ok is False]
    tight = [r.id for r in ran if r.tight]
    ooms = [r for r in rows if r.outcome == "oom"]
    missed = [r.id for r in ooms if not r.ok]
    return (
        f"Runs that ran: {len(ran)}, rejected: {len(rejected)}"
        + (f" ({', '.join(rejected)})" if rejected else "")
        + f", tight (kept last, flagged): {len(tight)}"
        + (f" ({', '.join(tight)})" if tight else "")
        + f". Published OOMs: {len(ooms)}, predicted: {len(ooms) - len(missed)}"
        + (f" (missed: {', '.join(missed)})" if missed else "")
        + "."
    )


def report(origins: Sequence[Origin], before: bool) -> tuple[list[str], dict[str, object]]:
    lines: list[str] = []
    payload: dict[str, object] = {}
    memory = evidence("memory", origins)
    for mode in ("stated", "defaults"):
        rows = memory_scores(memory, mode)  # type: ignore[arg-type]
        payload[f"memory_{mode}"] = [asdict(r) for r in rows]
        lines += [f"### Memory, {mode} mechanisms ({', '.join(origins)})", "",
                  *table(rows, (0.10, 0.20)), "", fit_checks(rows), ""]  # fmt: skip
    constants = BEFORE_FITTED if before else FITTED
    rows = time_scores(evidence("throughput", origins), constants)
    payload["time"] = [asdict(r) for r in rows]
    title = "the 2026-12-01 fitted constants" if before else "the shipped fitted constants"
    ok = [r for r in rows if r.quality == "ok"]
    lines += [f"### Time, left one source out with {title} ({', '.join(origins)})", "",
              "Quality ok:", "", *table(ok, (0.25, 0.50)), "",
              f"All runs (suspect included): {summary_line(rows, (0.25, 0.50))}", ""]  # fmt: skip
    return lines, payload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    half = parser.add_mutually_exclusive_group()
    half.add_argument("--frozen", action="store_true", help="score the frozen half alone")
    half.add_argument(
        "--all", action="store_true", help="score everything: dev, tune and frozen together"
    )
    parser.add_argument("--before", action="store_true", help="fit the 2026-12-01 constants")
    parser.add_argument("--json", type=Path, help="write every scored row as JSON here")
    parser.add_argument(
        "--write-band",
        action="store_true",
        help="store the bands shown beside estimates (the dev + tune runs, stack defaults)",
    )
    args = parser.parse_args(argv)
    origins: tuple[Origin, ...] = ("dev", "tune")
    if args.frozen or args.all:
        origins = ("frozen",) if args.frozen else ("dev", "tune", "frozen")
    lines, payload = report(origins, args.before)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    if args.write_band and origins == ("dev", "tune"):
        command = "python -m benchmarks.published_runs.headline --write-band"
        target = write_band(band_rows(), command)
        print(f"wrote {target}", file=sys.stderr)
    return 0


def band_rows() -> list[Scored]:
    """The rows the bands are measured on: dev + tune memory runs, the stack's defaults."""
    return memory_scores(evidence("memory", ("dev", "tune")), "defaults")


if __name__ == "__main__":
    sys.exit(main())
