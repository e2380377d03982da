"""Property tests: extraction never crashes and only produces values the tools accept."""

from __future__ import annotations

import statistics
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.extract import classify_intent, extract_slots
from assistant.extract.lexicon import lexicon
from assistant.extract.text import fold
from tests.assistant.extract.test_slots import CASES
from tools.advice import resolve_job
from tools.architectures.registry import resolve_model
from tools.catalog.providers import known_providers
from tools.gpus import gpu_ids
from tools.job import JobSpec, JobUpdate, apply_update
from tools.languages import LANGUAGES

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NUMBERS = st.one_of(
    st.integers(0, 10**12).map(str),
    st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.3g}"),
    st.sampled_from(["1,5", "200.000", "1 500", "2.048", "0.5", "1,234.5", "10.000,50", "8x",
                     "70B", "1.5b", "200M", "50k", "4k", "24GB", "48h", "$3/h", "€2", "50TL"]),
)  # fmt: skip
_NAMES = st.sampled_from(
    [
        "Llama 3.1 70B",
        "llama3-8b",
        "Mixtral 8x7B",
        "Qwen2.5 14B",
        "H100",
        "A100 80GB",
        "RTX 4090",
        "4090s",
        "8xH100",
        "Llama",
        "Qwen 14B",
    ]
)
_PUNCT = st.sampled_from([",", ".", "?", "!", "'", "'yi", "/", "-", "(", ")", ":", "=", "¦", "×"])


def _words() -> st.SearchStrategy[str]:
    vocabulary = lexicon().vocabulary()
    return st.lists(st.one_of(st.sampled_from(vocabulary), _NUMBERS, _NAMES, _PUNCT),
                    max_size=25).map(" ".join)  # fmt: skip


def check_update(update: JobUpdate) -> None:
    """Every value extracted is one the tools accept."""
    if update.model is not None:
        resolve_model(update.model)  # raises if not a valid spec
    for money in (update.max_price_per_hour, update.budget):
        assert money is None or money.amount > 0, f"money {money}"
    assert update.providers is None or set(update.providers) <= set(known_providers())
    assert update.gpus is None or set(update.gpus) <= set(gpu_ids()), f"gpus {update.gpus}"
    assert update.gpus is None or len(update.gpus) == len(set(update.gpus)), "no duplicates"


@pytest.mark.slow  # about 5 s: hypothesis generates long unicode texts slowly
@FUZZ
@given(text=st.text(max_size=300), lang=st.sampled_from(LANGUAGES))
def test_arbitrary_text_never_crashes(text: str, lang: str) -> None:
    update = extract_slots(text, lang)
    check_update(update)
    assert classify_intent(text, lang, JobSpec()) in ("job", "guidance", "mixed", "other")


@pytest.mark.slow  # about 2 s: builds a plan (registry, estimator input) per example
@FUZZ
@given(text=_words(), lang=st.sampled_from(LANGUAGES))
def test_lexicon_mixtures_give_valid_slots(text: str, lang: str) -> None:
    update = extract_slots(text, lang)
    check_update(update)
    state = apply_update(JobSpec(), update)
    plan = resolve_job(state, strict=False)  # never raises for an extracted state
    assert plan.ready == (state.model is not None) or plan.missing == ["model"], plan.missing
    assert classify_intent(text, lang, state) in ("job", "guidance", "mixed", "other")


@FUZZ
@given(text=st.text(max_size=200))
def test_fold_is_idempotent(text: str) -> None:
    once = fold(text)
    assert fold(once) == once, f"{text!r} -> {once!r} -> {fold(once)!r}"


@pytest.mark.parametrize(("lang", "text"), [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_casing_does_not_matter(lang: str, text: str) -> None:
    want = extract_slots(text, lang)
    for variant in (text.upper(), text.lower(), text.title()):
        assert extract_slots(variant, lang) == want, f"{variant!r} differs from {text!r}"


@pytest.mark.parametrize(
    ("a", "b"),
    [("İSTANBUL", "istanbul"), ("ıi", "ii"), ("Straße", "strasse"), ("épocas", "epocas"),
     ("Größe", "grosse"), ("8×H100", "8xh100"), ("l’heure", "l'heure")],
)  # fmt: skip
def test_fold(a: str, b: str) -> None:
    assert fold(a) == b, f"fold({a!r}) = {fold(a)!r}"


def test_extraction_is_fast() -> None:
    messages = [(c[1], c[2]) for c in CASES]
    for lang, text in messages:  # warm: compile every language's patterns once
        extract_slots(text, lang)
    rounds = []
    for _ in range(3):
        start = time.perf_counter()
        for lang, text in messages:
            extract_slots(text, lang)
        rounds.append((time.perf_counter() - start) / len(messages))
    per_message = statistics.median(rounds)
    assert per_message < 0.005, f"{per_message * 1000:.2f} ms per message (typical < 1 ms)"
