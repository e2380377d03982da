"""extract_slots on colloquial writing: slang currencies, a total stated after the amount,
abbreviations ("ipv"), inflected Turkish, spot instances named as instances, Italian and
Portuguese magnitudes, and the Dutch article "een" that folding makes look like "één"."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.extract import extract_slots
from tools.job import Money


def usd(amount: float) -> Money:
    return Money(amount=amount, currency="USD")


def eur(amount: float) -> Money:
    return Money(amount=amount, currency="EUR")


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "i've got 120 bucks for the whole thing", {"budget": usd(120.0)}),
        ("en", "lora run, 500 dollars in total", {"method": "lora", "budget": usd(500.0)}),
        ("nl", "qlora, 80 euro in totaal", {"method": "qlora", "budget": eur(80.0)}),
        ("de", "QLoRA, 90 Euro insgesamt", {"method": "qlora", "budget": eur(90.0)}),
        ("fr", "qlora, 60 euros au total", {"method": "qlora", "budget": eur(60.0)}),
        ("es", "qlora, 70 dólares en total", {"method": "qlora", "budget": usd(70.0)}),
        ("nl", "liever qlora ipv lora", {"method": "qlora"}),
        ("nl", "full finetune i.p.v. lora", {"method": "full"}),
        ("tr", "en ucuzunu seç", {"objective": "cost"}),
        ("tr", "spot kullanabilirim", {"spot": "allowed"}),
        ("es", "si usamos instancias spot", {"spot": "allowed"}),
        ("it", "lora con 40 milioni di token", {"method": "lora", "tokens": 40e6}),
        ("pt", "qlora com 2 bilhões de tokens", {"method": "qlora", "tokens": 2e9}),
        # issue 25, pattern 3: follow-ups as typed, with verbs of permission
        ("fr", "8k de contexte", {"seq_len": 8192}),
        ("fr", "passe à un contexte de 8k et autorise le spot",
         {"seq_len": 8192, "spot": "allowed"}),
        ("fr", "n'autorise pas le spot", {"spot": "never"}),
        ("tr", "spot olsun", {"spot": "allowed"}),
        ("tr", "bağlamı 8k yap ve spot'a izin ver", {"seq_len": 8192, "spot": "allowed"}),
        ("tr", "spot'a izin verme", {"spot": "never"}),
        ("de", "erlaube spot", {"spot": "allowed"}),
        ("de", "erlaube keinen spot", {"spot": "never"}),
        ("es", "permite spot y contexto de 4k", {"seq_len": 4096, "spot": "allowed"}),
        ("es", "no permitas spot", {"spot": "never"}),
        ("nl", "sta spot toe", {"spot": "allowed"}),
        ("en", "8k of context, and enable spot", {"seq_len": 8192, "spot": "allowed"}),
        ("en", "don't allow spot", {"spot": "never"}),
    ],
)  # fmt: skip
def test_colloquial_phrasing_sets_the_fields_it_states(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    assert extract_slots(text, lang).given() == expected


def test_the_dutch_article_is_no_gpu_count_but_a_single_gpu_is() -> None:
    assert extract_slots("ik wil een gpu huren voor lora", "nl").num_gpus is None
    assert extract_slots("ik wil een enkele gpu huren voor lora", "nl").num_gpus == 1
    assert extract_slots("ik wil 1 gpu huren voor lora", "nl").num_gpus == 1


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        # issue 25: spot and a word of approval in one clause, either order; a negation in
        # between or after sets it aside
        ("nl", "spot machines zijn voor mij ook goed", {"spot": "allowed"}),
        ("fr", "le spot me va", {"spot": "allowed"}),
        ("fr", "le spot, c'est pas ok", {}),
        ("de", "Spot wäre für uns in Ordnung", {"spot": "allowed"}),
        ("es", "spot nos vale", {"spot": "allowed"}),
        ("tr", "spot kullanmak bizim için sorun yok", {"spot": "allowed"}),
        ("tr", "spot uygun değil", {"spot": "never"}),
        ("tr", "spot kullanmayalım", {"spot": "never"}),
        ("en", "is spot safe for fine-tuning?", {}),  # "fine-" is no approval
        # a power-of-two "k" alone is a context length; a budget's is money
        ("tr", "16k?", {"seq_len": 16384}),
        ("en", "make it 32k then", {"seq_len": 32768}),
        ("en", "budget 8k", {}),
        # one word between a count and its noun; objectives and currencies as people write them
        ("en", "llama 8b qlora over 120k support samples",
         {"model": "meta-llama/Llama-3.1-8B", "method": "qlora", "samples": 120000}),
        ("es", "presupuesto de 50 libras", {"budget": Money(amount=50.0, currency="GBP")}),
        ("tr", "en hızlısını seç", {"objective": "time"}),
        ("de", "so billig wie möglich bitte", {"objective": "cost"}),
        ("es", "prioriza la velocidad", {"objective": "time"}),
        ("fr", "priorité au prix", {"objective": "cost"}),
    ],
)  # fmt: skip
def test_approval_bare_context_and_everyday_wording(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    test_colloquial_phrasing_sets_the_fields_it_states(lang, text, expected)
