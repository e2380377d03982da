"""The first parallel plan that fits a job on a machine shape, with memory from the estimator.

A plan fits when its per-GPU need x (1 + margin) <= VRAM; when none does on a machine shape, the
first whose need alone fits is kept as tight (`PlanFit.tight`: ranked after every plan with the
margin, flagged). The need is what the estimator says the
card must hold for that plan (`PlanSearch.need`), so a ranked row's need is `estimate`'s for the
same plan and job (stack and mechanism fields included: `plans.plan_input` passes them on).
The search order (`PlanFit.position`): every plan without offload on every allowed node count
before any offload plan (CPU optimizer steps are slow), fewer nodes first, and on a node count:
no model parallelism (single GPU or DDP, ZeRO-2, ZeRO-3/FSDP), then tensor parallelism inside
the node (degrees 2, 4, 8 ... that divide the GPUs per node and the attention and key/value
heads; ZeRO-3 or replicated data ranks), then pipeline stages across nodes with the largest such
tensor degree (torchtitan's 3D and Megatron-LM's layouts). A job that states a tensor-parallel
degree keeps it and gets no pipeline; QLoRA gets neither (bitsandbytes' 4-bit layers are not
tensor-parallel).

Speed: a plan's need never grows with more nodes (ZeRO divides by the data ranks; the rest does
not change), so each plan's smallest fitting node count is found by bisection over the allowed
counts: a handful of estimates per plan even for thousands of nodes. Estimates are cached per
(plan, GPU count, degrees) and, bounded, across rankings: the estimator is pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from math import gcd

from tools.memory import EstimateInput, MemoryEstimate, estimate
from tools.memory.estimator import estimate_figures, forget_remembered
from tools.ranking.plans import (
    EstimateFn,
    NoFit,
    PlanFit,
    PlanName,
    in_flight_bytes,
    offload_plan,
    plan_input,
)

# Estimators with a cheaper form for plan searches: the same figures without the sentences
# (a ranking shows the assumptions of one estimate per job, `PlanSearch.described`).
_FIGURES_ONLY: dict[EstimateFn, EstimateFn] = {estimate: estimate_figures}
NO_OFFLOAD_OPTIMIZERS = frozenset({"adamw-8bit", "paged-adamw-8bit"})
ESTIMATE_CACHE_SIZE = 4096  # estimates kept across rankings (a few KB each)
_DEGREES = (2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True, slots=True)
class Family:
    """A plan kind with fixed model-parallel degrees; the sharding follows the data ranks:
    'replicated' is single GPU on one data rank and DDP on several."""

    kind: str  # "replicated" | "zero2" | "zero3" | "offload"
    tensor: int
    pipeline: int

    def plan(self, data_parallel: int) -> PlanName | None:
        """The plan on `data_parallel` ranks; None when sharding needs more than one."""
        if self.kind == "offload":
            return offload_plan(data_parallel)
        if self.kind == "replicated":
            return "single" if data_parallel == 1 else "ddp"
        if data_parallel == 1:
            return None
        return "zero2" if self.kind == "zero2" else "zero3"


class PlanSearch:
    """Finds plans for one job; remembers every estimate it made."""

    def __init__(
        self, job: EstimateInput, margin: float, estimate_fn: EstimateFn, in_flight: int = 0
    ) -> None:
        """`in_flight`: micro-batches a 1F1B pipeline keeps per stage (0: as many as stages)."""
        self._job = job
        self._margin = margin
        self._estimate_fn = estimate_fn
        self._in_flight = in_flight
        self._cache: dict[tuple[str, int, int, int], MemoryEstimate] = {}
        self._fits: dict[tuple[int, float, range], PlanFit | NoFit | None] = {}
        self._offload_fits: dict[tuple[int, float, range, float | None], PlanFit | NoFit] = {}
        self._family_lists: dict[int, list[Family]] = {}  # by GPUs per node

    def estimate(
        self, plan: PlanName, gpu_count: int, tensor: int | None = None, pipeline: int = 1
    ) -> MemoryEstimate:
        """The estimator's figures for this plan on `gpu_count` GPUs (cached); the built-in
        estimator's assumptions are left out unless `described` made this estimate first."""
        tp = self._job.tensor_parallel if tensor is None else tensor
        key = (plan, gpu_count, tp, pipeline)
        found = self._cache.get(key)
        if found is None:
            estimator = _FIGURES_ONLY.get(self._estimate_fn, self._estimate_fn)
            found = _remembered(estimator, self._job, plan, gpu_count, tp, pipeline)
            self._cache[key] = found
        return found

    def described(
        self, plan: PlanName, gpu_count: int, tensor: int | None = None
    ) -> MemoryEstimate:
        """The estimator's whole answer, assumptions included, for this plan on `gpu_count`
        GPUs (cached; `estimate` then returns it too)."""
        tp = self._job.tensor_parallel if tensor is None else tensor
        found = _remembered(self._estimate_fn, self._job, plan, gpu_count, tp, 1)
        self._cache[(plan, gpu_count, tp, 1)] = found  # the same figures
        return found

    def need(self, plan: PlanName, gpu_count: int, tensor: int, pipeline: int) -> int:
        """Bytes per GPU: what the card must hold by the estimate (`figures.required`: the whole
        device less the paged optimizer state the driver moves to CPU RAM when the card is full,
        as `estimate` states it), plus a pipeline stage's other in-flight micro-batches."""
        est = self.estimate(plan, gpu_count, tensor, pipeline)
        in_flight = min(pipeline, self._in_flight) if self._in_flight else pipeline
        extra = in_flight_bytes(est, in_flight, self._job.effective_fragmentation)
        return est.figures.required + extra

    def plan_input(self, plan: PlanName, gpu_count: int) -> EstimateInput:
        """The job with this plan's sharding on `gpu_count` GPUs."""
        return plan_input(self._job, plan, gpu_count)

    @property
    def estimator_calls(self) -> int:
        return len(self._cache)

    @property
    def offload_possible(self) -> bool:
        """bitsandbytes 8-bit optimizers keep their state on the GPU: no offload plan."""
        return self._job.optimizer not in NO_OFFLOAD_OPTIMIZERS

    def fit(
        self,
        gpus_per_node: int,
        vram_bytes: float,
        node_counts: range,
        host_ram_bytes: float | None,
    ) -> PlanFit | NoFit | None:
        """The first plan that fits, every node count without offload first, then with it.

        None when no node count gives a GPU count the job's tensor-parallel degree divides.
        Cached: many instance types share GPU count and VRAM (host RAM only matters to offload
        plans, so it is part of the key only there).
        """
        key = (gpus_per_node, vram_bytes, node_counts)
        if key not in self._fits:
            families = self._family_lists.get(gpus_per_node)
            if families is None:  # the same for every VRAM size and node range
                families = self._family_lists[gpus_per_node] = list(self._families(gpus_per_node))
            limit = vram_bytes / (1.0 + self._margin)
            self._fits[key] = self._first(families, gpus_per_node, limit, node_counts, None)
        found = self._fits[key]
        if isinstance(found, PlanFit) or found is None:
            return found
        ram_key = (*key, host_ram_bytes)
        if ram_key not in self._offload_fits:
            limit = vram_bytes / (1.0 + self._margin)
            got = self._offload(gpus_per_node, limit, node_counts, host_ram_bytes)
            found = _smaller_need(found, got)
            if isinstance(found, NoFit) and found.need_per_gpu_bytes <= vram_bytes:
                found = self._tight(gpus_per_node, vram_bytes, node_counts, host_ram_bytes) or found
            self._offload_fits[ram_key] = found
        return self._offload_fits[ram_key]

    def _offload(
        self, gpus_per_node: int, limit: float, node_counts: range, host_ram_bytes: float | None
    ) -> PlanFit | NoFit | None:
        """The first optimizer-offload plan under `limit` (None when offload is impossible)."""
        if not self.offload_possible:
            return None
        offload = [Family("offload", self._job.tensor_parallel, 1)]
        return self._first(offload, gpus_per_node, limit, node_counts, host_ram_bytes)

    def _tight(
        self,
        gpus_per_node: int,
        vram_bytes: float,
        node_counts: range,
        host_ram_bytes: float | None,
    ) -> PlanFit | None:
        """The first plan whose need fits the card but not with the margin, marked tight: a
        published run may sit at 90-98 % of its card (PEFT's Llama 2 70B FSDP example reads
        72-80 GB of 80), so the ranking shows it after every plan with the margin, flagged,
        rather than leaving it out."""
        families = self._family_lists[gpus_per_node]
        found = self._first(families, gpus_per_node, vram_bytes, node_counts, None)
        if not isinstance(found, PlanFit):
            found = self._offload(gpus_per_node, vram_bytes, node_counts, host_ram_bytes)
        return replace(found, tight=True) if isinstance(found, PlanFit) else None

    def pipelined(self, fit: PlanFit, gpus_per_node: int, vram_bytes: float) -> list[PlanFit]:
        """Pipelined alternatives to a multi-node `fit` on the same nodes: the largest tensor
        degree inside each node and 2, 4, ... stages (dividing the nodes), that fit; the caller
        keeps the fastest (a pipeline sends one activation per micro-step between nodes where
        ZeRO-3 gathers every weight)."""
        job = self._job
        if fit.nodes == 1 or fit.pipeline_parallel > 1 or job.model.num_decoder_layers:
            return []
        if job.method == "qlora" or job.tensor_parallel > 1:
            return []
        tp = [1, *self._tensor_degrees(gpus_per_node)][-1]
        limit = vram_bytes / (1.0 + self._margin)
        found = []
        for pp in _DEGREES:
            if pp > fit.nodes or pp > job.model.num_layers or fit.nodes % pp:
                continue
            dp = fit.gpu_count // (tp * pp)
            for family in (Family("replicated", tp, pp), Family("zero3", tp, pp)):
                plan = family.plan(dp)
                if plan is None:
                    continue
                need = self.need(plan, fit.gpu_count, tp, pp)
                if need <= limit:
                    est = self.estimate(plan, fit.gpu_count, tp, pp)
                    found.append(PlanFit(plan, fit.nodes, fit.gpu_count, need, est, tp, pp))
                    break
        return found

    def _families(self, gpus_per_node: int) -> Iterator[Family]:
        """Plan families in search order (see the module docstring)."""
        job = self._job
        if job.tensor_parallel > 1 or job.method == "qlora":
            for kind in ("replicated", "zero2", "zero3"):
                yield Family(kind, job.tensor_parallel, 1)
            return
        yield from (Family(kind, 1, 1) for kind in ("replicated", "zero2", "zero3"))
        degrees = [1, *self._tensor_degrees(gpus_per_node)]
        for tp in degrees[1:]:
            yield from (Family(kind, tp, 1) for kind in ("replicated", "zero3"))
        tp = degrees[-1]
        for pp in _DEGREES:
            if pp > job.model.num_layers or job.model.num_decoder_layers:
                break
            yield from (Family(kind, tp, pp) for kind in ("replicated", "zero3"))

    def _tensor_degrees(self, gpus_per_node: int) -> list[int]:
        m = self._job.model
        return [
            d
            for d in _DEGREES
            if d <= gpus_per_node
            and gpus_per_node % d == 0
            and m.num_heads % d == 0
            and m.num_kv_heads % d == 0
        ]

    def _first(
        self,
        families: list[Family],
        gpus_per_node: int,
        limit: float,
        node_counts: range,
        host_ram_bytes: float | None,
    ) -> PlanFit | NoFit | None:
        """The plan earliest in the order whose need is under `limit` bytes per GPU, or the
        smallest need seen, or None when no node count suits any family."""
        best: PlanFit | None = None
        closest: NoFit | None = None
        for family in families:
            counts = _valid_counts(node_counts, gpus_per_node, family)
            if best is not None:  # only fewer nodes can beat an earlier family
                counts = counts[: _index_below(counts, best.nodes)]
            if not counts:
                continue
            found, miss = self._bisect(family, counts, gpus_per_node, limit, host_ram_bytes)
            if found is not None and (best is None or found.position < best.position):
                best = found
            if miss is not None and (closest is None or _closer(miss, closest)):
                closest = miss
        return best or closest

    def _bisect(
        self,
        family: Family,
        counts: range,
        gpus_per_node: int,
        limit: float,
        host_ram_bytes: float | None,
    ) -> tuple[PlanFit | None, NoFit | None]:
        """The smallest node count in `counts` where `family` fits (needs shrink with nodes),
        and the miss at the largest count when it fits nowhere."""

        def attempt(nodes: int) -> tuple[PlanFit | None, NoFit]:
            gpus = nodes * gpus_per_node
            dp = gpus // (family.tensor * family.pipeline)
            plan = family.plan(dp)
            assert plan is not None  # `_valid_counts` keeps data ranks the plan needs
            need = self.need(plan, gpus, family.tensor, family.pipeline)
            est = self.estimate(plan, gpus, family.tensor, family.pipeline)
            short = family.kind == "offload" and not _host_holds(est, gpus_per_node, host_ram_bytes)
            miss = NoFit(need, plan, gpus, short and need <= limit, family.tensor, family.pipeline)
            if need <= limit and not short:
                fit = PlanFit(plan, nodes, gpus, need, est, family.tensor, family.pipeline)
                return fit, miss
            return None, miss

        # Fewest nodes first: most jobs fit there, and a machine shape sold both alone and as
        # clusters then shares that estimate; then the most, where a miss is reported.
        found, miss = attempt(counts[0])
        if found is not None or len(counts) == 1:
            return found, None if found is not None else miss
        found, miss = attempt(counts[-1])
        if found is None:
            return None, miss
        low, high = 1, len(counts) - 1  # counts[0] misses, counts[high] fits
        probe = 1
        while probe < high:  # galloping (indices 1, 2, 4, ...): few nodes are the usual answer
            fit, _ = attempt(counts[probe])
            if fit is not None:
                high, found = probe, fit
                break
            low, probe = probe + 1, probe * 2
        while low < high:
            middle = (low + high) // 2
            fit, _ = attempt(counts[middle])
            if fit is not None:
                high, found = middle, fit
            else:
                low = middle + 1
        return found, None


@lru_cache(maxsize=32)
def search_for(job: EstimateInput, margin: float, estimate_fn: EstimateFn) -> PlanSearch:
    """The plan search of a job, shared across rankings (a user refining a budget re-ranks the
    same job: its fits are deterministic, so they are searched once)."""
    return PlanSearch(job, margin, estimate_fn)


def forget_searches() -> None:
    """Drop the plan searches and estimates kept across rankings, and what the estimator
    remembers per job (benchmarks replay new jobs)."""
    search_for.cache_clear()
    _remembered.cache_clear()
    forget_remembered()


def _valid_counts(node_counts: range, gpus_per_node: int, family: Family) -> range:
    """The node counts whose GPUs split into whole tensor x pipeline groups, with at least two
    data ranks where the family shards over them (a range: indexable for bisection)."""
    group = family.tensor * family.pipeline
    if family.tensor > gpus_per_node and gpus_per_node % family.tensor:
        return range(0)
    step = group // gcd(group, gpus_per_node)
    first = max(node_counts.start, 1)
    first += -first % step
    if family.kind in ("zero2", "zero3"):
        while first < node_counts.stop and first * gpus_per_node // group < 2:
            first += step
    return range(first, node_counts.stop, step)


def _index_below(counts: range, nodes: int) -> int:
    """How many of `counts` are below `nodes`."""
    return len(range(counts.start, min(nodes, counts.stop), counts.step))


def _closer(miss: NoFit, other: NoFit) -> bool:
    return miss.need_per_gpu_bytes < other.need_per_gpu_bytes


def _smaller_need(without: NoFit, offload: PlanFit | NoFit | None) -> PlanFit | NoFit:
    """The offload result if it fits, else whichever failure came closer."""
    if offload is None:
        return without
    if isinstance(offload, PlanFit) or offload.host_ram_short:
        return offload
    return offload if offload.need_per_gpu_bytes < without.need_per_gpu_bytes else without


@lru_cache(maxsize=ESTIMATE_CACHE_SIZE)
def _remembered(
    estimate_fn: EstimateFn,
    job: EstimateInput,
    plan: PlanName,
    gpu_count: int,
    tensor: int,
    pipeline: int,
) -> MemoryEstimate:
    """Estimates shared across rankings: the estimator is pure, and a user refining a budget or a
    provider list re-ranks the same job many times. Callers must not mutate the result."""
    return estimate_fn(plan_input(job, plan, gpu_count, tensor, pipeline))


def _host_holds(est: MemoryEstimate, gpus_per_node: int, host_ram_bytes: float | None) -> bool:
    """The offloaded optimizer states of one node's GPU processes fit in its RAM (unknown RAM
    counts as fitting)."""
    if host_ram_bytes is None:
        return True
    return est.cpu_offload_bytes * gpus_per_node <= host_ram_bytes
