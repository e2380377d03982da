"""The cheapest parallel plan that fits a job on a machine shape, with memory from the estimator.

Plans in the order tried, least communication and slowest-path first:
single GPU (or DDP on several), ZeRO-2 (optimizer states and gradients sharded), ZeRO-3/FSDP
(weights sharded too), then ZeRO-3 with the optimizer offloaded to CPU memory. Node counts are
tried smallest first; offload is the last resort, after every multi-node cluster without it,
because CPU optimizer steps are slow. A plan fits when per-GPU need x (1 + margin) <= VRAM.

Engines (`plan_engine`): single GPU and DDP are sized as the job says (the estimator's `auto` is
plain PyTorch there: torch.autocast over fp32 weights); the ZeRO and offload plans as DeepSpeed
runs them (16-bit weights and gradients, the fp32 master in the optimizer), whatever the job's
engine. The estimator's `pytorch` engine under sharding is not FSDP: it keeps autocast's 16-bit
copy of every weight unsharded. FSDP with mixed precision shards the same bytes per parameter
under AdamW (fp32 weights 4 + gradients 4 + moments 8 against 2 + 2 + 12).

The estimator is called once per (plan, GPU count) and cached: many instances share a shape, and
a bounded cache keeps the estimates of recent jobs across rankings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
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


def plans_without_offload(gpu_count: int) -> tuple[PlanName, ...]:
    """Plans tried before offload; sharding means nothing on one GPU."""
    return ("single",) if gpu_count == 1 else ("ddp", "zero2", "zero3")


def offload_plan(gpu_count: int) -> PlanName:
    return "single_offload" if gpu_count == 1 else "zero3_offload"


def is_offload(plan: str) -> bool:
    return _PLAN_SETTINGS[plan][1]


def is_sharded(plan: str) -> bool:
    """ZeRO plans (offload included): every rank holds, and checkpoints, its own shard."""
    return _PLAN_SETTINGS[plan][0] > 0


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


@dataclass(frozen=True, slots=True)
class NoFit:
    """Nothing fits; the smallest need seen, with the plan and GPU count that gave it."""

    need_per_gpu_bytes: int
    plan: PlanName
    gpu_count: int
    host_ram_short: bool  # True when only host RAM for the offloaded optimizer was missing


EstimateFn = Callable[[EstimateInput], MemoryEstimate]
NO_OFFLOAD_OPTIMIZERS = frozenset({"adamw-8bit", "paged-adamw-8bit"})
ESTIMATE_CACHE_SIZE = 1024  # estimates kept across rankings (a few KB each)


class PlanSearch:
    """Finds plans for one job; remembers every estimate it made (per plan and GPU count)."""

    def __init__(self, job: EstimateInput, margin: float, estimate_fn: EstimateFn) -> None:
        self._job = job
        self._margin = margin
        self._estimate_fn = estimate_fn
        self._cache: dict[tuple[str, int], MemoryEstimate] = {}
        self._fits: dict[tuple[int, float, range], PlanFit | NoFit | None] = {}
        self._offload_fits: dict[tuple[int, float, range, float | None], PlanFit | NoFit] = {}

    def estimate(self, plan: PlanName, gpu_count: int) -> MemoryEstimate:
        """The estimator's answer for this plan on `gpu_count` GPUs (cached)."""
        key = (plan, gpu_count)
        found = self._cache.get(key)
        if found is None:
            found = _remembered(self._estimate_fn, self._job, plan, gpu_count)
            self._cache[key] = found
        return found

    def plan_input(self, plan: PlanName, gpu_count: int) -> EstimateInput:
        """The job with this plan's sharding on `gpu_count` GPUs."""
        return plan_input(self._job, plan, gpu_count)

    @property
    def estimator_calls(self) -> int:
        return len(self._cache)

    def fit(
        self,
        gpus_per_node: int,
        vram_bytes: float,
        node_counts: range,
        host_ram_bytes: float | None,
    ) -> PlanFit | NoFit | None:
        """The first plan that fits, trying every node count without offload, then with it.

        None when no node count gives a GPU count divisible by the tensor-parallel degree.
        Results are cached: many instance types share GPU count and VRAM (host RAM only matters
        to offload plans, so it is part of the key only there).
        """
        key = (gpus_per_node, vram_bytes, node_counts)
        if key not in self._fits:
            self._fits[key] = self._search(gpus_per_node, vram_bytes, node_counts, False, None)
        found = self._fits[key]
        if isinstance(found, PlanFit) or found is None or not self.offload_possible:
            return found
        ram_key = (*key, host_ram_bytes)
        if ram_key not in self._offload_fits:
            offload = self._search(gpus_per_node, vram_bytes, node_counts, True, host_ram_bytes)
            self._offload_fits[ram_key] = _smaller_need(found, offload)
        return self._offload_fits[ram_key]

    def _search(
        self,
        gpus_per_node: int,
        vram_bytes: float,
        node_counts: range,
        offload: bool,
        host_ram_bytes: float | None,
    ) -> PlanFit | NoFit | None:
        limit = vram_bytes / (1.0 + self._margin)
        tp = self._job.tensor_parallel
        best: NoFit | None = None
        for nodes in node_counts:
            gpu_count = gpus_per_node * nodes
            if gpu_count % tp:
                continue
            dp = gpu_count // tp
            for plan in (offload_plan(dp),) if offload else plans_without_offload(dp):
                est = self.estimate(plan, gpu_count)
                need = int(est.per_gpu.total)
                ram_short = offload and not _host_holds(est, gpus_per_node, host_ram_bytes)
                if need <= limit and not ram_short:
                    return PlanFit(plan, nodes, gpu_count, need, est)
                if best is None or need < best.need_per_gpu_bytes:
                    best = NoFit(need, plan, gpu_count, ram_short and need <= limit)
        return best

    @property
    def offload_possible(self) -> bool:
        """bitsandbytes 8-bit optimizers keep their state on the GPU: no offload plan."""
        return self._job.optimizer not in NO_OFFLOAD_OPTIMIZERS


def _smaller_need(without: NoFit, offload: PlanFit | NoFit | None) -> PlanFit | NoFit:
    """The offload result if it fits, else whichever failure came closer."""
    if offload is None:
        return without
    if isinstance(offload, PlanFit) or offload.host_ram_short:
        return offload
    return offload if offload.need_per_gpu_bytes < without.need_per_gpu_bytes else without


def plan_input(job: EstimateInput, plan: PlanName, gpu_count: int) -> EstimateInput:
    """`job` with this plan's sharding on `gpu_count` GPUs (validated like user input).

    Only the fields the user set are passed on, so the estimator's own defaults and its checks
    (e.g. LoRA settings only with LoRA) apply exactly as for a direct call; ZeRO plans set the
    DeepSpeed engine.
    """
    zero_stage, offload = _PLAN_SETTINGS[plan]
    given = {name: getattr(job, name) for name in job.model_fields_set}
    given.pop("sharding", None)
    given.update(
        zero_stage=zero_stage,
        offload_optimizer=offload,
        num_gpus=gpu_count // job.tensor_parallel,
    )
    if zero_stage > 0:  # see the module docstring: sharded plans are DeepSpeed's
        given["engine"] = "deepspeed"
    return EstimateInput(**given)


@lru_cache(maxsize=ESTIMATE_CACHE_SIZE)
def _remembered(
    estimate_fn: EstimateFn, job: EstimateInput, plan: PlanName, gpu_count: int
) -> MemoryEstimate:
    """Estimates shared across rankings: the estimator is pure, and a user refining a budget or a
    provider list re-ranks the same job many times. Callers must not mutate the result."""
    return estimate_fn(plan_input(job, plan, gpu_count))


def _host_holds(est: MemoryEstimate, gpus_per_node: int, host_ram_bytes: float | None) -> bool:
    """The offloaded optimizer states of one node's GPU processes fit in its RAM (unknown RAM
    counts as fitting)."""
    if host_ram_bytes is None:
        return True
    return est.cpu_offload_bytes * gpus_per_node <= host_ram_bytes
