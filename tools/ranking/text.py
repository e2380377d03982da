"""One-line explanations for ranked and excluded instances (money in USD, memory in GiB)."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING

from tools.catalog.instances import Instance
from tools.ranking.plans import PLAN_LABELS, NoFit
from tools.units import format_gib

if TYPE_CHECKING:
    from tools.ranking.prepare import PreparedJob, Row, ShapeResult


def usd(amount: float) -> str:
    """'$412' from $100 up, '$12.34' below."""
    return f"${amount:,.0f}" if amount >= 100 else f"${amount:,.2f}"


def _gpus(count: int) -> str:
    return f"{count} GPU{'s' if count != 1 else ''}"


def excluded_memory_reason(fit: NoFit, vram_bytes: int, inst: Instance, margin: float) -> str:
    """'needs 84.2 GiB per GPU (ZeRO-3/FSDP on 16 GPUs, 76.5 GiB + 10% margin), has 80.0 GiB'."""
    plan = plan_text(fit.plan, fit.tensor_parallel, fit.pipeline_parallel)
    if fit.host_ram_short:
        return f"{plan} on {_gpus(fit.gpu_count)} needs more host RAM than {inst.ram_gib:g} GiB"
    with_margin = fit.need_per_gpu_bytes * (1 + margin)
    return (
        f"needs {format_gib(with_margin)} per GPU ({plan} on {_gpus(fit.gpu_count)},"
        f" {format_gib(fit.need_per_gpu_bytes)} + {margin:.0%} margin),"
        f" has {format_gib(vram_bytes)}"
    )


def ranked_reasons(row: Row, job: PreparedJob) -> list[str]:
    """Fit, speed, cost and provenance of a ranked row, one line each."""
    inst, shape = row.instance, row.shape
    if not shape.lines:  # the fit and speed lines are the same for every row of a shape
        shape.lines[:] = _shape_lines(row, job.margin)  # one step: rankings in threads share shapes
    lines = [*shape.lines, _cost_line(row), _provenance(inst.source, inst.as_of)]
    if job.request.constraints.spot != "never" and row.spot_cost is None:
        lines.append(shape.spot_problem or "no spot offer")
    return lines


def plan_text(plan: str, tensor_parallel: int = 1, pipeline_parallel: int = 1) -> str:
    """'ZeRO-2', 'ZeRO-2 + tensor parallel 2', 'tensor parallel 8 + pipeline 4'."""
    model_parallel = [f"tensor parallel {tensor_parallel}"] if tensor_parallel > 1 else []
    if pipeline_parallel > 1:
        model_parallel.append(f"pipeline {pipeline_parallel}")
    if not model_parallel:
        return PLAN_LABELS[plan]
    if plan == "single":
        return " + ".join(model_parallel)
    if plan == "single_offload":
        return " + ".join([*model_parallel, "CPU optimizer offload"])
    return " + ".join([PLAN_LABELS[plan], *model_parallel])


def _shape_lines(row: Row, margin: float) -> list[str]:
    inst, shape = row.instance, row.shape
    fit, run = shape.fit, shape.run
    spare = shape.vram_bytes / fit.need_per_gpu_bytes - 1.0
    tight = f", TIGHT: under the {margin:.0%} margin, it may run out of memory" if fit.tight else ""
    plan = plan_text(fit.plan, fit.tensor_parallel, fit.pipeline_parallel)
    if fit.gpu_count == 1:
        where = f"{plan} ({inst.gpu})"
    else:
        where = f"{plan} on {fit.gpu_count} x {inst.gpu}"
    if fit.nodes > 1:
        where += f" ({fit.nodes} nodes of {inst.gpu_count} over {inst.network})"
    return [
        f"{where}: needs {format_gib(fit.need_per_gpu_bytes)}"
        f" of {format_gib(shape.vram_bytes)} per GPU ({spare:.0%} spare{tight})",
        f"{run.hours:.1f} h training at MFU {run.utilisation:.2f} of {run.peak_tflops:g}"
        f" {run.peak_label} TFLOPS per GPU{_parts_note(shape)} + {shape.setup_hours:.2f} h setup",
    ]


def _parts_note(shape: ShapeResult) -> str:
    """What of the training is not matmul work, when it is worth a mention (>= 0.05 h)."""
    run = shape.run
    parts = [
        (run.dequant_hours, "QLoRA de-quantization"),
        (run.communication_hours, "exposed communication"),
        (run.bubble_hours, "pipeline bubble"),
        (shape.on_demand_run.wall_hours - run.hours, "failure restarts"),
    ]
    shown = [f"{hours:.1f} h {what}" for hours, what in parts if hours >= 0.05]
    return f" (incl. {', '.join(shown)})" if shown else ""


@lru_cache(maxsize=1024)
def _provenance(source: str, as_of: date) -> str:
    """The price's source line (a catalog repeats a few sources and dates over many rows)."""
    return f"price from {source} as of {as_of.isoformat()}"


def _cost_line(row: Row) -> str:
    inst = row.instance
    billing = _billing(inst.billing_granularity, inst.min_charge_seconds)
    line = f"on-demand {usd(row.on_demand_cost)} billed per {billing}"
    run = row.shape.spot_run
    if row.spot_cost is not None and run is not None:
        line += f"; spot {usd(row.spot_cost)} expected"
        line += _spot_course(run.expected_interruptions, run.checkpoint_interval_hours)
    return line


@lru_cache(maxsize=256)
def _billing(granularity: str, min_charge_seconds: int) -> str:
    if not min_charge_seconds:
        return granularity
    return f"{granularity} (minimum {min_charge_seconds / 60:g} min)"


@lru_cache(maxsize=4096)
def _spot_course(interruptions: float, interval_hours: float | None) -> str:
    """' (2.3 interruptions, checkpoint every 1.25 h)': the same for every row of a shape."""
    every = f", checkpoint every {interval_hours:.2f} h" if interval_hours is not None else ""
    return f" ({interruptions:.1f} interruptions{every})"
