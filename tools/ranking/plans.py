"""Parallel plans: what each one shards, the estimator input that sizes it, its engine, and the
memory of a pipeline stage.

A plan is a sharding plan (`PlanName`) over the data-parallel ranks, with a tensor-parallel
degree and a pipeline-parallel degree: data x tensor x pipeline = GPUs. Sharding plans, least
communication first: single GPU (or DDP on several), ZeRO-2 (optimizer states and gradients
sharded), ZeRO-3/FSDP (weights sharded too), then ZeRO-3 with the optimizer offloaded to CPU
memory. `tools.ranking.search` finds the first plan that fits.

Engines (`plan_engine`): single GPU and DDP are sized as the job says (the estimator's `auto` is
plain PyTorch there: torch.autocast over fp32 weights); the ZeRO and offload plans as DeepSpeed
runs them (16-bit weights and gradients, the fp32 master in the optimizer), whatever the job's
engine. The estimator's `pytorch` engine under sharding is not FSDP: it keeps autocast's 16-bit
copy of every weight unsharded. FSDP with mixed precision shards the same bytes per parameter
under AdamW (fp32 weights 4 + gradients 4 + moments 8 against 2 + 2 + 12).

Pipeline stages (Huang et al. 2019, GPipe; Narayanan et al. 2021, 1F1B): a stage holds
ceil(layers / stages) layers, sized by the estimator as a model of that many layers (embedding
and LM head kept: the first and last stages hold one of them each, so this is a slight
overcount); under 1F1B the first stage keeps the activations of `stages` micro-batches in
flight (min(stages, micro-batches)), the estimate one of them, so the need adds the layer
activations the estimate stores for the other in-flight micro-batches, with the allocator
margin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import ceil
from typing import Literal

from tools.memory import EstimateInput, MemoryEstimate

PlanName = Literal["single", "single_offload", "ddp", "zero2", "zero3", "zero3_offload"]

PLAN_LABELS: dict[str, str] = {
    "single": "single GPU",
    "single_offload": "single GPU + CPU optimizer offload",
    "ddp": "DDP",
    "zero2": "ZeRO-2",
    "zero3": "ZeRO-3/FSDP",
    "zero3_offload": "ZeRO-3/FSDP + CPU optimizer offload",
}
# Estimator settings per plan: (ZeRO stage, optimizer offloaded to CPU).
_PLAN_SETTINGS: dict[str, tuple[int, bool]] = {
    "single": (0, False),
    "single_offload": (2, True),
    "ddp": (0, False),
    "zero2": (2, False),
    "zero3": (3, False),
    "zero3_offload": (3, True),
}
# Position in the preference order, for comparing plans (lower = simpler, faster).
PLAN_ORDER: dict[str, int] = {name: i for i, name in enumerate(_PLAN_SETTINGS)}
EstimateFn = Callable[[EstimateInput], MemoryEstimate]


def plans_without_offload(data_parallel: int) -> tuple[PlanName, ...]:
    """Plans tried before offload; sharding means nothing on one data-parallel rank."""
    return ("single",) if data_parallel == 1 else ("ddp", "zero2", "zero3")


def offload_plan(data_parallel: int) -> PlanName:
    return "single_offload" if data_parallel == 1 else "zero3_offload"


def is_offload(plan: str) -> bool:
    return _PLAN_SETTINGS[plan][1]


def is_sharded(plan: str) -> bool:
    """ZeRO plans (offload included): every rank holds, and checkpoints, its own shard."""
    return _PLAN_SETTINGS[plan][0] > 0


def zero_stage(plan: str) -> int:
    return _PLAN_SETTINGS[plan][0]


def plan_engine(job: EstimateInput, plan: PlanName) -> Literal["pytorch", "deepspeed"]:
    """The engine a plan is sized with: DeepSpeed under ZeRO, else the job's (auto: PyTorch)."""
    return plan_input(job, plan, job.tensor_parallel).effective_engine


@dataclass(frozen=True, slots=True)
class PlanFit:
    """A plan that fits: where, how, and the estimator's numbers for it."""

    plan: PlanName
    nodes: int
    gpu_count: int
    need_per_gpu_bytes: int
    estimate: MemoryEstimate
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    tight: bool = False  # the need fits the card, but not with the ranking's margin

    @property
    def data_parallel(self) -> int:
        return self.gpu_count // (self.tensor_parallel * self.pipeline_parallel)

    @property
    def position(self) -> tuple[bool, int, int, int, int]:
        """Where the plan comes in the search order: offload last, fewer nodes first, then fewer
        pipeline stages, a lower tensor-parallel degree and the simpler sharding."""
        return (
            is_offload(self.plan),
            self.nodes,
            self.pipeline_parallel,
            self.tensor_parallel,
            PLAN_ORDER[self.plan],
        )


@dataclass(frozen=True, slots=True)
class NoFit:
    """Nothing fits; the smallest need seen, with the plan and GPU count that gave it."""

    need_per_gpu_bytes: int
    plan: PlanName
    gpu_count: int
    host_ram_short: bool  # True when only host RAM for the offloaded optimizer was missing
    tensor_parallel: int = 1
    pipeline_parallel: int = 1


def stage_model_input(job: EstimateInput, stages: int) -> EstimateInput:
    """`job` with the model cut to one pipeline stage's layers (ceil(layers / stages))."""
    if stages == 1:
        return job
    layers = ceil(job.model.num_layers / stages)
    return job.model_copy(update={"model": job.model.model_copy(update={"num_layers": layers})})


def in_flight_bytes(est: MemoryEstimate, in_flight: int, fragmentation: float) -> int:
    """The layer activations of `in_flight - 1` more micro-batches than `est` holds, with the
    allocator margin (what a 1F1B stage keeps beyond a one-micro-batch estimate)."""
    if in_flight <= 1:
        return 0
    stored = sum(group.stored_per_layer * group.count for group in est.activations.layers)
    return ceil((in_flight - 1) * stored * (1.0 + fragmentation))


def plan_input(
    job: EstimateInput,
    plan: PlanName,
    gpu_count: int,
    tensor_parallel: int | None = None,
    pipeline_parallel: int = 1,
) -> EstimateInput:
    """`job` with this plan's sharding on `gpu_count` GPUs (validated like user input).

    Only the fields the user set are passed on, so the estimator's own defaults and its checks
    (e.g. LoRA settings only with LoRA) apply exactly as for a direct call; ZeRO plans set the
    DeepSpeed engine. A tensor-parallel degree the search chose (not the job's) comes with
    sequence parallelism, as Megatron-LM and torchtitan run it; a pipeline stage is sized as its
    share of the layers (`stage_model_input`).
    """
    zero, offload = _PLAN_SETTINGS[plan]
    tp = job.tensor_parallel if tensor_parallel is None else tensor_parallel
    given = {name: getattr(job, name) for name in job.model_fields_set}
    given.pop("sharding", None)
    given.update(
        zero_stage=zero,
        offload_optimizer=offload,
        num_gpus=gpu_count // (tp * pipeline_parallel),
        tensor_parallel=tp,
    )
    if tp != job.tensor_parallel:
        given["sequence_parallel"] = True
    if zero > 0:  # see the module docstring: sharded plans are DeepSpeed's
        given["engine"] = "deepspeed"
    return stage_model_input(EstimateInput(**given), pipeline_parallel)
