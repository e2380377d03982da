"""Hand-built tool results for answer and grounding tests: figures chosen by hand, so golden
answers do not move when the estimator or the ranking is refined."""

from __future__ import annotations

from datetime import date
from functools import cache
from typing import Any

from tools.memory import EstimateInput, MemoryEstimate, estimate
from tools.ranking.models import Excluded, ExclusionKind, JobSummary, RankedOption, RankResult
from tools.units import GIB


@cache
def _real_estimate() -> MemoryEstimate:
    return estimate(EstimateInput(model="meta-llama/Llama-3.1-8B", method="lora"))


def make_estimate(
    weights: int = int(15.0 * GIB),
    gradients: int = int(0.08 * GIB),
    optimizer: int = int(0.5 * GIB),
    activations: int = int(4.25 * GIB),
    overhead: int = int(1.9 * GIB),
    total_gpus: int = 1,
    cpu_offload: int = 0,
    name: str = "Llama 3.1 8B",
) -> MemoryEstimate:
    """A real estimate's result with the per-GPU parts (bytes), GPU count and name replaced:
    what the answer shows is chosen here; every other field stays as the estimator fills it."""
    base = _real_estimate()
    per_gpu = base.per_gpu.model_copy(
        update={
            "weights": weights,
            "gradients": gradients,
            "optimizer": optimizer,
            "activations": activations,
            "overhead": overhead,
            "total": weights + gradients + optimizer + activations + overhead,
        }
    )
    return base.model_copy(
        update={
            "model_name": name,
            "per_gpu": per_gpu,
            "cpu_offload_bytes": cpu_offload,
            "data_parallel": total_gpus,
            "tensor_parallel": 1,
            "total_gpus": total_gpus,
            "assumptions": ["hand-built for tests"],
        }
    )


def make_option(rank: int = 1, **over: Any) -> RankedOption:
    """A ranked row: one L40S on demand unless overridden."""
    fields: dict[str, Any] = {
        "rank": rank,
        "instance_id": "aws/g6e.xlarge",
        "provider": "aws",
        "instance_type": "g6e.xlarge",
        "gpu": "L40S",
        "gpus_per_node": 1,
        "nodes": 1,
        "gpu_count": 1,
        "vram_per_gpu_bytes": 48 * GIB,
        "need_per_gpu_bytes": int(21.73 * GIB),
        "margin": 48 / 21.73 - 1,
        "plan": "single",
        "plan_label": "single GPU",
        "pricing": "on-demand",
        "price_per_hour": 1.861,
        "hours": 5.24,
        "total_cost": 9.75,
        "compute_hours": 5.24,
        "on_demand_total_cost": 9.75,
        "spot_total_cost": None,
        "spot_hours": None,
        "checkpoint_interval_hours": None,
        "spot_interruptions": None,
        "spot_overhead_hours": None,
        "mfu": 0.38,
        "peak_tflops_per_gpu": 362.05,
        "regions": ["us-east-1"],
        "source": "https://aws.amazon.com/ec2/pricing/on-demand/",
        "as_of": date(2025, 6, 1),
        "reasons": ["single GPU on 1 GPU (L40S): needs 21.7 GiB of 48.0 GiB per GPU (121% spare)"],
    }
    fields.update(over)
    return RankedOption(**fields)


def make_summary(**over: Any) -> JobSummary:
    fields: dict[str, Any] = {
        "model": "meta-llama/Llama-3.1-8B",
        "method": "lora",
        "precision": "bf16-mixed",
        "total_params": 8_030_261_248,
        "active_params": 8_030_261_248,
        "trainable_params": 41_943_040,
        "tokens": 1e8,
        "training_flops": 3.2e18,
        "checkpoint_bytes": 167_772_160,
        "objective": "cost",
        "spot_policy": "never",
        "memory_margin": 0.1,
        "assumptions": ["hand-built for tests"],
    }
    fields.update(over)
    return JobSummary(**fields)


def make_excluded(kind: ExclusionKind, n: int, gpu: str = "T4") -> list[Excluded]:
    """`n` instances excluded for `kind`, each with an English reason."""
    return [
        Excluded(instance_id=f"gcp/{kind}-{i}", gpu=gpu, kind=kind, reason=f"English {kind}")
        for i in range(n)
    ]


def make_ranking(
    options: list[RankedOption], excluded: list[Excluded] | None = None, **summary: Any
) -> RankResult:
    excluded = excluded or []
    return RankResult(
        job=make_summary(**summary),
        ranked=options,
        excluded=excluded,
        considered=len(options) + len(excluded),
        feasible=len(options),
    )
