"""What a ranking computes once per request, and the records it builds per shape and instance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tools.catalog.instances import Instance
from tools.enums import Billing, Pricing
from tools.memory import EstimateInput, MemoryEstimate
from tools.ranking.costs import SECONDS_PER_HOUR, SpotRun, billed_seconds
from tools.ranking.models import ExclusionKind, JobSummary, RankRequest
from tools.ranking.plans import EstimateFn, PlanFit, PlanName, PlanSearch, plan_engine
from tools.ranking.throughput import training_flops

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
    peak: float
    peak_label: str
    mfu: float
    mfu_notes: tuple[str, ...]
    compute_hours: float
    dequant_hours: float
    checkpoint_bytes: int  # what one checkpoint of this plan writes
    spot_run: SpotRun | None
    spot_problem: str | None
    billed: dict[tuple[str, int], tuple[float, float | None]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # fit and speed reasons, filled on first use

    @property
    def hours(self) -> float:
        """Uninterrupted hours: compute plus QLoRA de-quantization."""
        return self.compute_hours + self.dequant_hours

    def billed_seconds(self, granularity: Billing, min_charge: int) -> tuple[float, float | None]:
        """Seconds billed per node on demand and (expected) on spot, for these billing terms."""
        key = (granularity, min_charge)
        found = self.billed.get(key)
        if found is None:
            on_demand = billed_seconds(self.hours * SECONDS_PER_HOUR, granularity, min_charge)
            spot = None
            if self.spot_run is not None:
                spot_s = self.spot_run.wall_hours * SECONDS_PER_HOUR
                spot = billed_seconds(spot_s, granularity, min_charge)
            found = self.billed[key] = (on_demand, spot)
        return found


@dataclass(slots=True)  # not frozen: frozen dataclasses set every field through a slow path
class Row:
    """A qualifying instance at its chosen pricing (one per qualifying instance: kept cheap)."""

    key: tuple[float, float, float, str]
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

    request: RankRequest
    search: PlanSearch
    margin: float
    precision: str
    tokens: float
    training_flops: float
    frozen_params: int
    recompute_forward: bool
    tokens_per_micro_step: int
    summary: JobSummary
    sort_key: Callable[[float, float, float], tuple[float, float, float]]
    has_limits: bool


def prepare_job(request: RankRequest, estimate_fn: EstimateFn) -> PreparedJob:
    """Resolve the model, count tokens and FLOPs, size checkpoints; set up the plan search."""
    job, cons = request.job, request.constraints
    margin = request.assumptions.memory_margin
    search = PlanSearch(job, margin, estimate_fn)
    base = search.estimate("single", job.tensor_parallel)  # no data parallelism, no sharding
    total, trainable = int(base.total_params), int(base.trainable_params)
    active = _active_params(job, total)
    tokens = request.workload.total_tokens(job.seq_len)
    recompute = recomputes_forward(job)
    flops = training_flops(job.method, active, trainable, tokens, recompute)
    frozen = total if job.method in LORA_METHODS else 0  # total_params excludes the adapters
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
    return PreparedJob(
        request=request,
        search=search,
        margin=margin,
        precision=job.precision,
        tokens=tokens,
        training_flops=flops,
        frozen_params=frozen,
        recompute_forward=recompute,
        tokens_per_micro_step=job.micro_batch_size * job.seq_len,
        summary=summary,
        sort_key=SORT_KEYS[request.objective],
        has_limits=any(
            limit is not None
            for limit in (cons.max_price_per_hour, cons.budget, cons.deadline_hours)
        ),
    )


def _active_params(job: EstimateInput, total: int) -> int:
    """Parameters used per token: the active experts for MoE models, else all of them."""
    return int(job.model.active_params()) if job.model.is_moe else total


def recomputes_forward(job: EstimateInput) -> bool:
    """Full activation checkpointing runs every forward twice. Selective recomputation redoes
    only attention scores, a small share of the FLOPs, and is counted as none."""
    return job.gradient_checkpointing == "full"


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


def job_assumptions(request: RankRequest) -> list[str]:
    """The ranking's own assumptions, in words, for the job summary."""
    a = request.assumptions
    t, s = a.throughput, a.spot
    mfu = (
        f"MFU {t.mfu_override:.2f} for every cluster (given)"
        if t.mfu_override is not None
        else f"MFU {t.mfu_single_node:.2f} on one GPU or NVLink node;"
        f" x{t.pcie_multi_gpu_factor:.2f} PCIe-only multi-GPU;"
        f" multi-node x{t.infiniband_factor:.2f} InfiniBand,"
        f" x{t.roce_factor:.2f} RoCE, x{t.ethernet_factor:.2f} Ethernet;"
        f" x{t.offload_factor:.2f} with CPU offload"
    )
    return [
        f"memory safety margin {a.memory_margin:.0%}: need x {1 + a.memory_margin:g} must fit",
        "training FLOPs 6·N per token (full), 4·N + 6·adapters (LoRA/QLoRA), +2·N with full"
        " checkpointing; N = active parameters",
        mfu,
        f"QLoRA de-quantization: {t.qlora_dequant_bytes_per_param:g} B per frozen parameter per"
        " pass at peak memory bandwidth",
        f"spot: {s.preemption_rate_per_hour:g} interruptions per node-hour; checkpoints written at"
        f" {s.storage_bandwidth_bytes_per_s / 1e9:g} GB/s per node; {s.restart_hours * 60:g} min"
        " per restart; Young/Daly interval sqrt(2·C·MTBF)",
        "billing: each node rounded up to its billing unit, then to the minimum charge",
    ]
