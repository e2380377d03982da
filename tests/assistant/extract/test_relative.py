"""read_scaling: amounts changed relative to the job so far, in six languages, with the exact
new values; what is no factor ("half precision", "double quant", "double-check") and what
the message states outright are left alone."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.extract import extract_slots, names_own_model, read_scaling
from tools.job import JobSpec, Money

PRIOR = JobSpec(
    model="meta-llama/Llama-3.1-8B",
    method="lora",
    tokens=80e6,
    seq_len=4096,
    micro_batch_size=8,
    budget=Money(amount=300.0, currency="EUR"),
)
SAMPLES = JobSpec(model="meta-llama/Llama-3.1-8B", method="lora", samples=30_000, epochs=3.0)


def scaled(text: str, lang: str, prior: JobSpec = PRIOR) -> dict[str, Any]:
    return read_scaling(text, prior, extract_slots(text, lang))


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "double the tokens", {"tokens": 160e6}),
        ("en", "can we do twice as many tokens?", {"tokens": 160e6}),
        ("en", "halve the batch size", {"micro_batch_size": 4}),
        ("en", "what about half the context", {"seq_len": 2048}),
        ("en", "triple the number of tokens", {"tokens": 240e6}),
        ("en", "tokens x2 please", {"tokens": 160e6}),
        ("en", "double the budget", {"budget": Money(amount=600.0, currency="EUR")}),
        ("nl", "verdubbel het aantal tokens", {"tokens": 160e6}),
        ("nl", "en de helft van de batch?", {"micro_batch_size": 4}),
        ("fr", "la moitié des tokens", {"tokens": 40e6}),
        ("fr", "et si on double le budget ?", {"budget": Money(amount=600.0, currency="EUR")}),
        ("tr", "token sayısını iki katına çıkar", {"tokens": 160e6}),
        ("tr", "batch boyutunu yarıya indir", {"micro_batch_size": 4}),
        ("de", "verdopple die Tokens", {"tokens": 160e6}),
        ("de", "und die Hälfte der Kontextlänge?", {"seq_len": 2048}),
        ("es", "el doble de tokens", {"tokens": 160e6}),
        ("es", "¿y con la mitad del presupuesto?", {"budget": Money(amount=150.0, currency="EUR")}),
    ],
)
def test_a_factor_next_to_a_field_scales_the_jobs_value(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    assert scaled(text, lang) == expected


def test_an_open_field_scales_its_numeric_default_and_data_words_follow_the_jobs_unit() -> None:
    # lora_rank and epochs are open here: their defaults are 16 and one pass over the data.
    assert scaled("double the lora rank", "en", SAMPLES) == {"lora_rank": 32}
    assert scaled("half the epochs", "en", SAMPLES) == {"epochs": 1.5}
    assert scaled("twice the data", "en", SAMPLES) == {"samples": 60_000}
    assert scaled("twice the data", "en") == {"tokens": 160e6}
    # No amount of data and no budget to scale: nothing is made up.
    assert scaled("double the tokens", "en", JobSpec(method="lora")) == {}
    assert scaled("double the budget", "en", SAMPLES) == {}


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "half precision with batch size 8"),
        ("en", "is double quantization worth it for the tokens"),
        ("en", "double check the tokens please"),
        ("en", "double the fun"),
        ("en", "2x A100 with 80GB"),
        ("en", "half of the time goes into the data loader"),  # nine words apart: no pair
        ("fr", "demi-précision et doublé, mais la batch reste"),
    ],
)
def test_words_that_hold_no_factor_for_a_field_scale_nothing(lang: str, text: str) -> None:
    assert scaled(text, lang) == {}


def test_a_value_stated_outright_wins_over_a_relative_one() -> None:
    # "double the batch to 32": the 32 is what the person wants.
    assert scaled("double the batch to 32", "en") == {}
    assert extract_slots("double the batch to 32", "en").micro_batch_size == 32


def test_results_are_valid_job_values() -> None:
    tiny = JobSpec(method="lora", tokens=80e6, micro_batch_size=1)
    assert scaled("halve the batch size", "en", tiny) == {"micro_batch_size": 1}  # never 0
    huge = JobSpec(method="lora", tokens=80e6, seq_len=4_000_000)
    assert "seq_len" not in scaled("triple the context", "en", huge)  # over the 10M limit


def test_a_bare_size_of_the_conversations_own_model_names_that_model() -> None:
    llama_70b = JobSpec(model="meta-llama/Llama-3.1-70B", method="qlora")  # 70.55 B
    qwen_7b = JobSpec(model="Qwen/Qwen2.5-7B", method="lora")  # 7.62 B
    assert names_own_model(extract_slots("is spot safe for my 70B QLoRA run?", "en"), llama_70b)
    assert names_own_model(extract_slots("mijn 7B model met lora", "nl"), qwen_7b)
    # Another size, a named model, or a conversation that is itself about a bare size: no.
    assert not names_own_model(extract_slots("and an 8B model instead?", "en"), llama_70b)
    assert not names_own_model(extract_slots("and Llama 3.1 8B?", "en"), llama_70b)
    assert not names_own_model(extract_slots("a 13B model", "en"), JobSpec(model="7B"))
    assert not names_own_model(extract_slots("a 70B model", "en"), JobSpec(method="lora"))
