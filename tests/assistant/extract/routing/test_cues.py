"""The router's structural cues (assistant/extract/routing/cues.py): two GPUs offered as
alternatives ("X or Y", "X mı Y mı", "between X and Y"), and a question about what the job costs
or takes whose verb comes a few words after "how much" / "how long". Messages written here."""

from __future__ import annotations

import pytest

from assistant.extract import extract_slots, route_intent
from assistant.extract.routing.cues import Cues, read_cues
from tools.job import JobSpec

JOB = JobSpec(model="meta-llama/Llama-3.1-8B", method="lora")

ALTERNATIVES = [
    ("en", "should I go with the L40S or rather an H100 for this?"),
    ("nl", "kies ik de L4 of de A10G?"),
    ("fr", "une A100 80Go ou bien une H100 ici ?"),
    ("tr", "L40S mı A100 mü seçeyim?"),
    ("de", "nehme ich die L40S oder die A100?"),
    ("es", "¿me quedo con la L4 o la A10G?"),
]
BETWEEN = [
    ("en", "between an L4 and an A10G, which one would you pick?"),
    ("nl", "tussen een A100 en een H100, welke neem ik?"),
    ("fr", "entre une A10G et une L4, tu prendrais laquelle ?"),
    ("tr", "L4 ile A10G arasında hangisini seçmeliyim?"),
    ("de", "zwischen einer L4 und einer A10G, welche würdest du nehmen?"),
    ("es", "entre una A100 y una H100, ¿con cuál me quedo?"),
]
NOT_ALTERNATIVES = [
    ("en", "I have an A100 and an H100 at work"),  # "and" without "between"
    ("fr", "entre nous, une A100 suffit ?"),  # "between" with one GPU
    ("de", "die A100 ist gut, aber ich habe keine H100"),  # two names, nothing joining them
]


def _cues(text: str, lang: str, state: JobSpec = JOB) -> Cues:
    return read_cues(text, lang, state, extract_slots(text, lang))


@pytest.mark.parametrize(("lang", "text"), ALTERNATIVES + BETWEEN)
def test_two_gpus_offered_as_alternatives_are_a_comparison(lang: str, text: str) -> None:
    cues = _cues(text, lang)
    assert len(cues.gpu_families) == 2 and cues.compare_words, text
    routed = route_intent(text, lang, JOB, extract_slots(text, lang), "job")
    assert routed.intent == "compare", routed.reasons


@pytest.mark.parametrize(("lang", "text"), NOT_ALTERNATIVES)
def test_gpus_named_side_by_side_are_no_alternatives(lang: str, text: str) -> None:
    assert not _cues(text, lang).compare_words, text


COST = [
    ("en", "so how much is this going to cost me in the end?"),
    ("nl", "hoeveel moet ik daar uiteindelijk voor betalen?"),
    ("fr", "et au final, combien ça va me coûter ?"),
    ("tr", "bu iş bana kaça mal olur?"),
    ("de", "wie viel werde ich am Ende zahlen müssen?"),
    ("es", "¿y cuánto voy a pagar en total?"),
]
TIME = [
    ("en", "how long would the whole thing take?"),
    ("nl", "hoe lang gaat dat ongeveer duren?"),
    ("fr", "combien de temps ça va prendre au total ?"),
    ("tr", "bu ne kadar zaman alır?"),
    ("de", "wie lange wird das ungefähr dauern?"),
    ("es", "¿cuánto tiempo me va a llevar?"),
]


@pytest.mark.parametrize(("lang", "text"), COST)
def test_how_much_then_a_word_of_paying_asks_the_jobs_cost(lang: str, text: str) -> None:
    cues = _cues(text, lang)
    assert cues.asks_cost and not cues.asks_time, text
    routed = route_intent(text, lang, JOB, extract_slots(text, lang), "job")
    assert routed.intent == "guidance", routed.reasons
    assert "guidance +0.06: asks about the conversation's job" in routed.reasons


@pytest.mark.parametrize(("lang", "text"), TIME)
def test_how_long_then_a_word_of_taking_time_asks_the_jobs_hours(lang: str, text: str) -> None:
    cues = _cues(text, lang)
    assert cues.asks_time, text
    routed = route_intent(text, lang, JOB, extract_slots(text, lang), "job")
    assert routed.intent == "guidance", routed.reasons


def test_a_paying_word_far_from_how_much_asks_nothing() -> None:
    text = "how much memory does the optimizer need, and what does an H100 cost?"
    assert not _cues(text, "en").asks_cost, "'how much' asks about memory here"
