"""JobSpec, JobUpdate, Money and apply_update; multi-turn amendment sequences per language."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import ValidationError

from assistant.extract import extract_slots
from tools.errors import InvalidInputError
from tools.job import (
    FIELD_GROUPS,
    JOB_FIELDS,
    FieldName,
    JobSpec,
    JobUpdate,
    Money,
    apply_update,
    parse_money,
)

LLAMA_70B = "meta-llama/Llama-3.1-70B"
LLAMA_8B = "meta-llama/Llama-3.1-8B"


def usd(amount: float) -> Money:
    return Money(amount=amount, currency="USD")


def test_update_replaces_only_the_slots_it_sets() -> None:
    state = JobSpec(model=LLAMA_70B, method="qlora", tokens=2e8, spot="never")
    after = apply_update(state, JobUpdate(method="full"))
    want = JobSpec(model=LLAMA_70B, method="full", tokens=2e8, spot="never")
    assert after == want, f"got {after.filled()}"
    assert state.method == "qlora", "apply_update must not change its input"


def test_lists_are_replaced_not_merged() -> None:
    state = JobSpec(providers=["aws"], gpus=["A10"])
    after = apply_update(state, JobUpdate(providers=["runpod", "lambda"]))
    assert after.providers == ["runpod", "lambda"], f"got {after.providers}"
    assert after.gpus == ["A10"], "an update without gpus keeps them"


@pytest.mark.parametrize(
    ("before", "update", "after"),
    [
        (dict(tokens=2e8), dict(samples=5000), dict(samples=5000)),
        (dict(samples=5000), dict(tokens=1e9), dict(tokens=1e9)),
        (
            dict(samples=5000, epochs=3),
            dict(epochs=1),
            dict(samples=5000, epochs=1),
        ),
    ],
    ids=["samples-replace-tokens", "tokens-replace-samples", "epochs-keep-samples"],
)
def test_tokens_and_samples_exclude_each_other(
    before: dict[str, Any], update: dict[str, Any], after: dict[str, Any]
) -> None:
    got = apply_update(JobSpec(**before), JobUpdate(**update))
    assert got == JobSpec(**after), f"got {got.filled()}, want {after}"


def test_clear_resets_slots() -> None:
    state = JobSpec(model=LLAMA_8B, budget=usd(500), providers=["aws"])
    got = apply_update(state, JobUpdate(clear=["budget", "providers"]))
    assert got == JobSpec(model=LLAMA_8B), f"got {got.filled()}"


def test_set_wins_over_clear_in_the_same_update() -> None:
    got = apply_update(JobSpec(spot="never"), JobUpdate(spot="required", clear=["spot"]))
    assert got.spot == "required", "a slot both cleared and set ends up set"


def test_update_helpers() -> None:
    assert JobUpdate().is_empty(), "no fields and no clears: empty"
    assert not JobUpdate(clear=["spot"]).is_empty(), "a clear is not empty"
    update = JobUpdate(seq_len=4096, spot="allowed")
    assert update.given() == {"seq_len": 4096, "spot": "allowed"}, f"got {update.given()}"


def test_every_field_is_in_exactly_one_group() -> None:
    grouped = [name for names in FIELD_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(JOB_FIELDS), f"differs: {set(grouped) ^ set(JOB_FIELDS)}"
    assert len(grouped) == len(set(grouped)), "no field in two groups"
    assert set(get_args(FieldName)) == set(JOB_FIELDS), "FieldName names every field"


def test_every_field_says_what_it_is() -> None:
    for name, info in JobSpec.model_fields.items():
        assert info.default is None, f"{name}: open by default (the job's defaults resolve it)"
        assert info.description and len(info.description) >= 12, f"{name}: no description"


@pytest.mark.parametrize(
    ("given", "stage", "sharding"),
    [("fsdp-full-shard", 3, "fsdp"), ("FSDP_shard_grad_op", 2, "fsdp"), ("zero2", 2, "deepspeed"),
     ("3", 3, None), (1, 1, None), ("ddp", 0, "deepspeed")],
)  # fmt: skip
def test_zero_aliases(given: object, stage: int, sharding: str | None) -> None:
    spec = JobSpec(zero_stage=given)
    assert (spec.zero_stage, spec.sharding) == (stage, sharding), f"{given!r}"


def test_unknown_zero_alias_names_what_is_valid() -> None:
    with pytest.raises(InvalidInputError, match=r"zero_stage: got 'zero-9'; valid: 0, 1, 2, 3"):
        JobSpec.parse({"zero_stage": "zero-9"})


def test_parse_names_the_field_and_what_is_valid() -> None:
    with pytest.raises(InvalidInputError, match=r"^seq_len: got 0; valid: an integer from 1 to"):
        JobSpec.parse({"seq_len": 0})
    with pytest.raises(InvalidInputError, match=r"^method: got 'dpo'"):
        JobSpec.parse({"method": "dpo"})


def test_attention_aliases_and_name_lists() -> None:
    spec = JobSpec(attention="FA2", providers="runpod, lambda,, runpod", gpus=[" H100 ", ""])
    assert spec.attention == "sdpa", "FlashAttention-2 keeps what SDPA keeps"
    assert spec.providers == ["runpod", "lambda"], "split, trimmed, each once"
    assert spec.gpus == ["H100"] and JobSpec(regions=[]).regions is None, "empty is open"


def test_state_round_trips_through_json() -> None:
    state = JobSpec(
        model="70B",
        method="qlora",
        budget=Money(amount=10_000, currency="TRY"),
        providers=["runpod"],
        gpus=["H100-SXM"],
        max_vram_gib=24,
        epochs=1.5,
    )
    again = JobSpec.model_validate_json(state.model_dump_json())
    assert again == state, "JSON round trip (sessions are saved as JSON)"


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("currency", "dollars", "currency"),
        ("currency", "US", "currency"),
        ("amount", 0, "amount"),
        ("amount", -3, "amount"),
    ],
)
def test_money_rejects_bad_values(field: str, value: object, match: str) -> None:
    data: dict[str, object] = {"amount": 2.0, "currency": "USD", field: value}
    with pytest.raises(ValidationError, match=match):
        Money.model_validate(data)


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [("200", 200.0, "USD"), ("200 EUR", 200.0, "EUR"), ("€200", 200.0, "EUR"),
     ("$3.5", 3.5, "USD"), ("3.5usd", 3.5, "USD"), ("1.000,50 €", 1000.5, "EUR"),
     ("1,000.50 GBP", 1000.5, "GBP"), ("2,5 CHF", 2.5, "CHF"), ("150 TL", 150.0, "TRY")],
)  # fmt: skip
def test_money_reads_what_people_type(text: str, amount: float, currency: str) -> None:
    assert parse_money(text) == Money(amount=amount, currency=currency), text
    assert Money.model_validate(text) == Money(amount=amount, currency=currency), "as a field"


@pytest.mark.parametrize("text", ["", "EUR", "-5", "0 USD", "5 EUR USD", "$5 €", "1e309"])
def test_money_refuses_what_is_not_an_amount(text: str) -> None:
    with pytest.raises(ValueError, match=r"money|currency|amount"):
        parse_money(text)


def test_unknown_slot_is_rejected() -> None:
    with pytest.raises(ValidationError, match="colour"):
        JobUpdate.model_validate({"colour": "blue"})


def test_method_choices_are_checked() -> None:
    with pytest.raises(ValidationError, match="method"):
        JobSpec.model_validate({"method": "dora"})


# --------------------------------------------------------------------------- conversations

BASE = dict(model=LLAMA_70B, method="qlora", tokens=2e8, max_price_per_hour=usd(3))
# (lang, message, the whole state after it): each turn amends the one before.
SEQUENCES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "en": [
        ("en", "Fine-tune Llama 3.1 70B with QLoRA on 200M tokens, under $3/h", BASE),
        ("en", "and with full fine-tuning?", {**BASE, "method": "full"}),
        ("en", "only spot", {**BASE, "method": "full", "spot": "required"}),
        ("en", "max $2/h", {**BASE, "method": "full", "spot": "required",
                            "max_price_per_hour": usd(2)}),
        ("en", "what if I only have 24 GB?", {**BASE, "method": "full", "spot": "required",
                                              "max_price_per_hour": usd(2), "max_vram_gib": 24}),
        ("en", "no spot", {**BASE, "method": "full", "spot": "never",
                           "max_price_per_hour": usd(2), "max_vram_gib": 24}),
        ("en", "on RunPod or Lambda, in Europe, fastest",
         {**BASE, "method": "full", "spot": "never", "max_price_per_hour": usd(2),
          "max_vram_gib": 24, "providers": ["runpod", "lambda"], "regions": ["eu"],
          "objective": "time"}),
        ("en", "eu-west actually",
         {**BASE, "method": "full", "spot": "never", "max_price_per_hour": usd(2),
          "max_vram_gib": 24, "providers": ["runpod", "lambda"], "regions": ["eu-west"],
          "objective": "time"}),
    ],
    "nl": [
        ("nl", "Llama 3.1 8B fine-tunen met LoRA op 50.000 voorbeelden",
         dict(model=LLAMA_8B, method="lora", samples=50_000)),
        ("nl", "en met volledige fijn-afstemming?",
         dict(model=LLAMA_8B, method="full", samples=50_000)),
        ("nl", "spot is prima, max €2 per uur",
         dict(model=LLAMA_8B, method="full", samples=50_000, spot="allowed",
              max_price_per_hour=Money(amount=2, currency="EUR"))),
        ("nl", "toch liever 300 miljoen tokens",
         dict(model=LLAMA_8B, method="full", tokens=3e8, spot="allowed",
              max_price_per_hour=Money(amount=2, currency="EUR"))),
    ],
    "fr": [
        ("fr", "Affiner un modèle de 7 milliards de paramètres en QLoRA, 3 époques",
         dict(model="7B", method="qlora", epochs=3)),
        ("fr", "et avec un affinage complet ?", dict(model="7B", method="full", epochs=3)),
        ("fr", "sans spot, uniquement sur Lambda",
         dict(model="7B", method="full", epochs=3, spot="never", providers=["lambda"])),
    ],
    "tr": [
        ("tr", "Mistral 7B'yi QLoRA ile eğitmek istiyorum, 100 milyon token",
         dict(model="mistralai/Mistral-7B-v0.1", method="qlora", tokens=1e8)),
        ("tr", "peki tam ince ayar ile?",
         dict(model="mistralai/Mistral-7B-v0.1", method="full", tokens=1e8)),
        ("tr", "sadece spot, en hızlı",
         dict(model="mistralai/Mistral-7B-v0.1", method="full", tokens=1e8,
              spot="required", objective="time")),
    ],
    "de": [
        ("de", "Qwen2.5 14B mit QLoRA, 2 Mrd. Tokens",
         dict(model="Qwen/Qwen2.5-14B", method="qlora", tokens=2e9)),
        ("de", "und mit vollständigem Fine-Tuning auf 8x H100?",
         dict(model="Qwen/Qwen2.5-14B", method="full", tokens=2e9, num_gpus=8,
              gpus=["H100-SXM", "H100-PCIe", "H100-NVL"])),
        ("de", "nur Spot", dict(model="Qwen/Qwen2.5-14B", method="full", tokens=2e9,
                                num_gpus=8, gpus=["H100-SXM", "H100-PCIe", "H100-NVL"],
                                spot="required")),
    ],
    "es": [
        ("es", "Ajustar Llama 3.1 8B con LoRA, presupuesto de 300 $",
         dict(model=LLAMA_8B, method="lora", budget=usd(300))),
        ("es", "¿y si solo tengo 24 GB?",
         dict(model=LLAMA_8B, method="lora", budget=usd(300), max_vram_gib=24)),
        ("es", "¿y con QLoRA en Europa?",
         dict(model=LLAMA_8B, method="qlora", budget=usd(300), max_vram_gib=24, regions=["eu"])),
    ],
}  # fmt: skip


@pytest.mark.parametrize("lang", list(SEQUENCES))
def test_amendment_sequence(lang: str) -> None:
    state = JobSpec()
    for turn, (msg_lang, message, expected) in enumerate(SEQUENCES[lang], start=1):
        state = apply_update(state, extract_slots(message, msg_lang))
        assert state == JobSpec(**expected), (
            f"{lang} turn {turn} {message!r}: got {state.filled()}, want {expected}"
        )
