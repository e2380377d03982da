"""build_job: defaults stated, money applied only in USD, the missing model, catalog filters."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from assistant.agent.jobspec import (
    DEFAULT_TOKENS,
    AssumedDefault,
    JobPlan,
    Notice,
    build_job,
    filter_catalog,
    region_matches,
)
from assistant.agent.state import JobState, Money
from assistant.extract import apply_update, extract_slots
from tools.catalog.instances import Catalog, Instance
from tools.ranking import rank

LLAMA_8B = "meta-llama/Llama-3.1-8B"


def instance(name: str, gpu: str, count: int, price: float, regions: list[str]) -> Instance:
    return Instance.model_validate(dict(
        provider="testcloud", instance_type=name, regions=regions, gpu=gpu, gpu_count=count,
        interconnect="nvswitch" if count > 1 else "pcie", price_per_hour=price,
        spot_available=False, billing_granularity="second", min_charge_seconds=0,
        persistent_volumes=True, source="test catalog", as_of=date(2026, 1, 15),
    ))  # fmt: skip


CATALOG = Catalog([
    instance("a10-eu", "A10", 1, 0.8, ["Sweden, SE, EU"]),
    instance("4090-us", "RTX4090", 1, 0.5, ["us-east-1"]),
    instance("a100-eu", "A100-80GB", 1, 1.8, ["eu-west-1", "eu-west-2"]),
    instance("h100x8-us", "H100", 8, 24.0, ["us-central1"]),
    instance("l4-asia", "L4", 1, 0.6, ["Japan, JP, AS"]),
])  # fmt: skip


def assumed(plan: JobPlan) -> dict[str, object]:
    return {a.slot: a.value for a in plan.assumed}


def test_missing_model_is_the_one_missing_slot() -> None:
    plan = build_job(JobState(method="qlora", dataset_tokens=1e9, spot="allowed"))
    assert plan.missing == ["model"], f"missing: {plan.missing}"
    assert (plan.job, plan.request, plan.assumed) == (None, None, []), "nothing built yet"
    assert not plan.ready, "a plan without a model is not ready"


def test_lora_defaults_are_stated_in_order() -> None:
    plan = build_job(JobState(model=LLAMA_8B))
    assert plan.assumed == [
        AssumedDefault(slot="method", value="lora"),
        AssumedDefault(slot="precision", value="bf16-mixed"),
        AssumedDefault(slot="optimizer", value="adamw"),
        AssumedDefault(slot="seq_len", value=2048),
        AssumedDefault(slot="micro_batch_size", value=1),
        AssumedDefault(slot="gradient_checkpointing", value="full"),
        AssumedDefault(slot="lora_rank", value=16),
        AssumedDefault(slot="dataset_tokens", value=DEFAULT_TOKENS),
        AssumedDefault(slot="epochs", value=1),
        AssumedDefault(slot="spot", value="never"),
        AssumedDefault(slot="objective", value="cost"),
    ], f"got {plan.assumed}"
    assert plan.missing == [] and plan.notices == [], "nothing missing, nothing to notice"
    job, request = plan.job, plan.request
    assert job is not None and request is not None
    assert job.model.id == LLAMA_8B, f"model {job.model.id}"
    assert (job.method, job.precision, job.optimizer, job.lora_rank) == (
        "lora", "bf16-mixed", "adamw", 16), "estimator input from the defaults"  # fmt: skip
    assert (job.seq_len, job.micro_batch_size, job.gradient_checkpointing) == (2048, 1, "full")
    assert request.workload.tokens == 100e6 and request.workload.epochs == 1.0, "workload"
    assert (request.objective, request.constraints.spot) == ("cost", "never")


def test_qlora_assumes_the_paged_optimizer() -> None:
    plan = build_job(JobState(model=LLAMA_8B, method="qlora"))
    assert assumed(plan)["optimizer"] == "paged-adamw-8bit", "QLoRA paper: paged AdamW"
    assert plan.job is not None and plan.job.optimizer == "paged-adamw-8bit"


def test_full_fine_tune_ignores_a_lora_rank_left_in_the_state() -> None:
    plan = build_job(JobState(model=LLAMA_8B, method="full", lora_rank=64))
    assert "lora_rank" not in assumed(plan), "no rank without adapters"
    assert plan.job is not None and plan.job.method == "full", "full fine-tune built"
    assert plan.notices == [], "a rank kept for later is not an error"


def test_user_values_are_not_listed_as_assumed() -> None:
    state = JobState(
        model=LLAMA_8B,
        method="qlora",
        precision="bf16",
        optimizer="adamw-8bit",
        lora_rank=64,
        seq_len=4096,
        micro_batch_size=2,
        gradient_checkpointing="none",
        dataset_samples=50_000,
        epochs=3,
        spot="allowed",
        objective="time",
    )
    plan = build_job(state)
    assert plan.assumed == [], f"everything was given: {plan.assumed}"
    assert plan.request is not None
    workload = plan.request.workload
    assert (workload.samples, workload.tokens, workload.epochs) == (50_000, None, 3.0)
    assert (plan.request.objective, plan.request.constraints.spot) == ("time", "allowed")


def test_usd_money_is_applied() -> None:
    plan = build_job(JobState(model=LLAMA_8B, max_price_per_hour=Money(amount=3, currency="USD"),
                              budget=Money(amount=500, currency="USD")))  # fmt: skip
    assert plan.request is not None
    constraints = plan.request.constraints
    assert (constraints.max_price_per_hour, constraints.budget) == (3.0, 500.0), "USD applied"
    assert plan.notices == [], "no notice for USD"


@pytest.mark.parametrize("currency", ["EUR", "TRY"])
def test_other_currencies_are_never_converted(currency: str) -> None:
    state = JobState(model=LLAMA_8B, max_price_per_hour=Money(amount=2, currency=currency),
                     budget=Money(amount=10_000, currency=currency))  # fmt: skip
    plan = build_job(state)
    assert plan.request is not None
    constraints = plan.request.constraints
    assert (constraints.max_price_per_hour, constraints.budget) == (None, None), "not applied"
    assert plan.notices == [
        Notice(kind="currency_not_applied", slot="max_price_per_hour", value=f"2 {currency}",
               message=f"price cap given in {currency}; catalog prices are USD; price cap "
               "filter not applied"),
        Notice(kind="currency_not_applied", slot="budget", value=f"10000 {currency}",
               message=f"budget given in {currency}; catalog prices are USD; budget filter "
               "not applied"),
    ], f"got {plan.notices}"  # fmt: skip


def test_currency_notice_also_when_model_is_missing() -> None:
    plan = build_job(JobState(budget=Money(amount=500, currency="EUR")))
    assert plan.missing == ["model"]
    assert [n.kind for n in plan.notices] == ["currency_not_applied"], "said at once"


def test_gpu_count_bounds_the_ranking() -> None:
    plan = build_job(JobState(model=LLAMA_8B, num_gpus=8, deadline_hours=48, providers=["aws"]))
    assert plan.job is not None and plan.request is not None
    c = plan.request.constraints
    assert (c.min_gpus, c.max_gpus, c.deadline_hours, c.providers) == (8, 8, 48, ["aws"])
    assert plan.job.num_gpus == 8, "the estimate is for the GPUs asked for"


@pytest.mark.parametrize(
    ("state", "slot", "expected"),
    [
        (dict(method="qlora", precision="fp32"), "precision", "bf16-mixed"),
        (dict(method="lora", lora_rank=100_000), "lora_rank", 16),
        (dict(seq_len=20_000_000), "seq_len", 2048),
    ],
    ids=["qlora-fp32", "rank-above-hidden", "seq-len-beyond-limit"],
)
def test_invalid_value_falls_back_to_the_default(
    state: dict[str, Any], slot: str, expected: object
) -> None:
    plan = build_job(JobState(model=LLAMA_8B, **state))
    assert plan.job is not None, "the plan is still built"
    assert getattr(plan.job, slot) == expected, f"{slot} falls back to {expected}"
    assert [(n.kind, n.slot) for n in plan.notices] == [("invalid_value", slot)]
    assert "the default is used instead" in plan.notices[0].message
    assert assumed(plan)[slot] == expected, "the fallback is listed as assumed"


def test_unresolvable_model_is_reported_missing() -> None:
    plan = build_job(JobState(model="5M"))  # below the smallest count that can be estimated
    assert plan.missing == ["model"], "asks for the model again"
    assert [(n.kind, n.slot, n.value) for n in plan.notices] == [("invalid_value", "model", "5M")]


# --------------------------------------------------------------------------- regions and filters


@pytest.mark.parametrize(
    ("hint", "regions"),
    [
        ("eu", ["Sweden, SE, EU", "eu-west-1", "eu-west-2"]),
        ("us", ["us-central1", "us-east-1"]),
        ("asia", ["Japan, JP, AS"]),
        ("eu-west", ["eu-west-1", "eu-west-2"]),
        ("eu-west-2", ["eu-west-2"]),
    ],
)
def test_region_hint_becomes_catalog_regions(hint: str, regions: list[str]) -> None:
    plan = build_job(JobState(model=LLAMA_8B, region=hint), CATALOG)
    assert plan.request is not None
    assert plan.request.constraints.regions == regions, f"{hint}: {plan.request.constraints}"
    assert plan.region == hint and plan.notices == []


def test_unknown_region_gives_a_notice_and_no_filter() -> None:
    plan = build_job(JobState(model=LLAMA_8B, region="sa-east-1"), CATALOG)
    assert plan.request is not None and plan.request.constraints.regions is None
    assert [(n.kind, n.value) for n in plan.notices] == [("region_not_found", "sa-east-1")]


def test_region_without_catalog_is_left_to_the_caller() -> None:
    plan = build_job(JobState(model=LLAMA_8B, region="eu"))
    assert plan.request is not None and plan.request.constraints.regions is None
    assert plan.region == "eu", "the hint is passed on"


@pytest.mark.parametrize(
    ("hint", "region", "inside"),
    [
        ("eu", "France, FR, EU", True), ("eu", "eu-north1", True), ("eu", "NORWAY-1", True),
        ("eu", "westeurope", True), ("eu", "us-east-1", False), ("us", "eastus", True),
        ("us", "Florida, US, NA", True), ("us", "north-america", True), ("us", "EU", False),
        ("asia", "ap-northeast-1", True), ("asia", "Vietnam, VN, AS", True),
        ("eu-west", "eu-west-1", True), ("eu-west", "eu-westfalia", False),
        ("us-east-1", "us-east-1", True), ("us-east-1", "us-east-12", False),
    ],
)  # fmt: skip
def test_region_matches(hint: str, region: str, inside: bool) -> None:
    assert region_matches(hint, region) is inside, f"{region!r} in {hint!r}"


def test_filter_catalog_applies_vram_cap_and_gpus() -> None:
    capped = build_job(JobState(model=LLAMA_8B, max_vram_gib=24))
    ids = [i.instance_type for i in filter_catalog(capped, CATALOG)]
    assert ids == ["a10-eu", "4090-us", "l4-asia"], f"24 GiB cap keeps {ids}"
    preferred = build_job(JobState(model=LLAMA_8B, gpus=["A100-80GB-SXM", "H100-SXM"]))
    ids = [i.instance_type for i in filter_catalog(preferred, CATALOG)]
    assert ids == ["a100-eu", "h100x8-us"], f"GPU preference keeps {ids}"
    assert len(filter_catalog(build_job(JobState()), CATALOG)) == len(CATALOG), "no filters"


def test_conversation_to_ranking() -> None:
    """Extract, amend, build and rank: a 24 GiB cap in the EU leaves the A10."""
    state = JobState()
    for message in ("Fine-tune Llama 3.1 8B with QLoRA on 20M tokens", "in Europe",
                    "what if I only have 24 GB?"):  # fmt: skip
        state = apply_update(state, extract_slots(message, "en"))
    plan = build_job(state, CATALOG)
    assert plan.request is not None
    result = rank(plan.request, filter_catalog(plan, CATALOG))
    ranked = [row.instance_type for row in result.ranked]
    assert ranked == ["a10-eu"], f"ranked {ranked}; excluded {result.excluded}"
