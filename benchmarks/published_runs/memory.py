"""The memory estimator against published, measured GPU peaks and fit/OOM outcomes.

    python -m benchmarks.published_runs.memory [--file PATH] [--only TEXT] [--json FILE]

(the bands shown beside estimates: `python -m benchmarks.published_runs.headline --write-band`)

Each case of ../shared/calibration/gpu_memory_published.json becomes the job a user would
describe: its `gpu_advisor_flags` (the `gpu-advisor estimate` command line, parsed by the CLI's
own parser), the stack it ran on (`cases.stack_of`) and the mechanisms its description names
(`MECHANISM_WORDS`, e.g. "optimizer_in_bwd=True", "CEWithChunkedOutputLoss"). The estimate is
compared like for like with the measured figure's class (`metric_class`): allocated with
max_memory_allocated, reserved with max_memory_reserved, device with nvidia-smi. A run that ran
is rejected when the ranking leaves it out: the card cannot hold the estimate; it is tight (ranked
after every plan with the margin, flagged) when the card holds the estimate but not the ranking's
10 % margin (`RANKING_MARGIN`); a published OOM is predicted when the estimate exceeds the card.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import date
from math import ceil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from benchmarks.published_runs.cases import (
    ROOT,
    PublishedCase,
    load_cases,
    shared_calibration,
    stack_of,
    write_configs,
)
from tools.job import JobSpec
from tools.job.defaults import MEMORY_MARGIN
from tools.memory import MemoryEstimate
from tools.memory.bands.published_band import BAND_FILE, QUANTILE, UNVALIDATED_QUANTILE

MEMORY_FILE = "gpu_memory_published.json"
GIB = 2**30
RANKING_MARGIN = MEMORY_MARGIN  # tools/ranking: a plan fits when need x 1.1 <= the card's memory
SCORED_KINDS = ("measured_peak", "fit_outcome", "max_fit")
Mode = Literal["stated", "defaults"]
# What a case's own words say about mechanisms its flags cannot express: (field, value, pattern).
# The first matching rule for a field wins; patterns are matched against `PublishedCase.text()`.
MECHANISM_WORDS: tuple[tuple[str, Any, str], ...] = (
    ("loss", "chunked", r"CEWithChunkedOutputLoss"),
    ("loss", "fused-linear", r"LigerFusedLinearCrossEntropy|fused linear|Cut Cross Entropy"
     r"|cut_cross_entropy"),
    ("loss", "chunked-linear", r"LinearCrossEntropyLoss"),
    ("loss", "chunked-16bit", r"chunked_cross_entropy"),
    ("loss", "standard", r"torch\.nn\.CrossEntropyLoss"),
    ("activation_offload", True, r"activation offloading|enable_activation_offloading=True"
     r"|offloaded gradient checkpointing|use_gradient_checkpointing=.?unsloth"),
    ("optimizer_in_backward", True, r"optimizer_in_bwd\s*[=:]\s*True|optimizer_in_bwd \(step"),
    ("frozen_base_dtype", "fp32", r"frozen base stored as fp32|torch_dtype=float32"
     r"|prepare_model_for_kbit_training"),
    ("compile", True, r"torch\.?compile enabled|torch compile enabled|compile=True"),
    ("loop_keeps_output", True, r"keeps the model's output"),
    ("qlora_double_quant", False, r"no double quant"),
    ("qlora_double_quant", True, r"nested quant|double quant"),
)  # fmt: skip
# The stack release a source's runs used, where it is not the current one: what a user of that
# release would say (`--stack-version`), read from the source's date and its own setup, so it
# applies in both modes. Keyed by (repository, file); the reason says how it is known.
SOURCE_RELEASES: dict[tuple[str, str], tuple[str, str]] = {
    ("Lightning-AI/litgpt", "config_hub/finetune/README.md"): (
        "0.4", "rows measured in 2024 (their row commits), when litgpt pinned bitsandbytes 0.42"),
    ("pytorch/torchtune", "README.md"): ("2024", "figures of 2024, before LinearCrossEntropyLoss"),
    ("pytorch/torchtune", "docs/source/tutorials/lora_finetune.rst"): (
        "2024", "a 2024 tutorial, recipes with CEWithChunkedOutputLoss"),
    ("pytorch/torchtune", "docs/source/tutorials/qlora_finetune.rst"): (
        "2024", "a 2024 tutorial, recipes with CEWithChunkedOutputLoss"),
    ("pytorch/torchtitan", "benchmarks/llama3_h100_202412_torchtitan.md"): (
        "0.0.2", "December 2024: torch.compile per block, not the loss"),
    ("pytorch/torchtitan", "docs/performance.md"): ("0.0.2", "the 2024 performance table"),
    ("pytorch/ao", "torchao/float8/README.md"): ("0.0.2", "the README names torchtitan 0.0.2"),
    ("AnswerDotAI/fsdp_qlora", "benchmarks_03_2024.md"): (
        "4.45", "March 2024: transformers before 4.46"),
    ("foundation-model-stack/fms-acceleration", "scripts/benchmarks/refs/a100_80gb.csv"): (
        "4.45", "refs/requirements.txt at the same commit pins transformers 4.45.2"),
    ("foundation-model-stack/fms-acceleration", "scripts/benchmarks/refs/a100_80gb_liger.csv"): (
        "4.45", "inferred: the Liger comparison (pull request 93, November 2024) ran when "
        "refs/requirements.txt pinned transformers 4.45.2 (@0aab2c6f, with regex 2024.11.6)"),
}  # fmt: skip
_TRANSFORMERS_VERSION = re.compile(r"transformers[ =v]*4\.(\d+)")
_BNB_VERSION = re.compile(r"bitsandbytes[ =v]*0\.(\d+)\.(\d+)")
_CONTEXT_MIB = re.compile(r"(\d[\d,]*) MiB CUDA context")


class CaseResult(BaseModel):
    """One case: the estimate in the measured figure's class, and the fit decision."""

    id: str
    kind: str
    stack: str
    method: str
    gpu: str
    metric_class: str
    outcome: str
    capacity: int
    estimate_device: int
    estimate_required: int
    predicted: int  # the estimate in the measured figure's class
    measured: int | None
    ratio: float | None  # predicted / measured
    rejected: bool  # ran, but the ranking would leave it out
    tight: bool  # ran, and the ranking keeps it only as tight
    oom_predicted: bool | None  # for published OOMs: the estimate exceeds the card


def mechanisms_from_text(text: str, unmodelled: Sequence[str] = ()) -> dict[str, Any]:
    """The mechanisms a case's description names (see MECHANISM_WORDS; `unmodelled` is its list
    of what the run used that the flags cannot say), plus the loss of a transformers release
    before 4.46, the 4-bit input retention of bitsandbytes < 0.43.2 and a CUDA context the case
    measured ("incl. the 1343 MiB CUDA context")."""
    found: dict[str, Any] = {}
    for name, value, pattern in MECHANISM_WORDS:
        if name not in found and re.search(pattern, text, flags=re.IGNORECASE):
            found[name] = value
    if any(re.fullmatch(r"torch\.compile", item.strip()) for item in unmodelled):
        found.setdefault("compile", True)  # the case lists compile among what its run used
    version = _TRANSFORMERS_VERSION.search(text)
    if version and int(version.group(1)) < 46:
        found.setdefault("stack_version", "4.45")
    context = _CONTEXT_MIB.search(text)
    if context:  # the case measured its CUDA context
        found["cuda_context_gib"] = int(context.group(1)) / 1024
    bnb = _BNB_VERSION.search(text)
    if bnb:
        found["qlora_keeps_input"] = (int(bnb.group(1)), int(bnb.group(2))) < (43, 2)
    return found


def case_spec(case: PublishedCase, configs: Path, mode: Mode = "stated") -> JobSpec:
    """The job the case describes: its flags and its stack; in the `stated` mode also the
    mechanisms its words name (what the case's prose says the run used), in the `defaults` mode
    only what a user who names the stack gets (the stack's profile for everything else)."""
    from assistant.cli.job_args import add_job_arguments, job_spec

    groups = ("training", "plan")
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_job_arguments(parser, groups)
    flags = [f.replace("{configs}", str(configs)) for f in case.extra("gpu_advisor_flags", [])]
    spec = job_spec(parser.parse_args(flags), groups)
    update: dict[str, Any] = {"stack": spec.stack or stack_of(case)}
    release = SOURCE_RELEASES.get((case.source.get("repo"), case.source.get("path")))
    if spec.stack_version is None and release is not None:
        update["stack_version"] = release[0]
    if mode == "defaults":
        return spec.model_copy(update=update)
    unmodelled = case.extra("unmodelled_by_gpu_advisor") or []
    for name, value in mechanisms_from_text(case.text(), unmodelled).items():
        if getattr(spec, name) is None and _applies(name, spec.method):
            update[name] = value
    return spec.model_copy(update=update)


def _applies(name: str, method: str | None) -> bool:
    if name.startswith("qlora_"):
        return method == "qlora"
    return name != "frozen_base_dtype" or method in ("lora", "qlora")


def predicted_bytes(estimate: MemoryEstimate, metric_class: str) -> int:
    """The estimate as the measured figure counts memory."""
    figures = estimate.figures
    return {
        "allocated": figures.allocated,
        "reserved": figures.reserved,
        "device": figures.device,
    }[metric_class]


def evaluate(case: PublishedCase, configs: Path, mode: Mode = "stated") -> CaseResult:
    """The case's estimate in the measured figure's class, and the fit decisions. A run that
    ran is rejected when the card cannot hold the estimate (the ranking leaves the plan out)
    and, for a measured peak, the estimate is above it; it is tight when the card holds the
    estimate but not with the ranking's margin (the ranking keeps it last, flagged; a
    `max_fit` run, the longest context a card holds, sits at the card's edge by construction
    and is never called tight)."""
    from tools.advice import estimate_job

    spec = case_spec(case, configs, mode)
    _, est = estimate_job(JobSpec.model_validate(spec.model_dump()))
    capacity = round(float(case.extra("gpu_capacity_gib")) * GIB)
    metric_class = str(case.extra("metric_class") or "device")
    measured = case.extra("measured") or None
    predicted = predicted_bytes(est, metric_class)
    outcome = str(case.extra("outcome", "ran"))
    required = est.figures.required
    margin = 0.0 if case.kind == "max_fit" else RANKING_MARGIN
    return CaseResult(
        id=case.id,
        kind=case.kind,
        stack=str(spec.stack),
        method=case.method or "",
        gpu=str(case.extra("gpu_type", "")),
        metric_class=metric_class,
        outcome=outcome,
        capacity=capacity,
        estimate_device=est.figures.device,
        estimate_required=required,
        predicted=predicted,
        measured=int(measured["bytes"]) if measured and case.kind == "measured_peak" else None,
        ratio=predicted / int(measured["bytes"])
        if measured and case.kind == "measured_peak"
        else None,
        rejected=outcome == "ran"
        and required > capacity
        and (case.kind != "measured_peak" or not measured or predicted > int(measured["bytes"])),
        tight=outcome == "ran" and required <= capacity < required * (1 + margin),
        oom_predicted=required > capacity if outcome == "oom" else None,
    )


class Summary(BaseModel):
    """Ratios of a group of measured peaks, like for like."""

    group: str
    cases: int
    median: float
    within_10: float
    within_20: float
    lowest: float
    highest: float


def summarise(group: str, results: Sequence[CaseResult]) -> Summary | None:
    ratios = [r.ratio for r in results if r.ratio is not None]
    if not ratios:
        return None
    return Summary(
        group=group,
        cases=len(ratios),
        median=statistics.median(ratios),
        within_10=sum(abs(x - 1) <= 0.10 for x in ratios) / len(ratios),
        within_20=sum(abs(x - 1) <= 0.20 for x in ratios) / len(ratios),
        lowest=min(ratios),
        highest=max(ratios),
    )


def summaries(results: Sequence[CaseResult]) -> list[Summary]:
    """All cases, then by stack, by method and by GPU."""
    out = [summarise("all", results)]
    for key in ("stack", "method", "gpu"):
        for value in sorted({getattr(r, key) for r in results}):
            out.append(
                summarise(f"{key} {value}", [r for r in results if getattr(r, key) == value])
            )
    return [s for s in out if s is not None]


def band_groups(results: Sequence[Any]) -> list[dict[str, Any]]:
    """Per (stack, method), stack, method and all: the 80th percentile of |ratio - 1| (nearest
    rank), rounded up to a whole percent, with the case count and the median ratio. `results`
    are rows with `stack`, `method` and `ratio` (None: no measured figure)."""
    measured = [r for r in results if r.ratio is not None]
    keys: set[tuple[str | None, str | None]] = {(None, None)}
    for r in measured:
        keys |= {(r.stack, r.method), (r.stack, None), (None, r.method)}
    groups = []
    for stack, method in sorted(keys, key=lambda k: (k[0] or "", k[1] or "")):
        ratios = [
            r.ratio for r in measured
            if r.ratio is not None and stack in (None, r.stack) and method in (None, r.method)
        ]  # fmt: skip
        groups.append({"stack": stack, "method": method, "cases": len(ratios),
                       "band": quantile_band(ratios, QUANTILE),
                       "median_ratio": round(statistics.median(ratios), 4)})  # fmt: skip
    return groups


def quantile_band(ratios: Sequence[float], quantile: float) -> float:
    """The `quantile` of |ratio - 1| (nearest rank), rounded up to a whole percent."""
    errors = sorted(abs(x - 1) for x in ratios)
    rank = max(ceil(quantile * len(errors)) - 1, 0)
    return ceil(round(errors[rank] * 100, 6)) / 100


def write_band(results: Sequence[Any], source: str) -> Path:
    """Store the bands with the package (tools/data/memory_published_band.json)."""
    payload = {
        "rule": f"{QUANTILE:.0%} of published measured peaks within the band, estimate vs "
        "measured like for like (allocated, reserved or device), the stack's defaults alone, "
        "rounded up to 1%; a stack with fewer than 4 measured runs is unvalidated and gets "
        f"the {UNVALIDATED_QUANTILE:.0%} band of all runs",
        "source": source,
        "date": date.today().isoformat(),
        "groups": band_groups(results),
        "unvalidated_band": quantile_band(
            [r.ratio for r in results if r.ratio is not None], UNVALIDATED_QUANTILE
        ),
    }
    target = ROOT / "tools" / BAND_FILE
    target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return target


def run(path: Path, only: str | None = None, mode: Mode = "stated") -> list[CaseResult]:
    """Evaluate every case of the file (those whose id contains `only`)."""
    cases = [c for c in load_cases(path).cases if only is None or only in c.id]
    return run_cases(cases, mode)


def run_cases(cases: Iterable[PublishedCase], mode: Mode = "stated") -> list[CaseResult]:
    """Evaluate every scored case (measured peaks, fit outcomes, longest contexts that fit)."""
    scored = [c for c in cases if c.kind in SCORED_KINDS]
    with tempfile.TemporaryDirectory() as tmp:
        configs = Path(tmp)
        write_configs(scored, configs)
        return [evaluate(case, configs, mode) for case in scored]


def render(results: Sequence[CaseResult]) -> list[str]:
    """A Markdown table per case and the summaries."""
    lines = [
        "| case | stack | class | measured GiB | ours GiB | ratio | card GiB | fits |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        measured = f"{r.measured / GIB:.2f}" if r.measured else r.outcome
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        fits = "REJECTED" if r.rejected else ("OOM missed" if r.oom_predicted is False else "ok")
        lines.append(
            f"| `{r.id}` | {r.stack} | {r.metric_class} | {measured} | "
            f"{r.predicted / GIB:.2f} | {ratio} | {r.capacity / GIB:.1f} | {fits} |"
        )
    lines += ["", "| group | cases | median | within ±10 % | within ±20 % | lowest | highest |"]
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for s in summaries(results):
        lines.append(
            f"| {s.group} | {s.cases} | {s.median:.2f} | {s.within_10:.0%} | {s.within_20:.0%} "
            f"| {s.lowest:.2f} | {s.highest:.2f} |"
        )
    lines += ["", *fit_lines(results)]
    return lines


def fit_lines(results: Iterable[CaseResult]) -> list[str]:
    ran = [r for r in results if r.outcome == "ran"]
    ooms = [r for r in results if r.outcome == "oom"]
    rejected = [r.id for r in ran if r.rejected]
    tight = [r.id for r in ran if r.tight]
    missed = [r.id for r in ooms if not r.oom_predicted]
    return [
        f"Runs that ran: {len(ran)}, rejected (estimate over the card): {len(rejected)}"
        + (f" ({', '.join(rejected)})" if rejected else "")
        + f"; tight (under the {RANKING_MARGIN:.0%} margin, ranked last): {len(tight)}"
        + (f" ({', '.join(tight)})" if tight else ""),
        f"Published OOMs: {len(ooms)}, predicted: {len(ooms) - len(missed)}"
        + (f" (missed: {', '.join(missed)})" if missed else ""),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=shared_calibration() / MEMORY_FILE)
    parser.add_argument("--only", help="cases whose id contains this text")
    parser.add_argument("--json", type=Path, help="write the per-case results as JSON")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"no case file at {args.file}", file=sys.stderr)
        return 2
    results = run(args.file, args.only)
    print("\n".join(render(results)))
    if args.json:
        payload = [r.model_dump() for r in results]
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
