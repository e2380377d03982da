"""Rank cloud instances for a training job by total cost, time to result, or hourly price.

For each instance: screen it against the hard constraints; find the cheapest parallel plan that
fits (`tools.ranking_plans`); estimate hours from training FLOPs and an MFU model
(`tools.throughput`); price the run on demand and on spot with billing rounding and the spot
interruption model (`tools.costs`); keep it when a pricing meets the budget, deadline and price
cap. Everything that depends only on the machine shape (GPU, count, VRAM, links) is computed once
per shape, so a catalog of many regions and providers costs little more than its shapes.

Order: by the objective, ties broken by the other two figures and then the instance id, so the
ranking is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tools.catalog import Instance
from tools.costs import SpotImpracticalError, SpotRun, billed_cost, expected_spot_run
from tools.errors import UnknownNameError
from tools.estimator import estimate
from tools.gpus import lookup_gpu
from tools.ranking_job import PreparedJob, Reject, Row, ShapeResult, prepare_job
from tools.ranking_models import (
    Constraints,
    Excluded,
    JobSummary,
    Objective,
    Pricing,
    RankedOption,
    RankingAssumptions,
    RankRequest,
    RankResult,
    Workload,
)
from tools.ranking_plans import PLAN_LABELS, EstimateFn, NoFit, PlanFit, is_offload
from tools.ranking_text import excluded_memory_reason, ranked_reasons, usd
from tools.throughput import (
    ClusterShape,
    cluster_mfu,
    compute_hours,
    peak_tflops,
    qlora_dequant_hours,
)
from tools.units import GIB

__all__ = [
    "Constraints",
    "Excluded",
    "JobSummary",
    "RankRequest",
    "RankResult",
    "RankedOption",
    "RankingAssumptions",
    "Workload",
    "rank",
]


def rank(
    request: RankRequest, instances: Iterable[Instance], estimate_fn: EstimateFn = estimate
) -> RankResult:
    """Rank `instances` for `request`: qualifying ones best first, the rest with a reason."""
    items = list(instances)
    job = prepare_job(request, estimate_fn)
    wanted_providers = _provider_set(request.constraints, items)
    shapes: dict[tuple[object, ...], ShapeResult | Reject] = {}
    rows: list[Row] = []
    excluded: list[Excluded] = []
    for inst in items:
        outcome = _evaluate(inst, job, wanted_providers, shapes)
        if isinstance(outcome, Reject):
            excluded.append(_excluded(inst, outcome))
        else:
            rows.append(outcome)
    rows.sort(key=lambda row: row.key)
    best = rows[: request.top] if request.top else rows
    ranked = [_ranked_option(i, row, job) for i, row in enumerate(best, start=1)]
    return RankResult(
        job=job.summary,
        ranked=ranked,
        excluded=excluded,
        considered=len(items),
        feasible=len(rows),
    )


def _evaluate(
    inst: Instance,
    job: PreparedJob,
    providers: set[str] | None,
    shapes: dict[tuple[object, ...], ShapeResult | Reject],
) -> Row | Reject:
    """Screen, fit and price one instance."""
    problem = _screen(inst, job.request, providers)
    if problem is not None:
        return problem
    shape = _shape(inst, job, shapes)
    if isinstance(shape, Reject):
        return shape
    return _price(inst, shape, job.request)


def _provider_set(constraints: Constraints, items: list[Instance]) -> set[str] | None:
    """The requested providers, lower-cased; a name the catalog lacks is an error."""
    if constraints.providers is None:
        return None
    known = {inst.provider for inst in items}
    wanted = {p.strip().lower() for p in constraints.providers}
    for name in sorted(wanted - known):
        close = sorted(k for k in known if k[:2] == name[:2]) or sorted(known)[:5]
        raise UnknownNameError("provider", name, close)
    return wanted


def node_range(inst: Instance, constraints: Constraints) -> range:
    """Node counts allowed for this instance type by min/max GPUs and multi-node support."""
    per_node = inst.gpu_count
    low = max(1, math.ceil((constraints.min_gpus or 1) / per_node))
    high = constraints.max_nodes if inst.multi_node else 1
    if constraints.max_gpus is not None:
        high = min(high, constraints.max_gpus // per_node)
    return range(low, high + 1)


def _screen(inst: Instance, request: RankRequest, providers: set[str] | None) -> Reject | None:
    """Hard constraints that need no estimate, cheapest checks first."""
    cons = request.constraints
    if providers is not None and inst.provider not in providers:
        return Reject("provider", f"provider {inst.provider} not requested")
    if cons.regions is not None and not _in_regions(inst, cons.regions):
        return Reject("region", f"not offered in {', '.join(cons.regions)}")
    if not node_range(inst, cons):
        return Reject("gpu_count", _gpu_count_reason(inst, cons))
    link = _link_problem(inst, request)
    if link is not None:
        return Reject("interconnect", link)
    has_spot = inst.spot_available and inst.spot_price_per_hour is not None
    if cons.spot == "required" and not has_spot:
        return Reject("spot", "no spot offer")
    if cons.max_price_per_hour is not None:
        cheapest = _cheapest_node_price(inst, cons, has_spot)
        if cheapest > cons.max_price_per_hour:
            return Reject("price", _over_price(cheapest, cons.max_price_per_hour))
    return None


def _in_regions(inst: Instance, regions: list[str]) -> bool:
    wanted = {r.strip().lower() for r in regions}
    return any(r.lower() in wanted for r in inst.regions)


def _gpu_count_reason(inst: Instance, cons: Constraints) -> str:
    count = f"{inst.gpu_count} GPU{'s' if inst.gpu_count > 1 else ''}"
    if cons.max_gpus is not None and inst.gpu_count > cons.max_gpus:
        return f"has {count} per node, more than the maximum of {cons.max_gpus}"
    if not inst.multi_node:
        return (
            f"has {count} and is not sold as multi-node clusters; at least {cons.min_gpus} wanted"
        )
    return f"no cluster of up to {cons.max_nodes} nodes x {count} gives {cons.min_gpus} or more"


def _link_problem(inst: Instance, request: RankRequest) -> str | None:
    required = request.constraints.interconnect
    if required is not None:
        accepted = {"nvlink", "nvswitch"} if required == "nvlink" else {required}
        if inst.interconnect not in accepted:
            return f"interconnect is {inst.interconnect}; {required} required"
    full = request.job.method in ("full", "pretrain")
    if (
        full
        and inst.gpu_count > 1
        and inst.interconnect == "pcie"
        and not request.assumptions.allow_pcie_multi_gpu_full
    ):
        return "multi-GPU full fine-tune needs NVLink; this node is PCIe"
    return None


def _cheapest_node_price(inst: Instance, cons: Constraints, has_spot: bool) -> float:
    prices = [] if cons.spot == "required" else [inst.price_per_hour]
    if has_spot and cons.spot != "never" and inst.spot_price_per_hour is not None:
        prices.append(inst.spot_price_per_hour)
    return min(prices)


def _over_price(price: float, cap: float) -> str:
    return f"over max price: {usd(price)}/h > {usd(cap)}/h"


def _shape(
    inst: Instance, job: PreparedJob, cache: dict[tuple[object, ...], ShapeResult | Reject]
) -> ShapeResult | Reject:
    """Plan, speed and spot course of the instance's machine shape (cached per shape)."""
    vram = int(inst.vram_per_gpu_gib * GIB)
    ram = inst.ram_gib * GIB if inst.ram_gib is not None else None
    fit = job.search.fit(inst.gpu_count, vram, node_range(inst, job.request.constraints), ram)
    if fit is None:
        tp = job.request.job.tensor_parallel
        return Reject("gpu_count", f"tensor_parallel {tp} needs a multiple of {tp} GPUs")
    if isinstance(fit, NoFit):
        return Reject("memory", excluded_memory_reason(fit, vram, inst, job.margin))
    links = (inst.interconnect, inst.network, inst.network_gbps)
    key = (inst.gpu, inst.gpu_count, vram, *links, fit.plan, fit.nodes)
    found = cache.get(key)
    if found is None:
        found = _evaluate_shape(inst, job, fit, vram)
        cache[key] = found
    return found


def _evaluate_shape(
    inst: Instance, job: PreparedJob, fit: PlanFit, vram: int
) -> ShapeResult | Reject:
    """Speed and spot course of a fitting plan (the same for every price and region)."""
    found = peak_tflops(lookup_gpu(inst.gpu), job.precision)
    if found is None:
        return Reject(
            "throughput", f"no published dense {job.precision} tensor peak for {inst.gpu}"
        )
    peak, label = found
    shape = ClusterShape(
        gpus_per_node=inst.gpu_count,
        nodes=fit.nodes,
        interconnect=inst.interconnect,
        network=inst.network,
        network_gbps=inst.network_gbps,
        offload=is_offload(fit.plan),
    )
    mfu, notes = cluster_mfu(shape, job.request.assumptions.throughput)
    compute = compute_hours(job.training_flops, fit.gpu_count, peak, mfu)
    dequant = _dequant_hours(job, fit, inst)
    run, problem = _spot_course(compute + dequant, fit.nodes, job)
    return ShapeResult(fit, vram, peak, label, mfu, tuple(notes), compute, dequant, run, problem)


def _dequant_hours(job: PreparedJob, fit: PlanFit, inst: Instance) -> float:
    if job.request.job.method != "qlora":
        return 0.0
    return qlora_dequant_hours(
        frozen_params_per_gpu=job.frozen_params,
        tokens=job.tokens,
        gpu_count=fit.gpu_count,
        tokens_per_micro_step=job.tokens_per_micro_step,
        recompute_forward=job.recompute_forward,
        bandwidth_gbs=lookup_gpu(inst.gpu).memory_bandwidth_gbs,
        bytes_per_param=job.request.assumptions.throughput.qlora_dequant_bytes_per_param,
    )


def _spot_course(hours: float, nodes: int, job: PreparedJob) -> tuple[SpotRun | None, str | None]:
    try:
        run = expected_spot_run(hours, job.checkpoint_bytes, nodes, job.request.assumptions.spot)
    except SpotImpracticalError as exc:
        return None, f"spot impractical: {exc}"
    return run, None


def _price(inst: Instance, shape: ShapeResult, request: RankRequest) -> Row | Reject:
    """Price the run on the allowed pricings; keep the best one that meets every limit."""
    nodes = shape.fit.nodes
    gran, minimum = inst.billing_granularity, inst.min_charge_seconds
    on_demand = billed_cost(shape.hours, inst.price_per_hour, gran, minimum, nodes)
    spot_cost = None
    spot_price = inst.spot_price_per_hour if inst.spot_available else None
    if spot_price is not None and shape.spot_run is not None:
        spot_cost = billed_cost(shape.spot_run.wall_hours, spot_price, gran, minimum, nodes)
    policy = request.constraints.spot
    options: list[tuple[Pricing, float, float, float]] = []
    if policy != "required":
        options.append(("on-demand", inst.price_per_hour * nodes, shape.hours, on_demand))
    if policy != "never" and spot_cost is not None and shape.spot_run is not None:
        assert spot_price is not None
        options.append(("spot", spot_price * nodes, shape.spot_run.wall_hours, spot_cost))
    if not options:
        return Reject("spot", shape.spot_problem or "no spot offer")
    options.sort(key=lambda o: objective_key(request.objective, o[1], o[2], o[3]))
    first_problem: Reject | None = None
    for pricing, price, hours, cost in options:
        problem = _limit_problem(request.constraints, pricing, price, hours, cost)
        if problem is None:
            key = (*objective_key(request.objective, price, hours, cost), inst.id)
            return Row(key, inst, shape, pricing, price, hours, cost, on_demand, spot_cost)
        first_problem = first_problem or problem
    assert first_problem is not None
    return first_problem


def objective_key(
    objective: Objective, price: float, hours: float, cost: float
) -> tuple[float, float, float]:
    """Sort key: the objective's figure first, then the other two."""
    if objective == "time":
        return (hours, cost, price)
    if objective == "price":
        return (price, cost, hours)
    return (cost, hours, price)


def _limit_problem(
    cons: Constraints, pricing: Pricing, price: float, hours: float, cost: float
) -> Reject | None:
    tag = " (spot, expected)" if pricing == "spot" else ""
    if cons.max_price_per_hour is not None and price > cons.max_price_per_hour:
        return Reject("price", _over_price(price, cons.max_price_per_hour) + tag)
    if cons.budget is not None and cost > cons.budget:
        return Reject("budget", f"over budget: {usd(cost)} > {usd(cons.budget)}{tag}")
    if cons.deadline_hours is not None and hours > cons.deadline_hours:
        return Reject("deadline", f"over deadline: {hours:.1f} h > {cons.deadline_hours:g} h{tag}")
    return None


def _excluded(inst: Instance, reject: Reject) -> Excluded:
    return Excluded(
        instance_id=inst.id,
        provider=inst.provider,
        instance_type=inst.instance_type,
        gpu=inst.gpu,
        gpu_count=inst.gpu_count,
        kind=reject.kind,
        reason=reject.reason,
    )


def _ranked_option(position: int, row: Row, job: PreparedJob) -> RankedOption:
    inst, shape, fit = row.instance, row.shape, row.shape.fit
    run = shape.spot_run if row.spot_cost is not None else None
    return RankedOption(
        rank=position,
        instance_id=inst.id,
        provider=inst.provider,
        instance_type=inst.instance_type,
        gpu=inst.gpu,
        gpus_per_node=inst.gpu_count,
        nodes=fit.nodes,
        gpu_count=fit.gpu_count,
        vram_per_gpu_bytes=shape.vram_bytes,
        need_per_gpu_bytes=fit.need_per_gpu_bytes,
        margin=shape.vram_bytes / fit.need_per_gpu_bytes - 1.0,
        plan=fit.plan,
        plan_label=PLAN_LABELS[fit.plan],
        pricing=row.pricing,
        price_per_hour=row.price_per_hour,
        hours=row.hours,
        total_cost=row.total_cost,
        compute_hours=shape.hours,
        on_demand_total_cost=row.on_demand_cost,
        spot_total_cost=row.spot_cost,
        spot_hours=run.wall_hours if run else None,
        checkpoint_interval_hours=run.checkpoint_interval_hours if run else None,
        mfu=shape.mfu,
        peak_tflops_per_gpu=shape.peak,
        regions=list(inst.regions),
        source=inst.source,
        as_of=inst.as_of,
        reasons=ranked_reasons(row, job),
    )
