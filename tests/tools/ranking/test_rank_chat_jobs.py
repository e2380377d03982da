"""Chat-turn rankings on the built-in catalog: the plan search's shortcuts (figures-only
estimates, fewest nodes first, galloping) rank exactly as full estimates do, with few of them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes.jobs import bare_input
from tools.catalog import builtin_catalog
from tools.memory import EstimateInput, MemoryEstimate, estimate
from tools.ranking import RankRequest, RankResult, Workload, rank
from tools.ranking.prepare import forget_shapes
from tools.ranking.search import forget_searches, search_for

LLAMA_8B = "meta-llama/Llama-3.1-8B"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
# What a conversation's turns amend: the method, spot, the sequence, a price cap, the GPUs.
TURNS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"method": "lora"}, {}),
    ({"method": "full"}, {"spot": "required"}),
    ({"method": "full", "seq_len": 4096}, {"spot": "required", "max_price_per_hour": 40.0}),
    ({"method": "qlora"}, {"spot": "required", "min_gpus": 2, "max_gpus": 2}),
    ({"model": "30e9", "method": "full"}, {"spot": "allowed"}),  # needs several nodes
]


def _request(job: dict[str, Any], constraints: dict[str, Any]) -> RankRequest:
    settings = {"model": LLAMA_8B, "gradient_checkpointing": "full", **job}
    return RankRequest(
        job=bare_input(**settings), workload=Workload(tokens=1e8), constraints=constraints
    )


def _full_estimates(inp: EstimateInput) -> MemoryEstimate:
    """The estimator as a caller's own function: the search then keeps whole estimates."""
    return estimate(inp)


@pytest.mark.parametrize(("job", "constraints"), TURNS)
def test_figures_only_plan_estimates_rank_as_whole_ones(
    job: dict[str, Any], constraints: dict[str, Any]
) -> None:
    request, catalog = _request(job, constraints), builtin_catalog()
    forget_shapes()
    forget_searches()
    fast = rank(request, catalog, now=NOW)
    whole = rank(request, catalog, _full_estimates, now=NOW)
    assert fast.model_dump_json() == whole.model_dump_json(), "byte-identical results"
    assert fast.job.assumptions == whole.job.assumptions, "the job's estimate keeps its text"
    assert len(fast.job.assumptions) > 10, "and that text is there"


@pytest.mark.parametrize(
    ("method", "constraints", "plans"),
    [
        ("lora", {}, 11),  # 14 before the search started at the fewest nodes
        ("full", {"spot": "required"}, 25),  # 25 before the fewest-nodes start, 24 after it,
        # 25 again since DeepSpeed's step copy moved one catalog GPU's fit by a node
        ("qlora", {"min_gpus": 2, "max_gpus": 2}, 3),
    ],
)
def test_a_chat_job_estimates_few_plans(
    method: str, constraints: dict[str, Any], plans: int
) -> None:
    request = _request({"method": method}, constraints)
    forget_shapes()
    forget_searches()
    rank(request, builtin_catalog())
    search = search_for(request.job, request.assumptions.memory_margin, estimate)
    assert search.estimator_calls == plans, "plans estimated for the whole catalog"


@pytest.mark.parametrize(("job", "constraints"), TURNS[:3])
def test_a_cut_ranking_keeps_the_rest_as_the_whole_ranking_has_it(
    job: dict[str, Any], constraints: dict[str, Any]
) -> None:
    """`top` keeps the best rows; `every_option` builds the rest when asked, exactly the rows
    and ranks of the ranking that was not cut (at the same clock), and none of it is a field:
    what is serialised or walked is the cut result."""
    request, catalog = _request(job, constraints), builtin_catalog()
    whole = rank(request, catalog, now=NOW)
    cut = rank(request.model_copy(update={"top": 5}), catalog, now=NOW)
    assert len(cut.ranked) == 5 < cut.feasible == whole.feasible
    every = cut.every_option()
    assert every is not None
    assert [o.model_dump() for o in every] == [o.model_dump() for o in whole.ranked]
    assert whole.every_option() == whole.ranked, "nothing was cut"
    assert (
        set(cut.model_dump()) == set(RankResult.model_fields)
        and len(cut.model_dump()["ranked"]) == 5
    )
    assert cut.model_copy().every_option() == every, "a copy keeps it"
    assert RankResult.model_validate_json(cut.model_dump_json()).every_option() is None
