"""JobState, SlotUpdate, Money and apply_update; multi-turn amendment sequences per language."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assistant.agent.state import SLOT_NAMES, JobState, Money, SlotUpdate
from assistant.extract import apply_update, extract_slots

LLAMA_70B = "meta-llama/Llama-3.1-70B"
LLAMA_8B = "meta-llama/Llama-3.1-8B"


def usd(amount: float) -> Money:
    return Money(amount=amount, currency="USD")


def test_update_replaces_only_the_slots_it_sets() -> None:
    state = JobState(model=LLAMA_70B, method="qlora", dataset_tokens=2e8, spot="never")
    after = apply_update(state, SlotUpdate(method="full"))
    want = JobState(model=LLAMA_70B, method="full", dataset_tokens=2e8, spot="never")
    assert after == want, f"got {after.filled()}"
    assert state.method == "qlora", "apply_update must not change its input"


def test_lists_are_replaced_not_merged() -> None:
    state = JobState(providers=["aws"], gpus=["A10"])
    after = apply_update(state, SlotUpdate(providers=["runpod", "lambda"]))
    assert after.providers == ["runpod", "lambda"], f"got {after.providers}"
    assert after.gpus == ["A10"], "an update without gpus keeps them"


@pytest.mark.parametrize(
    ("before", "update", "after"),
    [
        (dict(dataset_tokens=2e8), dict(dataset_samples=5000), dict(dataset_samples=5000)),
        (dict(dataset_samples=5000), dict(dataset_tokens=1e9), dict(dataset_tokens=1e9)),
        (
            dict(dataset_samples=5000, epochs=3),
            dict(epochs=1),
            dict(dataset_samples=5000, epochs=1),
        ),
    ],
    ids=["samples-replace-tokens", "tokens-replace-samples", "epochs-keep-samples"],
)
def test_tokens_and_samples_exclude_each_other(
    before: dict[str, Any], update: dict[str, Any], after: dict[str, Any]
) -> None:
    got = apply_update(JobState(**before), SlotUpdate(**update))
    assert got == JobState(**after), f"got {got.filled()}, want {after}"


def test_clear_resets_slots() -> None:
    state = JobState(model=LLAMA_8B, budget=usd(500), providers=["aws"])
    got = apply_update(state, SlotUpdate(clear=["budget", "providers"]))
    assert got == JobState(model=LLAMA_8B), f"got {got.filled()}"


def test_set_wins_over_clear_in_the_same_update() -> None:
    got = apply_update(JobState(spot="never"), SlotUpdate(spot="required", clear=["spot"]))
    assert got.spot == "required", "a slot both cleared and set ends up set"


def test_slot_update_helpers() -> None:
    assert SlotUpdate().is_empty(), "no slots and no clears: empty"
    assert not SlotUpdate(clear=["spot"]).is_empty(), "a clear is not empty"
    update = SlotUpdate(seq_len=4096, spot="allowed")
    assert update.given() == {"seq_len": 4096, "spot": "allowed"}, f"got {update.given()}"
    assert set(update.slot_values()) == set(SLOT_NAMES), "slot_values lists every slot"


def test_slot_names_match_the_model() -> None:
    fields = set(JobState.model_fields)
    assert fields == set(SLOT_NAMES), f"differs: {fields ^ set(SLOT_NAMES)}"


def test_state_round_trips_through_json() -> None:
    state = JobState(
        model="70B",
        method="qlora",
        budget=Money(amount=10_000, currency="TRY"),
        providers=["runpod"],
        gpus=["H100-SXM"],
        max_vram_gib=24,
        epochs=1.5,
    )
    again = JobState.model_validate_json(state.model_dump_json())
    assert again == state, "JSON round trip (sessions are saved as JSON)"


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("currency", "GBP", "currency"),
        ("amount", 0, "amount"),
        ("amount", -3, "amount"),
    ],
)
def test_money_rejects_bad_values(field: str, value: object, match: str) -> None:
    data: dict[str, object] = {"amount": 2.0, "currency": "USD", field: value}
    with pytest.raises(ValidationError, match=match):
        Money.model_validate(data)


def test_unknown_slot_is_rejected() -> None:
    with pytest.raises(ValidationError, match="colour"):
        SlotUpdate.model_validate({"colour": "blue"})


def test_method_choices_are_checked() -> None:
    with pytest.raises(ValidationError, match="method"):
        JobState.model_validate({"method": "dora"})


# --------------------------------------------------------------------------- conversations

BASE = dict(model=LLAMA_70B, method="qlora", dataset_tokens=2e8, max_price_per_hour=usd(3))
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
          "max_vram_gib": 24, "providers": ["runpod", "lambda"], "region": "eu",
          "objective": "time"}),
        ("en", "eu-west actually",
         {**BASE, "method": "full", "spot": "never", "max_price_per_hour": usd(2),
          "max_vram_gib": 24, "providers": ["runpod", "lambda"], "region": "eu-west",
          "objective": "time"}),
    ],
    "nl": [
        ("nl", "Llama 3.1 8B fine-tunen met LoRA op 50.000 voorbeelden",
         dict(model=LLAMA_8B, method="lora", dataset_samples=50_000)),
        ("nl", "en met volledige fijn-afstemming?",
         dict(model=LLAMA_8B, method="full", dataset_samples=50_000)),
        ("nl", "spot is prima, max €2 per uur",
         dict(model=LLAMA_8B, method="full", dataset_samples=50_000, spot="allowed",
              max_price_per_hour=Money(amount=2, currency="EUR"))),
        ("nl", "toch liever 300 miljoen tokens",
         dict(model=LLAMA_8B, method="full", dataset_tokens=3e8, spot="allowed",
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
         dict(model="mistralai/Mistral-7B-v0.1", method="qlora", dataset_tokens=1e8)),
        ("tr", "peki tam ince ayar ile?",
         dict(model="mistralai/Mistral-7B-v0.1", method="full", dataset_tokens=1e8)),
        ("tr", "sadece spot, en hızlı",
         dict(model="mistralai/Mistral-7B-v0.1", method="full", dataset_tokens=1e8,
              spot="required", objective="time")),
    ],
    "de": [
        ("de", "Qwen2.5 14B mit QLoRA, 2 Mrd. Tokens",
         dict(model="Qwen/Qwen2.5-14B", method="qlora", dataset_tokens=2e9)),
        ("de", "und mit vollständigem Fine-Tuning auf 8x H100?",
         dict(model="Qwen/Qwen2.5-14B", method="full", dataset_tokens=2e9, num_gpus=8,
              gpus=["H100-SXM", "H100-PCIe", "H100-NVL"])),
        ("de", "nur Spot", dict(model="Qwen/Qwen2.5-14B", method="full", dataset_tokens=2e9,
                                num_gpus=8, gpus=["H100-SXM", "H100-PCIe", "H100-NVL"],
                                spot="required")),
    ],
    "es": [
        ("es", "Ajustar Llama 3.1 8B con LoRA, presupuesto de 300 $",
         dict(model=LLAMA_8B, method="lora", budget=usd(300))),
        ("es", "¿y si solo tengo 24 GB?",
         dict(model=LLAMA_8B, method="lora", budget=usd(300), max_vram_gib=24)),
        ("es", "¿y con QLoRA en Europa?",
         dict(model=LLAMA_8B, method="qlora", budget=usd(300), max_vram_gib=24, region="eu")),
    ],
}  # fmt: skip


@pytest.mark.parametrize("lang", list(SEQUENCES))
def test_amendment_sequence(lang: str) -> None:
    state = JobState()
    for turn, (msg_lang, message, expected) in enumerate(SEQUENCES[lang], start=1):
        state = apply_update(state, extract_slots(message, msg_lang))
        assert state == JobState(**expected), (
            f"{lang} turn {turn} {message!r}: got {state.filled()}, want {expected}"
        )
