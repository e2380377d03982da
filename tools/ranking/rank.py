"""Rank cloud instances for a training job by total cost, time to result, or hourly price.

For each instance: screen it against the hard constraints; find the first parallel plan that fits
(`tools.ranking.search`); estimate training hours from the kernels, communication and pipeline of
that plan (`tools.ranking.time`), add the setup before the first step and the restarts after
hardware failures; price the run on demand and on spot with billing rounding and the spot
interruption model (`tools.ranking.costs`); keep it when a pricing meets the budget, deadline and
price cap. Everything that depends only on the machine shape (GPU, count, VRAM, links) is computed
once per shape, so a catalog of many regions and providers costs little more than its shapes.

Order: by the objective, ties broken by the other two figures and then the instance id, so the
ranking is deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache, partial
from operator import attrgetter
from typing import Any

from tools.catalog.freshness import PriceAge, price_age, summaries_of_aged
from tools.catalog.instances import DEFAULT_STALE_PRICE_DAYS, Instance
from tools.collector import cyclic_gc_paused
from tools.gpus import GPUSpec, lookup_gpu
from tools.memory import estimate
from tools.ranking.costs import (
    SECONDS_PER_HOUR,
    SpotImpracticalError,
    SpotRun,
    expected_spot_run,
)
from tools.ranking.image_prepare import prepare_image_job
from tools.ranking.images import ImageRankRequest
from tools.ranking.models import (
    Excluded,
    OptionTemplate,
    Pricing,
    RankedOption,
    RankRequest,
    RankResult,
    option_template,
    unchecked_option,
)
from tools.ranking.plans import EstimateFn, NoFit, PlanFit, is_offload, is_sharded, zero_stage
from tools.ranking.prepare import (
    PreparedJob,
    Reject,
    Row,
    ShapeResult,
    plan_checkpoint,
    prepare_job,
)
from tools.ranking.screen import Screen, node_range, over_price, shape_problem
from tools.ranking.text import excluded_memory_reason, plan_text, ranked_reasons, usd
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.comm import ClusterShape, Layout
from tools.ranking.time.goodput import failure_rate_per_node_hour
from tools.ranking.time.image_step import ImageWork, image_run_time
from tools.ranking.time.setup import setup_hours
from tools.ranking.time.step import RunTime, run_time
from tools.ranking.time.work import TrainingWork
from tools.units import GIB

__all__ = ["rank"]

_gpu = lru_cache(maxsize=256)(lookup_gpu)  # the catalog names few GPUs, many times
GC_PAUSE_ROWS = 500  # catalogs this large or larger are ranked with the cycle collector paused


# The fields that decide plan, speed and spot course (the machine shape), and the price terms;
# read with one C-level call each because they are read for every row.
_SHAPE_FIELDS = attrgetter(
    "gpu",
    "gpu_count",
    "vram_per_gpu_gib",
    "interconnect",
    "network",
    "network_gbps",
    "multi_node",
    "ram_gib",
)
_PRICE_FIELDS = attrgetter(
    "billing_granularity",
    "min_charge_seconds",
    "price_per_hour",
    "spot_price_per_hour",
    "spot_available",
)


def rank(
    request: RankRequest | ImageRankRequest,
    instances: Iterable[Instance],
    estimate_fn: EstimateFn = estimate,
    *,
    now: datetime | None = None,
    stale_price_days: int = DEFAULT_STALE_PRICE_DAYS,
) -> RankResult:
    """Rank `instances` for `request`: qualifying ones best first, the rest with a reason.

    now: when given (timezone-aware), every ranked row also carries its price's age and stale
    flag (older than `stale_price_days`), and the result a freshness summary per provider.
    An image-model job (`ImageRankRequest`) is ranked the same way from its own figures
    (`tools.ranking.image_prepare`)."""
    items = instances if isinstance(instances, list) else list(instances)
    if isinstance(request, ImageRankRequest):
        job = prepare_image_job(request)
    else:
        job = prepare_job(request, estimate_fn)
    screen = Screen.build(request.constraints, items)
    shapes = job.shapes  # shared by the rankings of this job (`prepare.shape_caches`)
    rows: list[Row] = []
    excluded: list[Excluded] = []
    with cyclic_gc_paused(len(items) >= GC_PAUSE_ROWS):
        for inst in items:
            outcome = _outcome(inst, job, screen, shapes)
            if isinstance(outcome, Reject):
                excluded.append(Excluded(instance_id=inst.id, gpu=inst.gpu, kind=outcome.kind,
                                         reason=outcome.reason))  # fmt: skip
            else:
                rows.append(outcome)
        by_key = attrgetter("key")
        if request.top:
            best = heapq.nsmallest(request.top, rows, key=by_key)
        else:
            best = sorted(rows, key=by_key)
        ages = [price_age(row.instance, now, stale_price_days) if now else None for row in best]
        pairs = enumerate(zip(best, ages, strict=True), start=1)
        ranked = [_ranked_option(i, row, job, age, stale_price_days) for i, (row, age) in pairs]
    prices = []
    if now is not None:
        aged = [(row.instance, age) for row, age in zip(best, ages, strict=True) if age]
        prices = summaries_of_aged(aged, stale_price_days)
    result = RankResult(job=job.summary, ranked=ranked, excluded=excluded,
                        considered=len(items), feasible=len(rows), prices=prices)  # fmt: skip
    if len(best) < len(rows):
        result.keep_rest(partial(_rest, rows, best, job, now, stale_price_days))
    return result


def _rest(
    rows: list[Row], best: list[Row], job: PreparedJob, now: datetime | None, stale_days: int
) -> list[RankedOption]:
    """The options of `rows` not in `best` (the `top` kept), ranked on after them."""
    kept = {id(row) for row in best}
    rest = sorted((row for row in rows if id(row) not in kept), key=attrgetter("key"))
    return [
        _ranked_option(i, row, job, price_age(row.instance, now, stale_days) if now else None,
                       stale_days)
        for i, row in enumerate(rest, start=len(best) + 1)
    ]  # fmt: skip


def _age_fields(age: PriceAge, reasons: list[str], stale_days: int) -> dict[str, Any]:
    """An option's price-age fields; the provenance reason says the age too."""
    flag = f"; STALE: older than {stale_days} days" if age.stale else ""
    reasons = [
        f"{line} ({age.text}{flag})" if line.startswith("price from ") else line for line in reasons
    ]
    return {"price_age_days": age.age_days, "price_age_hours": age.age_hours,
            "price_age": age.text, "stale": age.stale, "reasons": reasons}  # fmt: skip


def _outcome(
    inst: Instance,
    job: PreparedJob,
    screen: Screen,
    shapes: dict[tuple[object, ...], ShapeResult | Reject],
) -> Row | Reject:
    """Offer constraints first (provider, region, spot, price cap), then the machine shape
    (GPU count, links, memory), then the priced run against the budget and deadline."""
    if screen.active:
        problem = screen.where(inst) or screen.offer(inst)
        if problem is not None:
            return problem
    key = _SHAPE_FIELDS(inst)
    shape = shapes.get(key)
    if shape is None:  # everything about a machine shape is computed once
        shape = shapes[key] = _evaluate_shape(inst, job)
    if isinstance(shape, Reject):
        return shape
    return _price(inst, shape, job)


def _evaluate_shape(inst: Instance, job: PreparedJob) -> ShapeResult | Reject:
    """GPU-count and link rules, then the plan, speed and spot course of a machine shape."""
    nodes = node_range(inst.gpu_count, inst.multi_node, job.request.constraints)
    problem = shape_problem(inst, nodes, job.request)
    if problem is not None:
        return problem
    vram = int(inst.vram_per_gpu_gib * GIB)
    ram = inst.ram_gib * GIB if inst.ram_gib is not None else None
    fit = job.search.fit(inst.gpu_count, vram, nodes, ram)
    if fit is None:
        tp = job.request.job.tensor_parallel
        return Reject("gpu_count", f"tensor_parallel {tp} needs a multiple of {tp} GPUs")
    if isinstance(fit, NoFit):
        return Reject("memory", excluded_memory_reason(fit, vram, inst, job.margin))
    # Shapes that differ only in host RAM share the fit object (RAM only matters to offload
    # plans), and so everything below.
    key = (inst.gpu, inst.interconnect, inst.network, inst.network_gbps, id(fit))
    found = job.shape_results.get(key)
    if found is None:
        found = job.shape_results[key] = _time_shape(inst, fit, vram, job)
    return found


def _time_shape(inst: Instance, fit: PlanFit, vram: int, job: PreparedJob) -> ShapeResult | Reject:
    """Training hours, setup and the expected courses of `fit` on `inst`'s machine shape; on
    several nodes a pipelined layout of the same nodes replaces `fit` when it is faster."""
    shape = ClusterShape(
        gpus_per_node=inst.gpu_count,
        nodes=fit.nodes,
        interconnect=inst.interconnect,
        network=inst.network,
        network_gbps=inst.network_gbps,
    )
    a = job.request.assumptions
    gpu = _gpu(inst.gpu)
    run = _run_time(job.work, gpu, shape, _layout(fit), a.throughput)
    if run is None:
        return Reject(
            "throughput", f"no published dense {job.precision} tensor peak for {inst.gpu}"
        )
    for other in job.search.pipelined(fit, inst.gpu_count, vram):
        faster = _run_time(job.work, gpu, shape, _layout(other), a.throughput)
        if faster is not None and faster.hours < run.hours:
            fit, run = other, faster
    checkpoint = plan_checkpoint(job, fit.plan)
    setup = setup_hours(
        job.total_params, job.tokens_per_epoch, fit.nodes, job.work.method == "pretrain", a.setup
    )
    on_demand, failing = _course(run.hours, fit, checkpoint, job, with_spot=False)
    if on_demand is None:
        return Reject("throughput", (failing or "").replace("spot impractical", "failures"))
    spot, problem_text = None, None
    if job.request.constraints.spot != "never":
        spot, problem_text = _course(run.hours, fit, checkpoint, job, with_spot=True)
    return ShapeResult(fit, vram, run, setup, checkpoint, on_demand, spot, problem_text)


def _run_time(
    work: TrainingWork | ImageWork,
    gpu: GPUSpec,
    shape: ClusterShape,
    layout: Layout,
    a: ThroughputAssumptions,
) -> RunTime | None:
    """Training hours of a language job's tokens, or of an image job's images."""
    if isinstance(work, ImageWork):
        return image_run_time(work, gpu, shape, layout, a)
    return run_time(work, gpu, shape, layout, a)


def _layout(fit: PlanFit) -> Layout:
    return Layout(
        data=fit.data_parallel,
        tensor=fit.tensor_parallel,
        pipeline=fit.pipeline_parallel,
        zero_stage=zero_stage(fit.plan),
        offload=is_offload(fit.plan),
    )


def _course(
    hours: float, fit: PlanFit, checkpoint: int, job: PreparedJob, with_spot: bool
) -> tuple[SpotRun | None, str | None]:
    """The expected course of the training with hardware failures (and spot interruptions);
    under ZeRO every node writes its shard of the checkpoint, without sharding one node
    writes it all."""
    writers = fit.nodes if is_sharded(fit.plan) else 1
    a = job.request.assumptions
    failures = failure_rate_per_node_hour(fit.gpu_count // fit.nodes, a.goodput)
    terms = a.spot if with_spot else job.failures_only
    try:
        run = expected_spot_run(
            hours, checkpoint, fit.nodes, terms, writing_nodes=writers, extra_rate_per_hour=failures
        )
    except SpotImpracticalError as exc:
        return None, f"spot impractical: {exc}"
    return run, None


def _price(inst: Instance, shape: ShapeResult, job: PreparedJob) -> Row | Reject:
    """Price the run on the allowed pricings; keep the best one that meets every limit."""
    nodes = shape.fit.nodes
    granularity, minimum, od_price, spot_price, spot_sold = _PRICE_FIELDS(inst)
    od_seconds, spot_seconds = shape.billed.get((granularity, minimum)) or shape.billed_seconds(
        granularity, minimum
    )
    od_price *= nodes
    on_demand = od_price * od_seconds / SECONDS_PER_HOUR
    spot_cost = None
    if spot_price is not None and spot_seconds is not None and spot_sold:
        spot_price *= nodes
        spot_cost = spot_price * spot_seconds / SECONDS_PER_HOUR
    policy, key = job.request.constraints.spot, job.sort_key
    options: list[tuple[tuple[float, float, float], Pricing, float, float, float]] = []
    if policy != "required":
        hours = shape.hours
        options.append((key(od_price, hours, on_demand), "on-demand", od_price, hours, on_demand))
    if policy != "never" and spot_cost is not None and shape.spot_run is not None:
        assert spot_price is not None
        hours = shape.setup_hours + shape.spot_run.wall_hours
        options.append((key(spot_price, hours, spot_cost), "spot", spot_price, hours, spot_cost))
    if not options:
        return Reject("spot", shape.spot_problem or "no spot offer")
    if len(options) == 2 and options[1][0] < options[0][0]:
        options.reverse()
    first_problem: Reject | None = None
    for sort_key, pricing, price, hours, cost in options:
        problem = _limit_problem(job, pricing, price, hours, cost) if job.has_limits else None
        if problem is None:
            order = (shape.fit.tight, *sort_key, inst.id)  # tight plans after every other
            return Row(order, inst, shape, pricing, price, hours, cost, on_demand, spot_cost)
        first_problem = first_problem or problem
    assert first_problem is not None
    return first_problem


def _limit_problem(
    job: PreparedJob, pricing: Pricing, price: float, hours: float, cost: float
) -> Reject | None:
    cons = job.request.constraints
    tag = " (spot, expected)" if pricing == "spot" else ""
    if cons.max_price_per_hour is not None and price > cons.max_price_per_hour:
        return Reject("price", over_price(price, cons.max_price_per_hour) + tag)
    if cons.budget is not None and cost > cons.budget:
        return Reject("budget", f"over budget: {usd(cost)} > {usd(cons.budget)}{tag}")
    if cons.deadline_hours is not None and hours > cons.deadline_hours:
        return Reject("deadline", f"over deadline: {hours:.1f} h > {cons.deadline_hours:g} h{tag}")
    return None


def _ranked_option(
    position: int, row: Row, job: PreparedJob, age: PriceAge | None, stale_days: int
) -> RankedOption:
    """The ranked row as a result option; with its price's `age`, that age and stale flag
    too."""
    inst, shape = row.instance, row.shape
    run = shape.spot_run if row.spot_cost is not None else None
    reasons = ranked_reasons(row, job)
    aged = {"reasons": reasons} if age is None else _age_fields(age, reasons, stale_days)
    return unchecked_option(
        shape.template[0] if shape.template else _shape_template(shape, inst),
        rank=position,
        instance_id=inst.id,
        provider=inst.provider,
        instance_type=inst.instance_type,
        pricing=row.pricing,
        price_per_hour=row.price_per_hour,
        hours=row.hours,
        total_cost=row.total_cost,
        on_demand_total_cost=row.on_demand_cost,
        spot_total_cost=row.spot_cost,
        spot_hours=shape.spot_hours if run else None,
        checkpoint_interval_hours=run.checkpoint_interval_hours if run else None,
        spot_interruptions=run.expected_interruptions if run else None,
        spot_overhead_hours=run.overhead_hours if run else None,
        host_ram_bytes=round(inst.ram_gib * GIB) if inst.ram_gib else None,
        regions=list(inst.regions),
        source=inst.source,
        as_of=inst.as_of,
        origin=inst.origin,
        fetched_at=inst.fetched_at,
        **aged,
    )


def _shape_template(shape: ShapeResult, inst: Instance) -> OptionTemplate:
    """The option fields every row of a machine shape shares (plan, memory, speed), kept on
    the shape the first time one of its rows is materialised."""
    fit, run = shape.fit, shape.run
    template = option_template(
        gpu=inst.gpu,
        gpus_per_node=inst.gpu_count,
        nodes=fit.nodes,
        gpu_count=fit.gpu_count,
        vram_per_gpu_bytes=shape.vram_bytes,
        need_per_gpu_bytes=fit.need_per_gpu_bytes,
        margin=shape.vram_bytes / fit.need_per_gpu_bytes - 1.0,
        tight=fit.tight,
        plan=fit.plan,
        tensor_parallel=fit.tensor_parallel,
        pipeline_parallel=fit.pipeline_parallel,
        plan_label=plan_text(fit.plan, fit.tensor_parallel, fit.pipeline_parallel),
        compute_hours=shape.uninterrupted_hours,
        setup_hours=shape.setup_hours,
        training_hours=run.hours,
        checkpoint_bytes=shape.checkpoint_bytes,
        mfu=run.utilisation,
        peak_tflops_per_gpu=run.peak_tflops,
        host_ram_need_bytes=fit.estimate.cpu_offload_bytes * inst.gpu_count or None,
    )
    shape.template[:] = [template]  # one step: rankings in threads share shapes
    return template
