"""Grounding: reading figures in six languages' styles, and tracing them to their sources."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from datetime import date

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from assistant.answers.i18n import (
    LANGUAGES,
    catalog,
    format_count,
    format_date,
    format_gib,
    format_hours,
    format_money,
    format_number,
    format_percent,
)
from assistant.grounding.check import GroundingSources, SourceIndex, check_grounding
from assistant.grounding.figures import shown_figures
from tests.fakes.artifacts import make_estimate, make_excluded, make_option, make_ranking
from tools.units import GIB


def _values(text: str) -> list[list[float]]:
    """Each figure's readings as written (first candidate of each reading)."""
    numbers, _ = shown_figures(text)
    return [[reading[0].value for reading in n.readings] for n in numbers]


def _check(text: str, *artifacts: object, users: tuple[str, ...] = ()) -> list[str]:
    sources = GroundingSources(artifacts=list(artifacts), user_messages=list(users))
    return check_grounding(text, sources).ungrounded_numbers


# ------------------------------------------------------------------------------ reading


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.5", [[1234.5]]),
        ("1.234,5", [[1234.5]]),
        ("1\u00a0234,5", [[1234.5]]),
        ("1\u202f234,5", [[1234.5]]),
        ("1 234,5", [[1234.5, 1.0]]),  # plain space: one grouped number, or "1" then "234,5"
        ("1,234", [[1234.0, 1.234]]),  # a lone separator before 3 digits reads both ways
        ("1.234.567", [[1234567.0]]),
        ("41.8 GiB", [[41.8]]),
        ("41,8\u00a0GiB", [[41.8]]),
        ("$3 and €2 and 3/h", [[3.0], [2.0], [3.0]]),
        ("%12 or 12 %", [[12.0, 0.12], [12.0, 0.12]]),
        ("8x H100", [[8.0]]),
        ("70B", [[70.0, 70e9]]),
        ("70 B", [[70.0, 70e9]]),
        ("70 miljard", [[70.0, 70e9]]),
        ("7 milyar", [[7.0, 7e9]]),
        ("8 Milliarden", [[8.0, 8e9]]),
        ("200M tokens", [[200.0, 200e6]]),
        ("2 billion", [[2.0, 2e9, 2e12]]),  # en 1e9, fr/es/de 1e12
        ("7e9", [[7e9]]),
        ("yüzde 40", [[40.0, 0.4]]),
    ],
)
def test_reading_figures(text: str, expected: list[list[float]]) -> None:
    assert _values(text) == expected, text


@pytest.mark.parametrize(
    "text",
    [
        "H100-SXM",
        "p4d.24xlarge",
        "a2-highgpu-8g",
        "ZeRO-3/FSDP",
        "bf16-mixed",
        "Llama-3.1-70B",
        "see https://example.com/v2/pricing?id=123",
        "[pricing](https://example.com/42)",
        "1. **aws** p5\n2) second\n- 3. third",
        "the 1st, 2nd, 2e, 3º choice",
        "error id 3f9a12bc",
    ],
)
def test_not_figures(text: str) -> None:
    assert _values(text) == [], f"{text!r} shows no figure to trace"


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("as of 2025-06-01.", [(2025, 6, 1)]),
        ("01.06.2025", [(2025, 6, 1), (2025, 1, 6)]),
        ("Jun 1, 2025", [(2025, 6, 1)]),
        ("1 juin 2025", [(2025, 6, 1)]),
        ("1. Juni 2025", [(2025, 6, 1)]),
        ("1 Haz 2025", [(2025, 6, 1)]),
        ("1 de junio de 2025", [(2025, 6, 1)]),
        ("June 2025", [(2025, 6, None)]),
    ],
)
def test_reading_dates(text: str, options: list[tuple[int, int, int | None]]) -> None:
    numbers, dates = shown_figures(text)
    assert numbers == [], f"{text!r}: a date is not a number"
    assert [list(d.options) for d in dates] == [options], text


def test_small_plain_integers_are_exact_and_others_are_not() -> None:
    numbers, _ = shown_figures("3 GPUs, 3.0 h, $3, 30 nodes, 3 %")
    exact = [n.readings[0][0].exact for n in numbers]
    assert exact == [True, False, False, False, False], "only the bare small integer is exact"


# ------------------------------------------------------------------------------ tracing

OPTION = make_option(
    price_per_hour=98.32, total_cost=1213.4, hours=12.34, gpu_count=8, margin=0.912
)
ESTIMATE = make_estimate()


@pytest.mark.parametrize(
    ("text", "ungrounded"),
    [
        ("8× L40S at $98.32 per hour, $1,213 in total, 91% spare", []),
        ("8× L40S zu 98,32\u00a0$ pro Stunde, insgesamt 1.213\u00a0$", []),
        ("8× L40S, 1\u202f213\u00a0$US au total, 12,3\u202fh", []),
        ("%91 boş pay, 12,3 sa.", []),
        ("needs 21.7 GiB (23.3 GB) of 48.0 GiB", []),  # bytes shown as GiB and as GB
        ("12.3 h, about 740 minutes", []),  # hours field also as minutes
        ("price as of Jun 1, 2025", []),
        ("price as of 2025-06-02", ["2025-06-02"]),
        ("an H100 costs $0.01/h", ["0.01"]),  # hallucinated price
        ("8× L40S at $79.00 per hour", ["79.00"]),
        ("needs 39.5 GiB per GPU", ["39.5"]),  # hallucinated VRAM figure
        ("has 80 GB of memory", ["80"]),
        ("7 GPUs", ["7"]),  # a small count must equal a source count
    ],
)
def test_tracing_to_artifacts(text: str, ungrounded: list[str]) -> None:
    assert _check(text, OPTION, ESTIMATE) == ungrounded, text


def test_rounding_tolerance_follows_the_written_precision() -> None:
    source = {"need": 41.83}
    assert _check("41.8", source) == [], "41.8 is 41.83 to one decimal"
    assert _check("42", source) == [], "42 is 41.83 to a whole number"
    assert _check("41.9", source) == ["41.9"], "41.9 is not 41.83 to one decimal"
    assert _check("41.83", {"need": 41.6}) == ["41.83"], "two decimals claim more precision"
    assert _check("42", {"need": 41.6}) == [], "a shown 42 matches 41.6"


def test_the_written_sign_or_unit_limits_what_a_figure_may_match() -> None:
    size = {"need_bytes": int(41.8 * GIB)}
    assert _check("41.8 GiB", size) == [], "bytes shown in GiB"
    assert _check("41,8\u00a0Gio", size) == [], "French unit"
    assert _check("$41.8", size) == ["41.8"], "money never matches a byte count's GiB form"
    assert _check("4180%", size) == ["4180%"], "nor a percentage of a size"
    fraction = {"margin": 0.912}
    assert _check("91 %", fraction) == [], "a float as a percentage"
    assert _check("$91", fraction) == ["91"], "money never matches a percentage form"
    hours = {"checkpoint_interval_hours": 0.75}
    assert _check("45 min", hours) == [], "hours as minutes"
    assert _check("45 dk.", hours) == [], "hours as minutes (tr)"
    assert _check("45 GiB", hours) == ["45"], "a size unit does not match a time form"


def test_small_integers_need_an_equal_source_count() -> None:
    assert _check("3 GPUs", {"hours": 2.7}) == ["3"], "2.7 hours is not '3 GPUs'"
    assert _check("top 3", {"ranked": ["a", "b", "c"]}) == [], "a list's length is a count"
    assert _check("1. first\n2. second", {}) == [], "list markers are structure"


def test_user_messages_and_passages_are_sources() -> None:
    sources = GroundingSources(
        passages=["Keep a margin of about 10% and checkpoint every 30 minutes."],
        user_messages=["fine-tune a 70B model, max €2/h, 200 milyon token"],
    )
    for text in ("10 %", "30", "70 milliards", "70B", "2 €", "200M tokens", "0.2B tokens"):
        assert check_grounding(text, sources).grounded, f"{text} comes from a source text"
    assert check_grounding("15 %", sources).ungrounded_numbers == ["15 %"], "not in any source"


@dataclasses.dataclass
class _Row:
    vram_gib: float
    kind: str


class _Color(enum.Enum):
    RED = 7


def test_walker_reads_every_container_and_skips_booleans() -> None:
    index = SourceIndex()
    index.add_object(
        {
            "row": _Row(vram_gib=80.0, kind="x 12 y"),
            "nested": [[1.5, 2.5], (33,)],
            "flag": True,
            "color": _Color.RED,
            "day": date(2024, 2, 29),
        }
    )
    for text, grounded in [
        ("80.0 GiB", True),
        ("85.9 GB", True),  # a *_gib field as GB
        ("12", True),  # a figure inside a string field
        ("150%", True),  # a float as a percentage
        ("33", True),
        ("7", True),  # the enum's value
        ("2024", True),  # a date's year
        ("29.02.2024", True),
        ("1", True),  # the inner tuple's length
        ("4", False),
    ]:
        assert check_grounding(text, index).grounded is grounded, text
    assert check_grounding("True", index).checked == 0, "no figure in a word"


def test_report_lists_each_ungrounded_figure_once_in_order() -> None:
    report = check_grounding("$9.99, then 123.4 GiB, then $9.99 again", GroundingSources())
    assert report.ungrounded_numbers == ["9.99", "123.4"], "deduplicated, in order"
    assert report.checked == 3, "three figures looked up"
    assert not report.grounded, "untraced figures"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_message_templates_contain_no_figures(lang: str) -> None:
    for key, value in catalog(lang).items():
        for template in [value] if isinstance(value, str) else value.values():
            assert _values(template) == [], f"{lang}:{key} writes a figure of its own"


# ------------------------------------------------------------------------------ properties

Formatter = Callable[[float, str], str]
# kind -> (source values, formatter, the forms a source value may be displayed in)
KINDS: dict[str, tuple[st.SearchStrategy[float], Formatter, Callable[[float], list[float]]]] = {
    "money": (
        st.floats(1, 1e7),
        lambda v, lang: format_money(v, "USD", lang),
        lambda v: [v],
    ),
    "gib": (
        st.integers(1 << 27, 1 << 46).map(float),
        lambda v, lang: format_gib(int(v), lang),
        lambda v: [v / GIB, v / 1e9],  # a GiB figure may also be the GB form
    ),
    "hours": (st.floats(0.05, 1e5), format_hours, lambda v: [v]),
    "percent": (st.floats(0.001, 20), format_percent, lambda v: [v * 100, v]),
    "number": (st.floats(0.1, 1e7), lambda v, lang: format_number(v, lang, 2), lambda v: [v]),
}


def _source(kind: str, value: float) -> dict[str, object]:
    return {"value": int(value) if kind == "gib" else value}


@given(st.sampled_from(sorted(KINDS)), st.sampled_from(LANGUAGES), st.data())
def test_any_localised_source_value_is_grounded(kind: str, lang: str, data: st.DataObject) -> None:
    values, fmt, _ = KINDS[kind]
    value = data.draw(values)
    text = f"Result: {fmt(value, lang)}."
    report = check_grounding(text, GroundingSources(artifacts=[_source(kind, value)]))
    assert report.grounded, f"{text!r} from {value} ({lang})"


@given(st.integers(0, 10**12), st.sampled_from(LANGUAGES))
def test_any_localised_count_is_grounded(value: int, lang: str) -> None:
    text = f"{format_count(value, lang)} tokens"
    assert check_grounding(text, GroundingSources(artifacts=[[value]])).grounded, text


@given(st.dates(date(1990, 1, 1), date(2100, 12, 31)), st.sampled_from(LANGUAGES))
def test_any_localised_source_date_is_grounded(day: date, lang: str) -> None:
    text = f"as of {format_date(day, lang)}"
    assert check_grounding(text, GroundingSources(artifacts=[day])).grounded, text


@given(
    st.sampled_from(sorted(KINDS)),
    st.sampled_from(LANGUAGES),
    st.floats(0.1, 0.5),
    st.booleans(),
    st.data(),
)
def test_a_value_perturbed_beyond_rounding_is_not_grounded(
    kind: str, lang: str, delta: float, down: bool, data: st.DataObject
) -> None:
    values, fmt, displayed = KINDS[kind]
    value = data.draw(values)
    shown_value = value * (1 - delta if down else 1 + delta)
    text = fmt(shown_value, lang)
    numbers, _ = shown_figures(text)
    written = numbers[0].readings[0][0]
    assume(all(abs(written.value - form) > 2 * written.tol for form in displayed(value)))
    report = check_grounding(text, GroundingSources(artifacts=[_source(kind, value)]))
    assert not report.grounded, f"{text!r} is not {value} ({lang})"


# ------------------------------------------------------------------------------ every decimal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$3.1416", [[3.1416]]),  # not "3.141" (3141 or 3.141) and a stray 6
        ("$0.0173", [[0.0173]]),  # not "0.017" (17 or 0.017) and a stray 3
        ("12,34567 GiB", [[12.34567]]),
        ("1,234.5678", [[1234.5678]]),
        ("1.234,5678", [[1234.5678]]),
        ("0.017", [[0.017]]),  # a lone 0 groups nothing: a fraction only
        ("0,125", [[0.125]]),
        ("1234.567", [[1234.567]]),  # four leading digits are no thousands group
        ("1.234.567", [[1234567.0]]),  # groups throughout: thousands only
        ("1,234", [[1234.0, 1.234]]),  # exactly three digits after one mark: both readings
        ("1,234,5", [[1234.5]]),  # malformed: read whole, never cut
    ],
)
def test_every_decimal_is_read(text: str, expected: list[list[float]]) -> None:
    assert _values(text) == expected, text


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("1,234", "en", [[1234.0]]),
        ("1.234", "en", [[1.234]]),
        ("1,234", "de", [[1.234]]),
        ("1.234", "de", [[1234.0]]),
        ("1.234", "tr", [[1234.0]]),
        ("1,234", "fr", [[1.234]]),
        ("1.234", "fr", [[1234.0, 1.234]]),  # French groups with a space: "." stays ambiguous
        ("1,234", None, [[1234.0, 1.234]]),
    ],
)
def test_the_answer_language_settles_a_lone_three_digit_group(
    text: str, lang: str | None, expected: list[list[float]]
) -> None:
    numbers, _ = shown_figures(text, lang)
    assert [[r[0].value for r in n.readings] for n in numbers] == expected, f"{text} ({lang})"


def test_a_truncated_reading_no_longer_grounds_an_invented_figure() -> None:
    assert _check("costs $0.0173 per token", {"nodes": 17}) == ["0.0173"], "17 is not 0.0173"
    assert _check("$3.1416 per hour", {"tokens": 3141}) == ["3.1416"], "3141 is not 3.1416"
    assert _check("$3.1416 per hour", {"price_per_hour": 3.14159}) == [], "the value shown"
    sources = GroundingSources(artifacts=[{"tokens": 1234}])
    assert check_grounding("1.234", sources, lang="de").grounded, "1.234 is 1234 in German"
    assert not check_grounding("1.234", sources, lang="en").grounded, "1.234 is 1.234 in English"


def test_tiny_money_traces_only_to_money() -> None:
    assert _check("an H100 costs $0.01/h", {"margin": 0.012}) == ["0.01"], "a fraction is no price"
    assert _check("an H100 costs $0.01/h", {"price_per_hour": 0.012}) == [], "a price, rounded"
    assert _check("an H100 costs $0.01/h", {"price_per_hour": 0.016}) == ["0.01"], "not rounded"
    state_budget = {"budget": {"amount": 0.5, "currency": "EUR"}}
    assert _check("within your 0,50 € per hour", state_budget) == [], "the user's Money amount"
    assert _check("0,50 €", {"ratio": 0.5}) == ["0,50"], "a ratio is no amount of money"
    assert _check("$12.00", {"ratio": 12.0}) == [], "a whole unit or more still matches by value"
    passage = GroundingSources(passages=["Spot capacity can cost $0.35/h; use a 0.01 margin."])
    assert check_grounding("$0.35/h", passage).grounded, "money a passage writes as money"
    assert not check_grounding("$0.01/h", passage).grounded, "0.01 is written there, not as money"
    users = GroundingSources(user_messages=["an H100 costs $0.01/h"])
    assert check_grounding("$0.01/h", users).grounded, "the user's own figure (guarded elsewhere)"


@given(
    st.floats(0.0001, 1e6, allow_nan=False),
    st.integers(4, 7),
    st.sampled_from(LANGUAGES),
    st.booleans(),
)
def test_any_number_with_many_decimals_is_read_whole(
    value: float, digits: int, lang: str, with_lang: bool
) -> None:
    text = format_number(value, lang, digits)
    numbers, _ = shown_figures(text, lang if with_lang else None)
    assert len(numbers) == 1, f"{text!r}: one figure"
    shown = round(value, digits)
    first = numbers[0].readings[0][0]
    assert first.value == pytest.approx(shown, rel=1e-12, abs=1e-12), f"{text!r} is {shown}"
    assert first.tol == pytest.approx(0.5 * 10.0**-digits), f"{text!r}: {digits} decimals"
    assert len(numbers[0].readings) == 1, f"{text!r}: more than three decimals are no group"


@given(st.integers(1, 10**9), st.sampled_from(LANGUAGES))
def test_in_its_own_language_a_count_has_one_reading(value: int, lang: str) -> None:
    text = format_count(value, lang)
    numbers, _ = shown_figures(text, lang)
    assert [[r[0].value for r in n.readings] for n in numbers] == [[value]], (
        f"{text!r}: one reading"
    )
    assert check_grounding(text, GroundingSources(artifacts=[[value]]), lang=lang).grounded, text


@given(st.integers(1, 99), st.sampled_from(LANGUAGES), st.sampled_from(["margin", "ratio", "util"]))
def test_an_invented_amount_below_one_unit_needs_a_money_source(
    cents: int, lang: str, field: str
) -> None:
    amount = cents / 100
    text = format_money(amount, "USD", lang)
    plain = GroundingSources(artifacts=[{field: amount}], passages=[f"about {amount} of it"])
    assert not check_grounding(text, plain).grounded, f"{text!r}: {amount} is no price there"
    priced = GroundingSources(artifacts=[{"price_per_hour": amount}])
    assert check_grounding(text, priced).grounded, f"{text!r} is the price"
    digits = f"{cents:02d}"  # "$0.0173"-style: more decimals, same leading digits
    invented = format_number(float(f"0.0{digits}7"), lang, 4)
    assert not check_grounding(f"$ {invented}", GroundingSources(artifacts=[[cents]])).grounded


def test_a_text_read_again_grounds_the_same_and_lends_nothing_to_other_texts() -> None:
    """A source text's figures are read once per process and reused: an index that adds it
    again (a catalog name, a passage, an earlier message on the next turn) grounds the same,
    and another text never gets its money or dates."""
    priced = "an L4 at $0.49/h since 2024-05-01, 80 GB"
    plain = "an L4 with 0.49 of something, 80 GB"
    answers = ["It costs $0.49/h.", "Prices date from 2024-05-01.", "It has 80 GB."]
    for _ in range(2):
        priced_index, plain_index = SourceIndex(), SourceIndex()
        priced_index.add_text(priced)
        plain_index.add_text(plain)
        assert [check_grounding(a, priced_index).grounded for a in answers] == [True] * 3
        assert [check_grounding(a, plain_index).grounded for a in answers] == [False, False, True]


# ------------------------------------------------------------------------------ walked on demand


def _whole(artifacts: list[object]) -> SourceIndex:
    """An index with every artifact walked at once (what a deferred walk must equal)."""
    index = SourceIndex()
    for artifact in artifacts:
        index.add_object(artifact)
    return index


def _ranking_artifacts() -> list[object]:
    options = [
        make_option(i, price_per_hour=1.1 * i, total_cost=37.5 * i, hours=3.25 * i)
        for i in range(1, 26)
    ]
    excluded = make_excluded("memory", 40) + make_excluded("budget", 30, gpu="L4")
    return [make_estimate(), make_ranking(options, excluded), {"when": date(2026, 11, 30)}]


def _probes(artifacts: list[object]) -> list[str]:
    """Every figure an answer could show from the artifacts, and near misses of each."""
    whole = _whole(artifacts)
    texts = [f"{v:g}" for values in whole._values.values() for v in values]
    near = [f"{float(t) * 1.013 + 0.7:.3f}" for t in texts]
    return [*texts, *near, "$0.01/h", "2026-11-30", "2031-01-02", "137 excluded", "70B"]


def test_a_deferred_walk_grounds_exactly_what_a_whole_walk_grounds() -> None:
    artifacts = _ranking_artifacts()
    whole = _whole(artifacts)
    for probe in _probes(artifacts):
        deferred = GroundingSources(artifacts=artifacts).index()
        expected = check_grounding(probe, whole)
        assert check_grounding(probe, deferred) == expected, probe


def test_a_figure_of_the_first_rows_leaves_the_rest_unwalked() -> None:
    """The first ranked row's price and the estimate's figures are found without walking the
    excluded rows; a figure no source holds walks everything and is not found."""
    artifacts = _ranking_artifacts()
    index = GroundingSources(artifacts=artifacts).index()
    first = artifacts[1].ranked[0]  # type: ignore[attr-defined]
    assert check_grounding(f"${first.price_per_hour:.2f}/h", index).grounded
    assert index._pending, "the excluded rows were not walked"
    assert not check_grounding("it costs $12345.67", index).grounded
    assert not index._pending


values_of = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(-1e9, 1e9)
    | st.sampled_from(["8x H100 at $2.49/h", "2026-11-30", "41.8 GiB", "no figure"]),
    lambda inner: st.lists(inner, max_size=6)
    | st.dictionaries(st.sampled_from(["price", "memory_gib", "hours", "n", "total_cost"]),
                      inner, max_size=4),
    max_leaves=40,
)  # fmt: skip


@given(st.lists(values_of, max_size=4), st.lists(st.floats(0, 1e9), max_size=8))
def test_deferred_and_whole_walks_agree_on_any_artifacts(
    artifacts: list[object], figures: list[float]
) -> None:
    whole = _whole(artifacts)
    for figure in figures:
        for text in (f"{figure:.2f}", f"${figure:g}", f"{figure:.1f} GiB", f"{figure:.0f} h"):
            deferred = GroundingSources(artifacts=artifacts).index()
            assert check_grounding(text, deferred) == check_grounding(text, whole), text


def test_a_figure_past_float_range_is_grounded_only_by_the_same_writing() -> None:
    """The chat quotes a value it refused ("“1e309 tokens” cannot be used"): it has no value
    to compare, so the user's own writing of it grounds it, and nothing else does."""
    answer = "“1e309 tokens” cannot be used as training tokens."
    said = GroundingSources(user_messages=["QLoRA on Llama 3.1 8B with 1e309 tokens"])
    assert check_grounding(answer, said).grounded
    other = GroundingSources(user_messages=["QLoRA with 1e308 tokens"], artifacts=[1e308, "2e400"])
    assert check_grounding(answer, other).ungrounded_numbers == ["1e309"]
    index = GroundingSources(artifacts=[{"note": "1e309 tokens"}]).index()
    assert check_grounding(answer, index).grounded, "a deferred artifact is walked for it"
