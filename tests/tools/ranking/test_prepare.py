"""Shape results shared across rankings of one job, and the options built from them without
validation: neither may change a ranking."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.catalogs import instance
from tests.fakes.jobs import bare_input
from tools.catalog.instances import Instance
from tools.memory import estimate
from tools.ranking import RankingAssumptions, RankRequest, RankResult, Workload, rank
from tools.ranking.models import RankedOption, option_template, unchecked_option
from tools.ranking.prepare import forget_shapes, shape_caches

JOB = bare_input(model="meta-llama/Llama-2-7b-hf", method="lora", gradient_checkpointing="full")
CATALOG: list[Instance] = [
    instance("l4", "L4", 1, 0.8, spot_price_per_hour=0.3),
    instance("l4x4", "L4", 4, 3.2, spot_price_per_hour=1.1, ram_gib=96),
    instance("l4x4-big", "L4", 4, 3.4, ram_gib=384),
    instance("h100x8", "H100-SXM", 8, 30.0, network="infiniband", multi_node=True,
             billing_granularity="hour", min_charge_seconds=3600, spot_price_per_hour=12.0),
    instance("4090", "RTX4090", 1, 0.5, billing_granularity="minute"),
]  # fmt: skip


def _request(**update: Any) -> RankRequest:
    fields: dict[str, Any] = {"job": JOB, "workload": Workload(tokens=5e7), **update}
    return RankRequest(**fields)


def _fresh(request: RankRequest) -> RankResult:
    """The ranking with no shape results kept from earlier rankings."""
    forget_shapes()
    return rank(request, CATALOG)


@pytest.mark.parametrize(
    "update",
    [
        {"constraints": {"budget": 5.0}},
        {"constraints": {"spot": "allowed"}},
        {"constraints": {"spot": "required", "max_price_per_hour": 20}},
        {"constraints": {"min_gpus": 4, "max_nodes": 2}},
        {"constraints": {"interconnect": "nvswitch"}},
        {"objective": "time"},
        {"workload": Workload(tokens=5e9)},
        {"assumptions": RankingAssumptions(memory_margin=0.3)},
        {"job": bare_input(model="meta-llama/Llama-2-7b-hf", method="full")},
        {"top": 2},
    ],
)
def test_a_ranking_after_another_is_the_ranking_from_scratch(update: dict[str, Any]) -> None:
    """Rank the base request (its shapes are kept), then a changed one: the changed ranking
    equals the same ranking with nothing kept, whatever was changed."""
    rank(_request(), CATALOG)
    after = rank(_request(**update), CATALOG)
    assert after.model_dump_json() == _fresh(_request(**update)).model_dump_json()


def test_shapes_are_shared_only_where_they_cannot_differ() -> None:
    base = _request()
    same = shape_caches(base, estimate)
    # prices, budgets, the objective and the catalog filters do not change a shape's results
    for update in ({"objective": "time"}, {"constraints": {"budget": 1, "regions": ["us"]}}):
        assert shape_caches(_request(**update), estimate) is same
    # the job, workload, assumptions, GPU-count, link and spot rules and the estimator do
    for update in (
        {"workload": Workload(tokens=1e6)},
        {"constraints": {"spot": "allowed"}},
        {"constraints": {"max_gpus": 4}},
        {"assumptions": RankingAssumptions(memory_margin=0.2)},
    ):
        assert shape_caches(_request(**update), estimate) is not same
    assert shape_caches(base, lambda job: estimate(job)) is not same


def test_unvalidated_options_are_what_validation_gives() -> None:
    """Every ranked row, validated from its own fields, gives the same JSON (types included:
    an int where a float is declared would print without its '.0')."""
    result = _fresh(_request())
    assert len(result.ranked) == len(CATALOG)
    for option in result.ranked:
        checked = RankedOption.model_validate(option.model_dump(include=option.model_fields_set))
        assert checked.model_dump_json() == option.model_dump_json()
        assert checked.model_fields_set == option.model_fields_set


def test_an_unvalidated_option_needs_every_required_field() -> None:
    fields = _fresh(_request()).ranked[0].model_dump()
    fields.pop("reasons")
    with pytest.raises(TypeError, match="missing \\['reasons'\\]"):
        unchecked_option(option_template(), **fields)
    with pytest.raises(TypeError, match="unknown \\['colour'\\]"):
        unchecked_option(option_template(), **fields, reasons=[], colour="red")
    with pytest.raises(TypeError, match="unknown \\['colour'\\]"):
        option_template(colour="red")
