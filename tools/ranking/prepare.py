"""What a ranking computes once per request, and the records it builds per shape and instance."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

from tools.catalog.instances import Instance
from tools.enums import Billing, Pricing
from tools.memory import EstimateInput, MemoryEstimate
from tools.ranking.costs import SECONDS_PER_HOUR, SpotAssumptions, SpotRun, billed_seconds
from tools.ranking.images import ImageRankRequest, ImageSearch
from tools.ranking.models import ExclusionKind, JobSummary, OptionTemplate, RankRequest
from tools.ranking.plans import EstimateFn, PlanFit, PlanName, is_sharded, plan_engine
from tools.ranking.search import PlanSearch, search_for
from tools.ranking.time.image_step import ImageWork
from tools.ranking.time.step import RunTime
from tools.ranking.time.work import TrainingWork, training_work
from tools.ranking.wording import job_assumptions

LORA_METHODS = ("lora", "qlora")

# Sort keys (price per hour, hours, cost) -> the objective's figure first, then the other two.
SORT_KEYS: dict[str, Callable[[float, float, float], tuple[float, float, float]]] = {
    "cost": lambda price, hours, cost: (cost, hours, price),
    "time": lambda price, hours, cost: (hours, cost, price),
    "price": lambda price, hours, cost: (price, cost, hours),
}


@dataclass(frozen=True, slots=True)
class Reject:
    """Why an instance is left out."""

    kind: ExclusionKind
    reason: str


@dataclass(frozen=True, slots=True)
class ShapeResult:
    """Everything about one machine shape that does not depend on its price."""

    fit: PlanFit
    vram_bytes: int
    run: RunTime  # uninterrupted training
    setup_hours: float  # before the first step, billed like training
    checkpoint_bytes: int  # what one checkpoint of this plan writes
    on_demand_run: SpotRun  # the training's expected course with hardware failures
    spot_run: SpotRun | None  # ... with failures and spot interruptions
    spot_problem: str | None
    billed: dict[tuple[str, int], tuple[float, float | None]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # fit and speed reasons, filled on first use
    template: list[OptionTemplate] = field(default_factory=list)  # its rows' shared option fields

    @property
    def hours(self) -> float:
        """Expected on-demand wall hours: setup plus training with its failure restarts."""
        return self.setup_hours + self.on_demand_run.wall_hours

    @property
    def spot_hours(self) -> float | None:
        """Expected spot wall hours: setup plus training with failures and interruptions."""
        return None if self.spot_run is None else self.setup_hours + self.spot_run.wall_hours

    @property
    def uninterrupted_hours(self) -> float:
        """Setup plus training without any interruption."""
        return self.setup_hours + self.run.hours

    def billed_seconds(self, granularity: Billing, min_charge: int) -> tuple[float, float | None]:
        """Seconds billed per node on demand and (expected) on spot, for these billing terms."""
        key = (granularity, min_charge)
        found = self.billed.get(key)
        if found is None:
            on_demand = billed_seconds(self.hours * SECONDS_PER_HOUR, granularity, min_charge)
            spot = None
            spot_hours = self.spot_hours
            if spot_hours is not None:
                spot = billed_seconds(spot_hours * SECONDS_PER_HOUR, granularity, min_charge)
            found = self.billed[key] = (on_demand, spot)
        return found


@dataclass(slots=True)  # not frozen: frozen dataclasses set every field through a slow path
class Row:
    """A qualifying instance at its chosen pricing (one per qualifying instance: kept cheap)."""

    key: tuple[bool, float, float, float, str]  # tight first, then the objective's order
    instance: Instance
    shape: ShapeResult
    pricing: Pricing
    price_per_hour: float
    hours: float
    total_cost: float
    on_demand_cost: float
    spot_cost: float | None


@dataclass(frozen=True, slots=True)
class PreparedJob:
    """The request plus the figures every row shares."""

    request: RankRequest | ImageRankRequest
    search: PlanSearch | ImageSearch
    margin: float
    precision: str
    tokens: float
    tokens_per_epoch: float
    training_flops: float
    work: TrainingWork | ImageWork
    total_params: int
    checkpoints: dict[PlanName, int]  # bytes one checkpoint writes, per engine group
    failures_only: SpotAssumptions  # the spot terms without preemptions: an on-demand run
    summary: JobSummary
    sort_key: Callable[[float, float, float], tuple[float, float, float]]
    has_limits: bool
    # what the ranking found per machine shape (`shape_caches`): by the instance's shape fields,
    # and by (GPU, links, fit) for shapes that differ only in host RAM
    shapes: dict[tuple[object, ...], ShapeResult | Reject] = field(default_factory=dict)
    shape_results: dict[tuple[object, ...], ShapeResult | Reject] = field(default_factory=dict)


ShapeCache = dict[tuple[object, ...], ShapeResult | Reject]
SHAPE_CACHE_SIZE = 32  # requests whose shape results are kept (a few hundred shapes each)
_shape_caches: OrderedDict[tuple[object, ...], tuple[ShapeCache, ShapeCache]] = OrderedDict()
_shape_lock = Lock()


def forget_shapes() -> None:
    """Drop the shape results kept across rankings (benchmarks time rankings without them)."""
    with _shape_lock:
        _shape_caches.clear()


def shape_caches(request: RankRequest, estimate_fn: EstimateFn) -> tuple[ShapeCache, ShapeCache]:
    """The shape results of earlier rankings of the same job, shared (bounded, most recent
    kept): plan, hours, setup and failure and spot courses of a machine shape depend on the job,
    the workload, the assumptions, the estimator and the GPU-count, link and spot rules, never
    on prices, budgets, the objective or which providers, regions and GPUs are asked for, so a
    user refining those re-ranks without redoing any shape (the estimates and plan searches
    are shared the same way: `search.search_for`). Callers must not mutate the results."""
    cons = request.constraints
    key = (
        request.job,
        estimate_fn,
        request.workload.model_dump_json(),
        request.assumptions.model_dump_json(),
        (cons.min_gpus, cons.max_gpus, cons.max_nodes, cons.interconnect, cons.spot),
    )
    with _shape_lock:
        found = _shape_caches.get(key)
        if found is None:
            found = _shape_caches[key] = ({}, {})
            if len(_shape_caches) > SHAPE_CACHE_SIZE:
                _shape_caches.popitem(last=False)
        else:
            _shape_caches.move_to_end(key)
    return found


def request_terms(request: RankRequest | ImageRankRequest) -> dict[str, Any]:
    """The `PreparedJob` fields that follow from the request alone, for either kind of job: the
    spot terms without preemptions (an on-demand run), the objective's sort key, and whether
    any money or time limit applies."""
    cons = request.constraints
    return {
        "failures_only": request.assumptions.spot.model_copy(
            update={"preemption_rate_per_hour": 0.0}
        ),
        "sort_key": SORT_KEYS[request.objective],
        "has_limits": any(
            limit is not None
            for limit in (cons.max_price_per_hour, cons.budget, cons.deadline_hours)
        ),
    }


def prepare_job(request: RankRequest, estimate_fn: EstimateFn) -> PreparedJob:
    """Resolve the model, count tokens and FLOPs, size checkpoints; set up the plan search."""
    job, a = request.job, request.assumptions
    margin = a.memory_margin
    # a pipeline fills with >= stages micro-batches, so 1F1B keeps `stages` in flight
    search = search_for(job, margin, estimate_fn)
    base = search.described("single", job.tensor_parallel)  # no data parallelism, no sharding
    total, trainable = int(base.total_params), int(base.trainable_params)
    active = _active_params(job, total)
    tokens = request.workload.total_tokens(job.seq_len)
    work = training_work(job, tokens, total, trainable, a.throughput)
    flops = work.flops.total * tokens
    adapter = request.assumptions.adapter_bytes_per_param
    # A checkpoint per engine the plans use (unsharded figures do not depend on the GPU count).
    per_plan = {
        plan: checkpoint_bytes(job, search.estimate(plan, job.tensor_parallel), adapter)
        for plan in _PLAN_GROUPS
    }
    summary = JobSummary(
        model=job.model.id,
        method=job.method,
        precision=job.precision,
        total_params=total,
        active_params=active,
        trainable_params=trainable,
        tokens=tokens,
        training_flops=flops,
        checkpoint_bytes=max(per_plan.values()),
        objective=request.objective,
        spot_policy=request.constraints.spot,
        memory_margin=margin,
        assumptions=[
            *job_assumptions(request),
            *engine_assumptions(job, per_plan, trainable),
            *base.assumptions,
        ],
    )
    shapes, shape_results = shape_caches(request, estimate_fn)
    return PreparedJob(
        request=request,
        search=search,
        margin=margin,
        precision=job.precision,
        tokens=tokens,
        tokens_per_epoch=tokens / request.workload.epochs,
        training_flops=flops,
        work=work,
        total_params=total,
        checkpoints=per_plan,
        summary=summary,
        **request_terms(request),
        shapes=shapes,
        shape_results=shape_results,
    )


def _active_params(job: EstimateInput, total: int) -> int:
    """Parameters used per token: the active experts for MoE models, else all of them."""
    return int(job.model.active_params()) if job.model.is_moe else total


def plan_checkpoint(job: PreparedJob, plan: PlanName) -> int:
    """Bytes one checkpoint of `plan` writes: its engine group's figure (single GPU and DDP
    follow the job's engine, the ZeRO and offload plans DeepSpeed's)."""
    return job.checkpoints["zero2" if is_sharded(plan) else "single"]


def checkpoint_bytes(
    job: EstimateInput, est: MemoryEstimate, adapter_bytes: float | None = None
) -> int:
    """Bytes one checkpoint writes to resume the run: the trainable weights and the optimizer
    state (the fp32 master included where the engine keeps one apart), as `est`'s engine holds
    them. Full AdamW under bf16-mixed: 12 B per parameter under PyTorch autocast (fp32 weights,
    which are the master, + two fp32 moments), 14 B under DeepSpeed (16-bit weights + fp32
    master + moments). LoRA/QLoRA: the adapters and their state; the frozen base is reloaded.

    Trainable weights are as wide as their gradients (full: all weights), so the estimator's
    gradient bytes size the adapters; `adapter_bytes` (per adapter parameter) overrides that.
    The unsharded figures are per tensor-parallel rank, so the whole state is TP times them.
    """
    states, tp = est.model_states, job.tensor_parallel
    lora = job.method in LORA_METHODS
    weights = (states.unsharded_gradients if lora else states.unsharded_weights) * tp
    if lora and adapter_bytes is not None:
        weights = int(est.trainable_params * adapter_bytes)
    return weights + states.unsharded_optimizer * tp


_ENGINE_TEXT = {
    "pytorch": ("PyTorch", "torch.autocast over fp32 weights"),
    "deepspeed": ("DeepSpeed", "16-bit weights and gradients, fp32 master in the optimizer"),
}
# The plan groups, the plan whose estimate stands for each, and who writes a checkpoint.
_PLAN_GROUPS: dict[PlanName, tuple[str, str]] = {
    "single": ("single GPU and DDP", "rank 0 writes it alone"),
    "zero2": ("ZeRO-2, ZeRO-3/FSDP and offload plans", "every node writes its shard"),
}


def engine_assumptions(
    job: EstimateInput, checkpoints: dict[PlanName, int], trainable: int
) -> list[str]:
    """The plans' engines and what a checkpoint holds under each (`checkpoints`: bytes for the
    single-GPU plan and for a ZeRO plan), in words."""
    engines = {plan: _ENGINE_TEXT[plan_engine(job, plan)] for plan in _PLAN_GROUPS}
    (group, _), (sharded, _) = _PLAN_GROUPS.values()
    single_name, single_how = engines["single"]
    sizes = ", ".join(
        f"{checkpoints[plan] / max(trainable, 1):.3g} B per trainable parameter under"
        f" {engines[plan][0]} ({name}: {writers})"
        for plan, (name, writers) in _PLAN_GROUPS.items()
    )
    return [
        f"engines: {group} sized as {single_name} runs them ({single_how}); {sharded} as"
        f" DeepSpeed does ({_ENGINE_TEXT['deepspeed'][1]}) whatever the job's engine, as the"
        " estimator's PyTorch engine keeps autocast's 16-bit weight copies unsharded; FSDP with"
        " mixed precision shards as many bytes per parameter under AdamW (4 + 4 + 8 against"
        " 2 + 2 + 12)",
        f"spot checkpoints hold the trainable weights and the optimizer state: {sizes}",
    ]
