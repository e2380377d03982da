"""What the assistant's tools return: typed artifacts and the compact JSON a model reads.

Each tool returns `(content, artifact)`: the interface draws tables and charts from the typed
artifact itself (a `MemoryEstimate`, a `RankResult`, or one of the models here), and the model
reads JSON whose figures are copied from it, rounded for reading, with units in the key names.
A domain error becomes JSON naming the field, the value given and what is valid
(`error_payload`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from knowledge.retrieval import Passage
from tools.advice import ResolvedEstimate, ResolvedJob
from tools.architectures.architecture import ModelArch, ParamBreakdown
from tools.catalog.instances import Instance
from tools.errors import AdvisorError, InvalidInputError, UnknownNameError
from tools.memory import MemoryEstimate
from tools.ranking import RankedOption, RankResult
from tools.units import to_gib

__all__ = [
    "InstanceList",
    "KnowledgeResult",
    "ModelInfo",
    "dumps",
    "error_payload",
    "estimate_content",
    "instance_content",
    "rank_content",
]


class KnowledgeResult(BaseModel):
    """What search_knowledge found: the passages, best first."""

    query: str
    lang: str | None = Field(description="language asked for; None = detected from the query")
    passages: list[Passage]


class ModelInfo(BaseModel):
    """A model's dimensions and its parameter counts (parameters)."""

    arch: ModelArch
    total_params: int
    active_params: int = Field(description="parameters used per token (MoE: active experts)")
    breakdown: ParamBreakdown


class InstanceList(BaseModel):
    """Catalog instances matching a filter, cheapest first, and how many matched in all."""

    instances: list[Instance]
    matched: int = Field(description="instances matching the filter (count)")


def dumps(data: object) -> str:
    """Compact JSON, text kept as written."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _gib(n_bytes: float) -> float:
    return round(to_gib(n_bytes), 2)


def _money(amount: float | None) -> float | None:
    return None if amount is None else round(amount, 2)


def error_payload(error: AdvisorError) -> dict[str, Any]:
    """The error as JSON-safe fields: its type, message and, when known, what was valid."""
    payload: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    if isinstance(error, InvalidInputError):
        payload.update(field=error.field, value=_jsonable(error.value), valid=error.valid)
    if isinstance(error, UnknownNameError):
        payload.update(kind=error.kind, name=error.name, suggestions=error.suggestions)
    return payload


def _jsonable(value: object) -> object:
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)


def _resolution(resolved: ResolvedEstimate, purpose: str) -> dict[str, Any]:
    """The defaults a tool assumed and what it did not apply, for the model to state."""
    shown = resolved.shown_assumptions("estimate" if purpose == "estimate" else "rank")
    return {
        "assumed": {item.field: item.value for item in shown},
        "not_applied": [notice.message for notice in resolved.notices],
    }


def estimate_content(est: MemoryEstimate, resolved: ResolvedEstimate) -> dict[str, Any]:
    """estimate_memory's JSON: parameters, per-GPU parts in GiB and bytes, the assumptions."""
    parts = est.per_gpu.model_dump()
    return {
        "model_id": est.model_id,
        "model_name": est.model_name,
        "total_params": est.total_params,
        "trainable_params": est.trainable_params,
        "data_parallel_gpus": est.data_parallel,
        "per_gpu_gib": {name: _gib(value) for name, value in parts.items()},
        "per_gpu_bytes": parts,
        "cpu_offload_gib": _gib(est.cpu_offload_bytes),
        **_resolution(resolved, "estimate"),
        "assumptions": est.assumptions,
    }


def _ranked_content(row: RankedOption) -> dict[str, Any]:
    return {
        "rank": row.rank,
        "instance_id": row.instance_id,
        "gpu": row.gpu,
        "gpu_count": row.gpu_count,
        "nodes": row.nodes,
        "vram_per_gpu_gib": _gib(row.vram_per_gpu_bytes),
        "need_per_gpu_gib": _gib(row.need_per_gpu_bytes),
        "plan": row.plan_label,
        "pricing": row.pricing,
        "price_per_hour_usd": round(row.price_per_hour, 2),
        "hours": round(row.hours, 2),
        "total_cost_usd": round(row.total_cost, 2),
        "spot_total_cost_usd": _money(row.spot_total_cost),
        "checkpoint_interval_hours": None
        if row.checkpoint_interval_hours is None
        else round(row.checkpoint_interval_hours, 2),
        "regions": row.regions,
        "price_as_of": row.as_of.isoformat(),
        "why": row.reasons,
    }


def rank_content(result: RankResult, resolved: ResolvedJob, top: int) -> dict[str, Any]:
    """rank_instances's JSON: the job, the best `top` rows, exclusions counted by rule."""
    return {
        "job": result.job.model_dump(mode="json", exclude={"assumptions"}),
        "ranked": [_ranked_content(row) for row in result.ranked[:top]],
        "feasible": result.feasible,
        "considered": result.considered,
        "excluded_by_reason": dict(Counter(item.kind for item in result.excluded)),
        **_resolution(resolved, "rank"),
        "assumptions": result.job.assumptions,
    }


def instance_content(item: Instance) -> dict[str, Any]:
    """One catalog row as list_instances shows it."""
    return item.model_dump(
        mode="json",
        include={
            "id", "gpu", "gpu_count", "vram_per_gpu_gib", "interconnect", "price_per_hour",
            "spot_price_per_hour", "regions", "as_of", "source",
        },
    )  # fmt: skip
