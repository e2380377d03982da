"""Invariants of the ranking, checked on random synthetic catalogs (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes.catalogs import instance
from tests.fakes.jobs import bare_input
from tools.catalog.instances import Instance
from tools.memory import estimate
from tools.ranking import RankRequest, Workload, rank
from tools.ranking.plans import PlanFit, PlanName, plan_engine, plan_input
from tools.ranking.prepare import checkpoint_bytes
from tools.ranking.search import PlanSearch
from tools.units import GIB

FAST = settings(max_examples=25, deadline=None)
PLANS: list[PlanName] = ["ddp", "zero2", "zero3", "zero3_offload"]
GPUS = ["L4", "RTX4090", "A100-80GB-SXM", "H100-SXM", "B200"]
JOB = bare_input(model="meta-llama/Llama-2-7b-hf", method="lora", gradient_checkpointing="full")


@st.composite
def offers(draw: st.DrawFn, name: str) -> Instance:
    count = draw(st.sampled_from([1, 2, 4, 8]))
    price = draw(st.floats(min_value=0.1, max_value=100))
    spot = draw(st.none() | st.floats(min_value=0.1, max_value=100))
    extra: dict[str, Any] = {
        "billing_granularity": draw(st.sampled_from(["second", "minute", "hour"])),
        "min_charge_seconds": draw(st.sampled_from([0, 60, 3600])),
        "multi_node": draw(st.booleans()),
        "network": draw(st.sampled_from(["infiniband", "roce", "ethernet"])),
        "spot_price_per_hour": spot,
    }
    return instance(name, draw(st.sampled_from(GPUS)), count, price, **extra)


@st.composite
def catalogs(draw: st.DrawFn) -> list[Instance]:
    size = draw(st.integers(min_value=1, max_value=5))
    return [draw(offers(f"i{i}")) for i in range(size)]


def _request(**constraints: Any) -> RankRequest:
    return RankRequest(job=JOB, workload=Workload(tokens=5e7), constraints=constraints)


@FAST
@given(
    catalog=catalogs(),
    budget=st.floats(min_value=0.5, max_value=500),
    extra=st.floats(min_value=0, max_value=500),
    spot=st.sampled_from(["never", "allowed"]),
)
def test_raising_the_budget_never_removes_an_option(
    catalog: list[Instance], budget: float, extra: float, spot: str
) -> None:
    low = {r.instance_id for r in rank(_request(budget=budget, spot=spot), catalog).ranked}
    high = {r.instance_id for r in rank(_request(budget=budget + extra, spot=spot), catalog).ranked}
    assert low <= high, f"budget {budget} -> {budget + extra} dropped {low - high}"


@FAST
@given(
    offer=offers("base"),
    prices=st.tuples(st.floats(0.1, 100), st.floats(0.1, 100)).filter(lambda p: p[0] < p[1]),
    cheap_first=st.booleans(),
    objective=st.sampled_from(["cost", "time", "price"]),
)
def test_with_equal_time_a_lower_price_never_ranks_lower(
    offer: Instance, prices: tuple[float, float], cheap_first: bool, objective: str
) -> None:
    names = ("a", "b") if cheap_first else ("b", "a")  # the id tie-break must not decide
    cheap, dear = (
        offer.model_copy(update={"instance_type": n, "id": f"testcloud/{n}", "price_per_hour": p})
        for n, p in zip(names, prices, strict=True)
    )
    request = _request().model_copy(update={"objective": objective})
    ranked = [r.instance_id for r in rank(request, [dear, cheap]).ranked]
    if ranked:
        assert ranked.index(cheap.id) < ranked.index(dear.id), f"{objective}: {prices}"


@FAST
@given(
    catalog=catalogs(),
    rate=st.floats(min_value=0, max_value=0.3),
    restart=st.floats(min_value=0, max_value=1),
)
def test_spot_expected_cost_covers_the_compute_time(
    catalog: list[Instance], rate: float, restart: float
) -> None:
    request = _request(spot="allowed")
    request.assumptions.spot = request.assumptions.spot.model_copy(
        update={"preemption_rate_per_hour": rate, "restart_hours": restart}
    )
    by_id = {inst.id: inst for inst in catalog}
    for row in rank(request, catalog).ranked:
        spot_price = by_id[row.instance_id].spot_price_per_hour
        if row.spot_total_cost is None or spot_price is None:
            continue
        floor = spot_price * row.nodes * row.compute_hours
        assert row.spot_total_cost >= floor * (1 - 1e-12), f"{row.instance_id}: below price x hours"
        assert row.spot_hours is not None and row.spot_hours >= row.compute_hours, "wall >= compute"


@FAST
@given(
    small=st.floats(min_value=5e8, max_value=3e10),
    factor=st.floats(min_value=1.0, max_value=4.0),
    plan=st.sampled_from(PLANS),
    gpus=st.sampled_from([2, 8, 16]),
)
def test_a_larger_model_never_needs_less_memory(
    small: float, factor: float, plan: PlanName, gpus: int
) -> None:
    def search(params: float) -> PlanSearch:
        job = bare_input(model=f"{params:.6g}", method="full", gradient_checkpointing="full")
        return PlanSearch(job, 0.10, estimate)

    smaller, larger = search(small), search(small * factor)
    need_small = smaller.estimate(plan, gpus).per_gpu.total
    need_large = larger.estimate(plan, gpus).per_gpu.total
    assert need_small <= need_large, f"{plan} on {gpus} GPUs"
    # and in the ranking's terms: the larger model never gets an earlier plan
    fit_small = smaller.fit(8, 80 * GIB, range(1, 5), None)
    fit_large = larger.fit(8, 80 * GIB, range(1, 5), None)
    if isinstance(fit_large, PlanFit):
        assert isinstance(fit_small, PlanFit), "the smaller model fits wherever the larger does"
        assert fit_small.position <= fit_large.position, "no later plan"
        if fit_small.plan == fit_large.plan and fit_small.nodes == fit_large.nodes:
            assert fit_small.need_per_gpu_bytes <= fit_large.need_per_gpu_bytes, "same plan"


# Checkpoint bytes per parameter of a full AdamW fine-tune, by precision and engine: PyTorch
# autocast keeps fp32 weights (the master) + m and v; DeepSpeed a 16-bit model + fp32 master +
# m and v; fp32 needs no master; pure bf16 keeps bf16 weights and bf16 moments (2 + 2 x 2).
CHECKPOINT_BYTES = {
    ("bf16-mixed", "pytorch"): 12,
    ("bf16-mixed", "deepspeed"): 14,
    ("fp16-mixed", "pytorch"): 12,
    ("fp16-mixed", "deepspeed"): 14,
    ("fp32", "pytorch"): 12,
    ("fp32", "deepspeed"): 12,
    ("bf16", "pytorch"): 6,
    ("bf16", "deepspeed"): 6,
}


@FAST
@given(
    params=st.floats(min_value=1e8, max_value=1e11),
    precision=st.sampled_from(["bf16-mixed", "fp16-mixed", "fp32", "bf16"]),
    plan=st.sampled_from(["single", "ddp", *PLANS, "single_offload"]),
    many=st.sampled_from([2, 8, 16]),
)
def test_checkpoint_bytes_follow_the_plans_engine(
    params: float, precision: str, plan: PlanName, many: int
) -> None:
    job = bare_input(model=f"{params:.6g}", method="full", precision=precision)
    gpus = 1 if plan.startswith("single") else many
    est = estimate(plan_input(job, plan, gpus))
    expected = CHECKPOINT_BYTES[(precision, plan_engine(job, plan))] * est.total_params
    assert checkpoint_bytes(job, est) == expected, f"{precision}, {plan} on {gpus} GPUs"
