"""Numbers nobody means: overflow, huge digit runs, NaN words, negative counts.

Every parser of numbers in text (the grounding figures, the extraction numbers, slot extraction
and the grounding check over both) takes any text without raising; a value that is not a finite
float is "not a usable number" (grounded only by its own writing, never a slot value); a minus
sign is kept, so "-100M tokens" is never read as 100M.
A conversation in which a user wrote "1e309" goes on.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.agent.conversation import Assistant, Session
from assistant.extract.numbers import NUMBER, NUMBER_FR, parse_number, read_number
from assistant.extract.slots import extract_slots
from assistant.grounding.check import GroundingSources, check_grounding
from assistant.grounding.figures import UNUSABLE, shown_figures
from assistant.settings import Settings
from knowledge.retrieval import Passage
from tools.catalog import builtin_catalog
from tools.languages import LANGUAGES

pytestmark = pytest.mark.reliability

# Pieces of number-like text: digits of several scripts, every separator the parsers know,
# signs, exponents, magnitude words and suffixes, currencies, percent and units.
PIECES = [
    *"0123456789",
    "٣", "３", "²", "½",
    ".", ",", "'", "’", " ", "\u00a0", "\u202f", "-", "−", "+", "e", "E",
    "e309", "e-400", "E+999", "1e309", "9" * 400, "1" * 5000, "nan", "inf", "NaN", "Infinity",
    "k", "M", "B", "T", "million", "milliards", "Milliarden", "milyar", "billón",
    "$", "€", "₺", "%", "USD", "GiB", "GB", "h", "hours", "tokens", "GPUs", "x H100",
    "2026-11-30", "30.11.2026", "3 mars 2026", "EKİM 2026", "Ağustos", "1st", "2e",
    "llama-3.1-8b", "http://h:1/?k=1", "\n1. ", "**2)**",
]  # fmt: skip
number_like = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
any_text = st.one_of(number_like, st.text(max_size=200))
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@FUZZ
@given(text=any_text, lang=st.sampled_from([None, *LANGUAGES]))
def test_grounding_figures_never_raise_and_are_finite_or_unusable(
    text: str, lang: str | None
) -> None:
    numbers, _dates = shown_figures(text, lang)
    for number in numbers:
        candidates = [c for reading in number.readings for c in reading]
        finite = all(math.isfinite(c.value) and math.isfinite(c.tol) for c in candidates)
        assert finite or number.readings == ((UNUSABLE,),), number
        assert number.usable == finite


@FUZZ
@given(text=any_text)
def test_extract_numbers_never_raise_and_every_match_is_finite(text: str) -> None:
    value = read_number(text)
    assert value is None or math.isfinite(value)
    assert math.isnan(parse_number(text)) == (value is None)
    for pattern in (NUMBER, NUMBER_FR):
        for match in re.finditer(pattern, text):
            parsed = read_number(match.group())
            assert parsed is not None and abs(parsed) < 1e106, (match.group(), parsed)


@FUZZ
@given(text=any_text, lang=st.sampled_from(LANGUAGES))
def test_slot_extraction_never_raises_and_reads_no_unusable_value(text: str, lang: str) -> None:
    update = extract_slots(text, lang)
    for name, value in update.model_dump(exclude_none=True).items():
        if isinstance(value, float):
            assert math.isfinite(value) and value > 0, (name, value)


@FUZZ
@given(answer=any_text, said=any_text)
def test_the_grounding_check_never_raises(answer: str, said: str) -> None:
    report = check_grounding(answer, GroundingSources(user_messages=[said], passages=[said]))
    assert report.checked >= len(report.ungrounded_numbers)


@pytest.mark.parametrize(
    ("text", "shown"),
    [("what about 1e309 tokens?", "1e309"), ("1" * 400 + " tokens", "1" * 400)],
)
def test_an_overflowing_figure_is_grounded_by_its_own_writing_only(text: str, shown: str) -> None:
    """A figure past float range has no value: the answer may quote the user's own writing of
    it back (to refuse it), but no value, however close, grounds it."""
    (number,), _ = shown_figures(text)
    assert (number.text, number.usable) == (shown, False)
    answer = f"You asked about {shown} tokens."
    assert check_grounding(answer, GroundingSources(user_messages=[text])).grounded
    near = GroundingSources(user_messages=["1e308 tokens", "9" * 300], artifacts=[math.inf])
    assert check_grounding(answer, near).ungrounded_numbers == [shown]


def test_tiny_and_ordinary_exponents_still_read() -> None:
    (tiny,), _ = shown_figures("2.5e-320")
    (plain,), _ = shown_figures("3e2 GPUs")
    assert tiny.usable and tiny.readings[0][0].value == 2.5e-320
    assert plain.readings[0][0].value == 300.0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("-100", -100.0),
        ("−2,5", -2.5),
        ("1.234,5", 1234.5),
        ("200 000", 200000.0),
        ("9" * 400, None),
        ("nan", None),
        ("inf", None),
        ("", None),
        ("1e5", 100000.0),
        ("2.5E3", 2500.0),
        ("1e309", None),
        ("-", None),
    ],
)
def test_read_number(text: str, value: float | None) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("-100M tokens", ["-100"]),
        ("7-13B params", ["7", "13"]),
        ("llama-3 and 2-4 GPUs", ["3", "2", "4"]),
        ("1" * 40 + " GPUs", []),
        ("v1.2.3.4.5.6.7.8", []),
    ],
)
def test_the_number_pattern_keeps_signs_and_skips_unusable_runs(
    text: str, numbers: list[str]
) -> None:
    assert [m.group() for m in re.finditer(NUMBER, text)] == numbers


def test_a_negative_count_is_never_read_as_positive() -> None:
    negative = extract_slots("QLoRA on Llama 3.1 8B, -100M tokens", "en")
    positive = extract_slots("QLoRA on Llama 3.1 8B, 100M tokens", "en")
    assert positive.tokens == 1e8
    assert negative.tokens is None, "dropped, not read as +100M"
    assert extract_slots("I need -8 GPUs", "en").num_gpus is None


class NoKnowledge:
    """A knowledge base that finds nothing (this test is about the user's numbers)."""

    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        return []


def test_a_session_goes_on_after_1e309(tmp_path: Path) -> None:
    assistant = Assistant(
        Settings(data_dir=tmp_path / "data"), knowledge=NoKnowledge(), catalog=builtin_catalog()
    )
    session = Session()
    turns = [
        "I want to fine-tune Llama 3.1 8B with QLoRA",
        "what about 1e309 tokens?",
        "and 200M tokens?",
        "what about -100M tokens?",
    ]
    results = [assistant.respond(message, session).result for message in turns]
    assert [r.error_id for r in results] == [None] * 4, [r.answer[:80] for r in results]
    assert "tokens" not in results[1].state, "1e309 is no token count"
    assert results[2].state["tokens"] == 2e8
    assert results[3].state["tokens"] == 2e8, "-100M is not read as +100M"
    assert len(session.history) == 8, "every turn kept"


def test_a_turkish_capital_month_is_a_date() -> None:
    _, dates = shown_figures("15 EKİM 2026, Ekim 2026")
    assert [d.options for d in dates] == [((2026, 10, 15),), ((2026, 10, None),)]
