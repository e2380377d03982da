"""Put a measurement beside the estimator's figures, category by category.

Category mapping (tracker -> estimator), documented in README.md:
- weights     = Parameter + Buffer
- gradients   = Gradient
- optimizer   = Optstate (state and the optimizer step's own temporaries)
- activations = Activation + Temp (everything the forward and backward passes allocate:
                saved tensors, autocast weight copies, logits and loss buffers, activation
                gradients)
- overhead    = 0 on the CPU (no CUDA context, no caching allocator); on CUDA the reserved bytes
                beyond the peak allocated ones.
The estimator is called with engine="pytorch" (what the harness runs), the case's device, no
CUDA context, and on the CPU no fragmentation margin. The parts are compared at the largest
estimated moment of the phase (forward, backward, optimizer step) in which the measured peak
fell.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from benchmarks.memory_calibration.baselines import accelerate_training_peak, deepspeed_model_states
from benchmarks.memory_calibration.build import arch_for
from benchmarks.memory_calibration.cases import Case
from benchmarks.memory_calibration.measure import Measurement, PhasePeak
from tools.memory import EstimateInput, estimate

CATEGORIES = ("weights", "gradients", "optimizer", "activations", "overhead")
TOTAL_BOUND = 0.10  # the bound on the total
CATEGORY_BOUND = 0.15  # ... and on each category above CATEGORY_SHARE of the total
CATEGORY_SHARE = 0.05


class CaseResult(BaseModel):
    """One JSON line of results."""

    id: str
    case: Case
    measured: Measurement
    measured_peak: int = Field(description="bytes")
    measured_categories: dict[str, int]
    estimated_peak: int = Field(description="bytes")
    estimated_categories: dict[str, int]
    error: float = Field(description="(estimated - measured) / measured, total")
    category_errors: dict[str, float | None] = Field(
        description="relative error per category; None where the measured category is at most "
        "5 % of the measured total"
    )
    within_bounds: bool
    accelerate_peak: int = Field(
        description="bytes, Accelerate estimate-memory formula for the base model's parameters"
    )
    deepspeed_model_states: int = Field(
        description="bytes, DeepSpeed ZeRO-2 formula on 1 GPU for the base model's parameters"
    )


def map_measured(peak: PhasePeak, reserved: int | None = None) -> dict[str, int]:
    """Tracker categories at the peak, in the estimator's categories."""
    cats = peak.categories
    overhead = max(0, reserved - peak.total) if reserved is not None else 0
    return {
        "weights": cats["Parameter"] + cats["Buffer"],
        "gradients": cats["Gradient"],
        "optimizer": cats["Optstate"],
        "activations": cats["Activation"] + cats["Temp"],
        "overhead": overhead,
    }


PHASE_MOMENTS = {
    "forward": ("forward",),
    "backward": (
        "loss backward",
        "lm_head backward",
        "recompute",
        "first layer backward",
        "embedding backward",
    ),
    "optimizer": ("optimizer step",),
}


def estimate_input(case: Case) -> EstimateInput:
    """The estimator's input for `case`: plain PyTorch (autocast), the case's device, and on
    the CPU no CUDA context and no fragmentation margin."""
    fields: dict[str, Any] = {
        "model": arch_for(case.model),
        "method": case.method,
        "precision": case.precision,
        "optimizer": case.optimizer,
        "micro_batch_size": case.batch,
        "seq_len": case.seq_len,
        "gradient_checkpointing": case.checkpointing,
        "attention": case.attention,
        "engine": "pytorch",
        "device": case.device,
        "cuda_context_bytes": 0,
    }
    if case.method != "full":
        fields |= {"lora_rank": case.lora_rank, "lora_targets": case.lora_targets}
    if case.device == "cpu":
        fields["fragmentation"] = 0.0
    return EstimateInput(**fields)


def estimate_case(case: Case, phase: str) -> tuple[int, dict[str, int]]:
    """The estimated total, and the estimated parts at the largest moment of `phase` (the
    measured peak's phase: when two moments are nearly equal, the parts are compared at the
    same moment as measured, not at whichever of the two is a few bytes larger)."""
    result = estimate(estimate_input(case))
    candidates = [m for m in result.moments if m.name in PHASE_MOMENTS[phase]]
    moment = max(candidates, key=lambda m: m.total)
    parts = {
        "weights": moment.weights,
        "gradients": moment.gradients,
        "optimizer": moment.optimizer,
        "activations": moment.activations,
        "overhead": result.per_gpu.overhead,
    }
    return result.per_gpu.total, parts


def relative(estimated: int, measured: int) -> float:
    return (estimated - measured) / measured if measured else 0.0


def compare(case: Case, measured: Measurement) -> CaseResult:
    """The result line for one measured case."""
    got = map_measured(measured.peak, measured.cuda_reserved)
    got_total = measured.peak.total + got["overhead"]
    est_total, est = estimate_case(case, measured.peak_phase)
    base_params = arch_for(case.model).total_params()  # what a user gives those calculators
    category_errors: dict[str, float | None] = {}
    for name in CATEGORIES:
        big = got[name] > CATEGORY_SHARE * got_total
        category_errors[name] = round(relative(est[name], got[name]), 4) if big else None
    error = relative(est_total, got_total)
    within = abs(error) <= TOTAL_BOUND and all(
        abs(e) <= CATEGORY_BOUND for e in category_errors.values() if e is not None
    )
    return CaseResult(
        id=case.id,
        case=case,
        measured=measured,
        measured_peak=got_total,
        measured_categories=got,
        estimated_peak=est_total,
        estimated_categories={k: est[k] for k in CATEGORIES},
        error=round(error, 4),
        category_errors=category_errors,
        within_bounds=within,
        accelerate_peak=accelerate_training_peak(base_params, case),
        deepspeed_model_states=deepspeed_model_states(base_params),
    )
