"""Argument schemas of the assistant's tools: what a chat model may pass, with units everywhere.

These are the JSON schemas a tool-calling model sees, so every field says its unit or format.
Nested request parts the ranking already defines (`Workload`, `Constraints`) are reused as they
are; only the job is flattened, because the estimator's own input holds a resolved architecture
rather than the name a model would type.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.memory.constants import Method, Optimizer, Precision
from tools.memory.estimator import EstimateInput
from tools.ranking.models import Interconnect, Objective, SpotPolicy

MAX_QUERY_CHARS = 500
MAX_ROWS = 20


def _default(field: str) -> str:
    """The estimator's default for `field`, as the schema states it."""
    return str(EstimateInput.model_fields[field].default)


class JobArgs(BaseModel):
    """One training job. Omitted fields take the estimator's stated defaults."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(
        min_length=1,
        max_length=200,
        description="model to train: a registry name such as 'meta-llama/Llama-3.1-8B' or "
        "'llama 3.1 8b', or a parameter count such as '70B' or '7e9' (parameters)",
    )
    method: Method | None = Field(
        None,
        description="pretrain or full: every weight trained; lora: frozen 16-bit base plus "
        "adapters; qlora: frozen 4-bit NF4 base plus adapters; omitted: " + _default("method"),
    )
    precision: Precision | None = Field(
        None,
        description="training precision: bf16-mixed/fp16-mixed (16-bit weights, fp32 master), "
        "bf16 (pure 16-bit) or fp32; omitted: " + _default("precision"),
    )
    optimizer: Optimizer | None = Field(
        None, description="optimizer (its state bytes differ); omitted: " + _default("optimizer")
    )
    lora_rank: int | None = Field(
        None, gt=0, le=4096, description="LoRA rank r (dimensions), lora/qlora only"
    )
    seq_len: int | None = Field(
        None, gt=0, description=f"tokens per sample; omitted: {_default('seq_len')} tokens"
    )
    micro_batch_size: int | None = Field(
        None,
        gt=0,
        description=f"sequences per GPU per step; omitted: {_default('micro_batch_size')}",
    )
    gradient_checkpointing: Literal["none", "selective", "full"] | None = Field(
        None,
        description="activation recomputation: none, selective or full; omitted: "
        + _default("gradient_checkpointing"),
    )
    num_gpus: int | None = Field(
        None, gt=0, description="data-parallel GPUs (count) the memory is estimated for"
    )
    zero_stage: int | None = Field(
        None,
        ge=0,
        le=3,
        description="ZeRO sharding stage 0-3 across num_gpus; omitted: " + _default("zero_stage"),
    )


class EstimateMemoryArgs(JobArgs):
    """Arguments of estimate_memory."""


class RankInstancesArgs(JobArgs):
    """Arguments of rank_instances: the job, the data it trains on, limits and the objective."""

    tokens: float | None = Field(
        None, gt=0, description="training tokens per epoch (tokens), e.g. 2e8; or give samples"
    )
    samples: int | None = Field(
        None, gt=0, description="training samples per epoch (samples of seq_len tokens each)"
    )
    epochs: float | None = Field(
        None, gt=0, description="passes over the data (epochs); omitted: 1"
    )
    max_price_per_hour: float | None = Field(
        None, gt=0, description="most USD per hour for the whole cluster (all nodes)"
    )
    budget: float | None = Field(None, gt=0, description="most USD for the whole run")
    deadline_hours: float | None = Field(None, gt=0, description="hours until it must be done")
    providers: list[str] | None = Field(
        None, description="only these provider keys (lower case), e.g. ['aws', 'runpod']"
    )
    regions: list[str] | None = Field(
        None, description="only these region names, as the catalog spells them (text)"
    )
    spot: SpotPolicy | None = Field(
        None,
        description="never: on-demand prices only; allowed: spot when it ranks better; "
        "required: spot only (policy); omitted: never",
    )
    min_gpus: int | None = Field(None, ge=1, description="at least this many GPUs in all (count)")
    max_gpus: int | None = Field(None, ge=1, description="at most this many GPUs in all (count)")
    interconnect: Interconnect | None = Field(
        None, description="required GPU-to-GPU link (kind): nvswitch, nvlink or pcie"
    )
    objective: Objective | None = Field(
        None, description="cost: cheapest total USD; time: fewest hours; price: cheapest USD/h"
    )
    gpus: list[str] | None = Field(
        None, description="only instances with these GPUs, e.g. ['H100', 'A100-80GB'] (names)"
    )
    max_vram_per_gpu_gib: float | None = Field(
        None, gt=0, description="only instances with at most this memory per GPU, GiB"
    )
    top: int = Field(
        5, ge=1, le=MAX_ROWS, description="ranked rows listed in the reply (count, best first)"
    )


WORKLOAD_FIELDS = ("tokens", "samples", "epochs")
CONSTRAINT_FIELDS = ("max_price_per_hour", "budget", "deadline_hours", "providers", "regions",
                     "spot", "min_gpus", "max_gpus", "interconnect")  # fmt: skip


class SearchKnowledgeArgs(BaseModel):
    """Arguments of search_knowledge."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="the question in the user's words and language (text, at most 500 chars)",
    )
    lang: str | None = Field(
        None,
        pattern=r"^[a-z]{2}$",
        description="ISO 639-1 code of the answer language, e.g. 'nl'; omitted: detected",
    )
    k: int = Field(3, ge=1, le=8, description="passages to return (count), one per topic")


class LookupModelArgs(BaseModel):
    """Arguments of lookup_model."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1,
        max_length=200,
        description="a registry name such as 'llama 3 70b' or a parameter count such as '7B' "
        "(parameters)",
    )


class LookupGpuArgs(BaseModel):
    """Arguments of lookup_gpu."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1,
        max_length=100,
        description="GPU name, id or alias, e.g. 'H100', 'A100 80GB', 'RTX 4090' (text)",
    )


class ListInstancesArgs(BaseModel):
    """Arguments of list_instances: catalog filters, all optional."""

    model_config = ConfigDict(extra="forbid")

    gpu: list[str] | None = Field(
        None, description="GPU names or aliases, any of them, e.g. ['H100', 'L40S'] (names)"
    )
    min_vram_gib: float | None = Field(None, gt=0, description="least memory per GPU, GiB")
    providers: list[str] | None = Field(
        None, description="provider keys, any of them, e.g. ['aws', 'runpod'] (lower case)"
    )
    regions: list[str] | None = Field(
        None, description="region names, any of them, e.g. ['us-east-1'] (provider spelling)"
    )
    max_price_per_hour: float | None = Field(
        None, gt=0, description="most USD per hour for the whole instance (spot price if spot_only)"
    )
    spot_only: bool = Field(False, description="only instances sold as spot (true/false)")
    min_gpus: int | None = Field(None, ge=1, description="least GPUs per instance (count)")
    max_gpus: int | None = Field(None, ge=1, description="most GPUs per instance (count)")
    limit: int = Field(
        10, ge=1, le=MAX_ROWS, description="rows listed in the reply (count, cheapest first)"
    )
