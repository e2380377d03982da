"""The router's cues on messages that are neither small talk nor about training: small talk
greets, thanks or asks who the advisor is; anything else about nothing GPU Advisor covers leans
out of scope (`_about_nothing_covered`), while a greeting or a job word keeps its intent."""

from __future__ import annotations

import pytest

from assistant.extract import extract_slots, route_intent
from tools.job import JobSpec

OFF_TOPIC = [
    ("en", "who do you think wins the world cup final?"),
    ("de", "wie spielt der FC Bayern am Samstag?"),
    ("es", "¿cómo quedó el partido del Madrid anoche?"),
    ("tr", "yarın istanbul'da hava nasıl olacak?"),
]
SMALL_TALK = [
    ("en", "hey there, what can you do?"),
    ("de", "danke, das war hilfreich"),
    ("es", "hola, buenos días"),
    ("tr", "teşekkür ederim"),
]


@pytest.mark.parametrize(("lang", "text"), OFF_TOPIC)
def test_a_question_about_nothing_covered_is_out_of_scope(lang: str, text: str) -> None:
    routed = route_intent(text, lang, JobSpec(), extract_slots(text, lang))
    assert routed.intent == "out_of_scope", routed.reasons


def test_the_cue_names_its_reason() -> None:
    text = "who do you think wins the world cup final?"
    routed = route_intent(text, "en", JobSpec(), extract_slots(text, "en"))
    assert "out_of_scope +0.03: no greeting, nothing about training or GPUs" in routed.reasons


@pytest.mark.parametrize(("lang", "text"), SMALL_TALK)
def test_greetings_and_thanks_stay_small_talk(lang: str, text: str) -> None:
    routed = route_intent(text, lang, JobSpec(), extract_slots(text, lang))
    assert routed.intent == "small_talk", routed.reasons
    assert not any("nothing about training" in r for r in routed.reasons)


def test_a_job_word_is_never_pushed_out_of_scope() -> None:
    routed = route_intent("llama 3.1 8b?", "en", JobSpec(), extract_slots("llama 3.1 8b?", "en"))
    assert not any("nothing about training" in r for r in routed.reasons)


@pytest.mark.xfail(strict=True, reason="a recommendation word makes it read as a job question")
def test_known_gap_an_off_topic_recommendation() -> None:
    text = "qué película me recomiendas para esta noche?"
    assert route_intent(text, "es", JobSpec(), extract_slots(text, "es")).intent == "out_of_scope"
