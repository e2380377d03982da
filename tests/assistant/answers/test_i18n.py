"""Message catalogs (same keys and placeholders in every language) and Babel formatting."""

from __future__ import annotations

import string
from datetime import date

import pytest
from babel import Locale
from hypothesis import given
from hypothesis import strategies as st

from assistant.answers import i18n
from assistant.answers.i18n import (
    LANGUAGES,
    NBSP,
    catalog,
    format_count,
    format_date,
    format_gib,
    format_hours,
    format_list,
    format_money,
    format_number,
    format_percent,
    language_name,
    message,
    placeholders,
    plural,
)
from tools.errors import InvalidInputError
from tools.units import GIB

NNBSP = "\u202f"


def _templates(value: i18n.Message) -> list[str]:
    return [value] if isinstance(value, str) else list(value.values())


# ------------------------------------------------------------------------------ catalogs


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_exactly_the_english_keys(lang: str) -> None:
    english, other = set(catalog("en")), set(catalog(lang))
    assert other - english == set(), f"{lang} has keys English lacks"
    assert english - other == set(), f"{lang} lacks keys"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_match_english_for_every_key(lang: str) -> None:
    for key, value in catalog("en").items():
        theirs = catalog(lang)[key]
        assert isinstance(theirs, str) == isinstance(value, str), f"{lang}:{key} plural kind"
        wanted = set().union(*(placeholders(t) for t in _templates(value)))
        for template in _templates(theirs):
            extra = placeholders(template) - wanted - {"count"}
            assert extra == set(), f"{lang}:{key} uses placeholders English lacks: {extra}"
        found = set().union(*(placeholders(t) for t in _templates(theirs)))
        assert wanted - {"count"} <= found, f"{lang}:{key} drops {wanted - found}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_templates_use_named_placeholders_without_format_specs(lang: str) -> None:
    for key, value in catalog(lang).items():
        for template in _templates(value):
            for _, name, spec, conversion in string.Formatter().parse(template):
                if name is None:
                    continue
                assert name.isidentifier(), f"{lang}:{key}: placeholder {name!r} is not named"
                assert not spec and not conversion, f"{lang}:{key}: format in template"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_messages_use_the_locales_categories(lang: str) -> None:
    allowed = Locale.parse(i18n.LOCALES[lang]).plural_form.tags | {"other"}
    for key, value in catalog(lang).items():
        if not isinstance(value, str):
            assert "other" in value, f"{lang}:{key} lacks 'other'"
            assert set(value) <= allowed, f"{lang}:{key}: {set(value) - allowed} not in {lang}"


def test_catalog_is_read_once_and_read_only() -> None:
    assert catalog("de") is catalog("DE-de"), "one cached catalog per language"
    with pytest.raises(TypeError):
        catalog("de")["memory.heading"] = "x"  # type: ignore[index]


def test_yaml_boolean_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"key True under 'value\.' is not text"):
        i18n._flatten({"value": {True: "yes"}}, "", {}, "xx.yaml")


def test_message_fills_named_placeholders() -> None:
    text = message("de", "options.gpus", count="8", gpu="H100-SXM")
    assert text == "8× H100-SXM", "template filled"


def test_message_errors_name_the_key_and_the_missing_value() -> None:
    with pytest.raises(KeyError, match=r"'nope\.key' is missing from the nl catalog"):
        message("nl", "nope.key")
    with pytest.raises(KeyError, match=r"'options\.gpus' needs a value for 'gpu'"):
        message("en", "options.gpus", count="8")
    with pytest.raises(TypeError, match="plural message; use plural"):
        message("en", "options.nodes")


@pytest.mark.parametrize(
    ("lang", "count", "expected"),
    [
        ("en", 1, "1 node"),
        ("en", 2, "2 nodes"),
        ("fr", 1, "1 nœud"),
        ("fr", 2, "2 nœuds"),
        ("de", 4, "4 Knoten"),
        ("tr", 3, "3 düğüm"),
        ("es", 1_000_000, "1.000.000 nodos"),
    ],
)
def test_plural_picks_the_cldr_form(lang: str, count: int, expected: str) -> None:
    assert plural(lang, "options.nodes", count) == expected, f"{lang} {count}"


# ------------------------------------------------------------------------------ languages


@pytest.mark.parametrize(
    ("code", "lang", "expected"),
    [
        ("de", "fr", "allemand"),
        ("en", "nl", "Engels"),
        ("tr", "tr", "Türkçe"),
        ("es", "de", "Spanisch"),
    ],
)
def test_language_name(code: str, lang: str, expected: str) -> None:
    assert language_name(code, lang) == expected, f"{code} in {lang}"


# ------------------------------------------------------------------------------ formatting

MONEY = {
    "en": ("$1,235", "€2.50", f"TRY{NBSP}12,345"),
    "nl": (f"US${NBSP}1.235", f"€{NBSP}2,50", f"TRY{NBSP}12.345"),
    "fr": (f"1{NNBSP}235{NBSP}$US", f"2,50{NBSP}€", f"12{NNBSP}345{NBSP}TRY"),
    "tr": ("$1.235", "€2,50", "₺12.345"),
    "de": (f"1.235{NBSP}$", f"2,50{NBSP}€", f"12.345{NBSP}TRY"),
    "es": (f"1.235{NBSP}US$", f"2,50{NBSP}€", f"12.345{NBSP}TRY"),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_format_money_keeps_the_currency_and_the_locale_style(lang: str) -> None:
    usd, eur, try_ = MONEY[lang]
    assert format_money(1234.56, "USD", lang) == usd, f"{lang} USD, whole units from 100"
    assert format_money(2.5, "EUR", lang) == eur, f"{lang} EUR, cents below 100"
    assert format_money(12345, "try", lang) == try_, f"{lang} TRY never converted"


def test_format_money_digits_and_bad_currency() -> None:
    assert format_money(98.321, "USD", "en", digits=0) == "$98", "explicit digits"
    with pytest.raises(InvalidInputError, match="currency: got 'XYZ'; valid: an ISO 4217 code"):
        format_money(1.0, "XYZ", "en")


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "41.8"),
        ("nl", "41,8"),
        ("fr", "41,8"),
        ("tr", "41,8"),
        ("de", "41,8"),
        ("es", "41,8"),
    ],
)
def test_format_gib(lang: str, expected: str) -> None:
    assert format_gib(44_880_000_000, lang) == f"{expected}{NBSP}GiB", lang


def test_format_gib_digits_and_grouping() -> None:
    assert format_gib(1234.5 * GIB, "de", digits=2) == f"1.234,50{NBSP}GiB", "grouped, 2 digits"
    assert format_gib(1234.5 * GIB, "fr", digits=0) == f"1{NNBSP}234{NBSP}GiB", "fr groups"


@pytest.mark.parametrize(
    ("lang", "hours", "expected"),
    [
        ("en", 12.345, "12.3 hr"),
        ("nl", 12.345, "12,3 uur"),
        ("fr", 12.345, f"12,3{NNBSP}h"),
        ("tr", 12.345, "12,3 sa."),
        ("de", 0.756, "0,76 Std."),
        ("es", 1234.6, "1.235 h"),
    ],
)
def test_format_hours(lang: str, hours: float, expected: str) -> None:
    assert format_hours(hours, lang) == expected, f"{lang} {hours}"


@pytest.mark.parametrize(
    ("lang", "hours", "expected"),
    [
        ("en", 0.42, "25 min"),
        ("tr", 0.05, "3 dk."),
        ("de", 0.005, "0,3 Min."),
        ("fr", 2.5, f"2,5{NNBSP}h"),
    ],
)
def test_format_duration_uses_minutes_under_an_hour(lang: str, hours: float, expected: str) -> None:
    assert i18n.format_duration(hours, lang) == expected, f"{lang} {hours}"


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "12%"),
        ("nl", "12%"),
        ("fr", f"12{NBSP}%"),
        ("tr", "%12"),
        ("de", f"12{NBSP}%"),
        ("es", f"12{NBSP}%"),
    ],
)
def test_format_percent(lang: str, expected: str) -> None:
    assert format_percent(0.123, lang) == expected, lang


def test_format_percent_digits() -> None:
    assert format_percent(1.2346, "tr", digits=1) == "%123,5", "one digit, tr sign first"


def test_format_count_number_date_and_list() -> None:
    assert format_count(1234567, "de") == "1.234.567", "de grouping"
    assert format_count(2.6, "en") == "3", "rounded to a whole number"
    assert format_number(0.5, "fr", 2) == "0,50", "fixed fraction digits"
    assert format_date(date(2025, 6, 1), "de") == "01.06.2025", "de medium date"
    assert format_date(date(2025, 6, 1), "en") == "Jun 1, 2025", "en medium date"
    assert format_list(["a", "b", "c"], "nl") == "a, b en c", "nl list"
    assert format_list([], "nl") == "", "empty list"


@given(st.floats(min_value=0, max_value=1e7, allow_nan=False), st.sampled_from(LANGUAGES))
def test_formatters_never_fail_on_plain_values(value: float, lang: str) -> None:
    for text in (
        format_money(value, "USD", lang),
        format_gib(value * GIB, lang),
        format_hours(value, lang),
        format_percent(value / 1e7, lang),
        format_count(value, lang),
    ):
        assert text and any(ch.isdigit() for ch in text), f"{lang}: {text!r} shows a figure"


@given(
    amount=st.floats(min_value=-1e7, max_value=1e7, allow_nan=False),
    lang=st.sampled_from(["en", "nl", "fr", "tr", "de", "es"]),
    digits=st.sampled_from([None, 0, 2]),
)
def test_kept_figures_are_the_ones_babel_writes(
    amount: float, lang: str, digits: int | None
) -> None:
    """Formatted numbers are kept by their arguments; a kept one is what formatting gives."""
    kept = (i18n.format_money(amount, "USD", lang, digits), i18n.format_number(amount, lang, 1))
    zero_as_zero = amount + 0.0
    assert kept == (
        i18n._format_money.__wrapped__(zero_as_zero, "USD", lang, digits),
        i18n._format_number.__wrapped__(zero_as_zero, lang, 1),
    )
    assert i18n.format_count(amount, lang) == i18n.format_count.__wrapped__(amount, lang)


@pytest.mark.parametrize("first", [0.0, -0.0])
def test_minus_zero_is_written_as_zero_whatever_came_first(first: float) -> None:
    """-0.0 equals 0.0, so a kept figure cannot tell them apart: both are written as zero (CI
    once got '$0.00' for -0.0 after a 0.0, where Babel alone writes '-$0.00')."""
    for lang in ("en", "de"):
        i18n._format_money.cache_clear()
        i18n._format_number.cache_clear()
        shown = [
            (i18n.format_money(x, "USD", lang), i18n.format_number(x, lang))
            for x in (first, -first)
        ]
        assert shown[0] == shown[1] and "-" not in "".join(shown[0])


def test_a_bad_currency_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(InvalidInputError, match="currency"):
            i18n.format_money(1.0, "XXXX", "en")
