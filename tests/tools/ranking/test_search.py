"""The plan search: tensor and pipeline degrees, bisection over node counts, stage memory."""

from __future__ import annotations

from math import ceil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes.jobs import bare_input
from tools.memory import EstimateInput, MemoryBreakdown, MemoryEstimate, estimate
from tools.memory.results import ReportedFigures
from tools.ranking.plans import EstimateFn, NoFit, PlanFit, in_flight_bytes, plan_input
from tools.ranking.search import PlanSearch
from tools.ranking.text import plan_text
from tools.units import GIB

LLAMA_8B = "meta-llama/Llama-3.1-8B"  # 32 heads, 8 key/value heads, 32 layers


def _fake(model_bytes: float, activations: float = 0.0) -> EstimateFn:
    """State divided as ZeRO and tensor parallelism divide it, activations over TP, + 1 GiB."""
    template = estimate(bare_input(model="7e9"))

    def fake(inp: EstimateInput) -> MemoryEstimate:
        ranks = inp.num_gpus
        share = {0: 1.0, 2: 0.25 + 0.75 / ranks, 3: 1.0 / ranks}[inp.zero_stage]
        layers = inp.model.num_layers / 32  # a pipeline stage holds its share of the layers
        on_gpu = model_bytes * share * layers / inp.tensor_parallel
        total = int(on_gpu + activations / inp.tensor_parallel + GIB)
        parts = MemoryBreakdown(weights=total, gradients=0, optimizer=0, activations=0,
                                overhead=0, total=total)  # fmt: skip
        figures = ReportedFigures(allocated=total, reserved=total, device=total, evictable=0,
                                  required=total)  # fmt: skip
        return template.model_copy(
            update={"per_gpu": parts, "figures": figures, "cpu_offload_bytes": 0}
        )

    return fake


def _job(**settings: object) -> EstimateInput:
    return bare_input(model=LLAMA_8B, method="full", **settings)


@pytest.mark.parametrize(
    ("model_gib", "activations_gib", "expected"),
    [
        (50, 0, ("ddp", 1, 1, 1)),  # 51 GiB x 1.1 fits 80
        (400, 0, ("zero3", 1, 1, 1)),  # 400 / 8 + 1 = 51
        # ZeRO-3 on one node: 100 / 8 + 80 + 1 = 93.5; with TP 2 on 4 data ranks:
        # 100 / 4 / 2 + 40 + 1 = 53.5 -> fits (DDP + TP 2 first: 100 / 2 + 41 = 91 does not)
        (100, 80, ("zero3", 1, 2, 1)),
        # 1000 GiB: one node 126 GiB; two nodes 1000 / 16 + 1 = 63.5 -> ZeRO-3 on 2 nodes
        (1000, 0, ("zero3", 2, 1, 1)),
    ],
)
def test_first_fit_with_tensor_parallelism(
    model_gib: int, activations_gib: int, expected: tuple[str, int, int, int]
) -> None:
    search = PlanSearch(_job(), 0.10, _fake(model_gib * GIB, activations_gib * GIB))
    found = search.fit(8, 80 * GIB, range(1, 5), None)
    assert isinstance(found, PlanFit), "fits somewhere"
    got = (found.plan, found.nodes, found.tensor_parallel, found.pipeline_parallel)
    assert got == expected, f"{model_gib} GiB of state, {activations_gib} GiB of activations"


@settings(max_examples=30, deadline=None)
@given(
    model_gib=st.floats(min_value=10, max_value=5000),
    activations_gib=st.floats(min_value=0, max_value=200),
    high=st.integers(min_value=1, max_value=40),
)
def test_bisection_finds_what_a_scan_finds(
    model_gib: float, activations_gib: float, high: int
) -> None:
    """The first fit over a range of node counts is the earliest of the fits on each count."""
    fake = _fake(model_gib * GIB, activations_gib * GIB)
    search = PlanSearch(_job(), 0.10, fake)
    found = search.fit(8, 80 * GIB, range(1, high + 1), None)
    singles = [PlanSearch(_job(), 0.10, fake).fit(8, 80 * GIB, range(n, n + 1), None)
               for n in range(1, high + 1)]  # fmt: skip
    fits = [f for f in singles if isinstance(f, PlanFit)]
    if not fits:
        assert not isinstance(found, PlanFit), "nothing fits on any single count"
        return
    earliest = min(fits, key=lambda f: (f.tight, f.position))  # a tight fit only as a last resort
    assert isinstance(found, PlanFit), "a fit exists"
    assert found.position == earliest.position, "same plan, nodes and degrees as the scan"
    assert found.tight == earliest.tight


@pytest.mark.parametrize(
    ("model_gib", "expected"),
    [
        (70, ("single", False)),  # 71 x 1.1 = 78.1 <= 80: fits with the margin
        (76, ("single", True)),  # 77 fits 80, 84.7 does not: tight, not left out
    ],
)
def test_a_need_under_the_card_but_not_the_margin_is_tight(
    model_gib: float, expected: tuple[str, bool]
) -> None:
    search = PlanSearch(_job(), 0.10, _fake(model_gib * GIB, 0))
    found = search.fit(1, 80 * GIB, range(1, 2), None)
    assert isinstance(found, PlanFit)
    assert (found.plan, found.tight) == expected


def test_a_need_over_the_card_is_no_fit() -> None:
    search = PlanSearch(_job(), 0.10, _fake(90 * GIB, 0))
    found = search.fit(1, 80 * GIB, range(1, 2), None)
    assert isinstance(found, NoFit) and found.need_per_gpu_bytes > 80 * GIB


def test_thousands_of_nodes_take_few_estimates() -> None:
    job = bare_input(model="meta-llama/Llama-3.1-405B", method="pretrain",
                     gradient_checkpointing="full")  # fmt: skip
    search = PlanSearch(job, 0.10, estimate)
    found = search.fit(8, 80 * GIB, range(1, 4097), None)
    assert isinstance(found, PlanFit), "405B fits on some cluster of H100 nodes"
    # need x 1.1 per GPU: ZeRO-3 alone fits on 16 nodes, TP 4 inside the node on 13; on 12
    # nodes neither TP 4 nor TP 8 fits once DeepSpeed's flat 16-bit gradient copy is counted at
    # the step: 13 nodes with TP 4 is the earliest
    assert (found.plan, found.nodes, found.tensor_parallel) == ("zero3", 13, 4), "earliest"
    assert search.estimator_calls < 120, f"{search.estimator_calls} estimates for 4096 counts"


def test_tensor_degrees_follow_the_heads() -> None:
    # Llama 3.1 8B has 8 key/value heads: TP 8 is allowed, 16 is not (and exceeds a node)
    search = PlanSearch(_job(), 0.10, _fake(1.0))
    assert search._tensor_degrees(8) == [2, 4, 8], "divisors of the GPUs and the heads"
    assert search._tensor_degrees(4) == [2, 4], "inside a 4-GPU node"
    qlora = PlanSearch(bare_input(model=LLAMA_8B, method="qlora"), 0.10, _fake(1.0))
    kinds = {(f.tensor, f.pipeline) for f in qlora._families(8)}
    assert kinds == {(1, 1)}, "no model parallelism for bitsandbytes' 4-bit layers"
    fixed = PlanSearch(_job(tensor_parallel=2), 0.10, _fake(1.0))
    assert {(f.tensor, f.pipeline) for f in fixed._families(8)} == {(2, 1)}, "the job's TP"


def test_pipeline_stage_memory() -> None:
    # A 4-stage plan sizes a model of 32 / 4 = 8 layers and adds 3 more micro-batches of the
    # layers' stored activations (1F1B keeps 4 in flight on the first stage), + 10 % allocator
    job = _job(gradient_checkpointing="full")
    stage = plan_input(job, "zero3", 64, 8, 4)
    assert stage.model.num_layers == 8 and stage.num_gpus == 2, "a stage's layers, 2 data ranks"
    assert stage.sequence_parallel, "a TP degree the search chose comes with sequence parallel"
    est = estimate(stage)
    stored = sum(g.stored_per_layer * g.count for g in est.activations.layers)
    assert in_flight_bytes(est, 4, 0.10) == ceil(3 * stored * 1.1), "three more in flight"
    need = PlanSearch(job, 0.10, estimate).need("zero3", 64, 8, 4)
    assert need == int(est.per_gpu.total) + ceil(3 * stored * 1.1), "the stage's need"


def test_pipelined_alternatives_on_the_same_nodes() -> None:
    search = PlanSearch(_job(gradient_checkpointing="full"), 0.10, estimate)
    found = search.fit(8, 80 * GIB, range(4, 5), None)
    assert isinstance(found, PlanFit) and found.nodes == 4, "four nodes"
    alternatives = search.pipelined(found, 8, 80 * GIB)
    assert [(a.tensor_parallel, a.pipeline_parallel) for a in alternatives] == [
        (8, 2),
        (8, 4),
    ], "TP 8 in each node, stages dividing the 4 nodes"
    assert all(a.nodes == 4 and a.gpu_count == 32 for a in alternatives), "same cluster"


def test_plan_text() -> None:
    assert plan_text("zero3") == "ZeRO-3/FSDP", "no model parallelism"
    assert plan_text("zero3", 8, 4) == "ZeRO-3/FSDP + tensor parallel 8 + pipeline 4"
    assert plan_text("single", 8, 4) == "tensor parallel 8 + pipeline 4", "one data rank"
    assert plan_text("single_offload", 2) == "tensor parallel 2 + CPU optimizer offload"
    assert plan_text("ddp", 2) == "DDP + tensor parallel 2"
