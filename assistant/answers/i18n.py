"""Message catalogs and locale formatting for the six answer languages.

Templates live in `assistant/answers/messages/<lang>.yaml`, one file per language, with the same
keys in every file and named `{placeholders}` only (values are formatted here, never inside
templates). A nested YAML mapping is flattened to dotted keys ("job.memory.summary"). A leaf mapping
whose keys are CLDR plural categories (one, other, ...) is a plural message, chosen by Babel's
plural rules for the locale. Catalogs are read on first use and cached for the process.

Numbers, money, sizes, hours and percentages are formatted with Babel for the locale of the
language (en_US, nl_NL, fr_FR, tr_TR, de_DE, es_ES). Money keeps the currency it is given: a
figure in USD is shown in USD in every language, never converted.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from datetime import date
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType

import yaml
from babel import Locale
from babel.dates import format_date as babel_format_date
from babel.lists import format_list as babel_format_list
from babel.numbers import format_currency, format_decimal, is_currency
from babel.numbers import format_percent as babel_format_percent
from babel.units import format_unit

from assistant.languages import resolve_lang
from tools.errors import InvalidInputError
from tools.languages import LANGUAGES, LOCALES, Language
from tools.units import to_gib

__all__ = [
    "LANGUAGES",
    "LOCALES",
    "Language",
    "catalog",
    "format_count",
    "format_date",
    "format_duration",
    "format_gib",
    "format_hours",
    "format_list",
    "format_money",
    "format_number",
    "format_percent",
    "has_message",
    "language_name",
    "message",
    "placeholders",
    "plural",
]

PLURAL_CATEGORIES = frozenset({"zero", "one", "two", "few", "many", "other"})
NBSP = "\u00a0"
_MESSAGES_PACKAGE = "assistant.answers"
_MESSAGES_DIR = "messages"

Message = str | Mapping[str, str]  # a template, or plural templates by CLDR category


def _locale(lang: str) -> Locale:
    return _locale_for(resolve_lang(lang))


@cache
def _locale_for(lang: Language) -> Locale:
    return Locale.parse(LOCALES[lang])


# ------------------------------------------------------------------------------ catalogs


def catalog(lang: str) -> Mapping[str, Message]:
    """The flattened, read-only message catalog of `lang` (read once, then cached)."""
    return _catalog(resolve_lang(lang))


@cache
def _catalog(code: Language) -> Mapping[str, Message]:
    source = resources.files(_MESSAGES_PACKAGE) / _MESSAGES_DIR / f"{code}.yaml"
    data = yaml.load(
        source.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    if not isinstance(data, dict):
        raise ValueError(f"message catalog {code}.yaml: expected a mapping at the top")
    flat: dict[str, Message] = {}
    _flatten(data, "", flat, f"{code}.yaml")
    return MappingProxyType(flat)


def _flatten(node: Mapping[str, object], prefix: str, out: dict[str, Message], where: str) -> None:
    for key, value in node.items():
        if not isinstance(key, str):  # YAML 1.1 reads bare yes/no/on/off as booleans
            raise ValueError(f"message catalog {where}: key {key!r} under {prefix!r} is not text")
        name = f"{prefix}{key}"
        if isinstance(value, str):
            out[name] = value
        elif isinstance(value, dict) and _is_plural(value):
            out[name] = MappingProxyType({str(k): str(v) for k, v in value.items()})
        elif isinstance(value, dict):
            _flatten(value, f"{name}.", out, where)
        else:
            raise ValueError(f"message catalog {where}: {name} is {type(value).__name__}, not text")


def _is_plural(value: Mapping[object, object]) -> bool:
    keys = {str(k) for k in value}
    return (
        "other" in keys
        and keys <= PLURAL_CATEGORIES
        and all(isinstance(v, str) for v in value.values())
    )


def placeholders(template: str) -> frozenset[str]:
    """The named placeholders of a template: '{a} and {b}' -> {'a', 'b'}."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


def _template(lang: str, key: str) -> Message:
    try:
        return catalog(lang)[key]
    except KeyError:
        raise KeyError(
            f"message {key!r} is missing from the {resolve_lang(lang)} catalog"
        ) from None


def _fill(template: str, key: str, values: Mapping[str, object]) -> str:
    try:
        return template.format_map(values)
    except KeyError as exc:
        raise KeyError(f"message {key!r} needs a value for {exc.args[0]!r}") from None


def message(lang: str, key: str, /, **values: object) -> str:
    """The template `key` of `lang` with its placeholders filled from `values` (pre-formatted)."""
    template = _template(lang, key)
    if not isinstance(template, str):
        raise TypeError(f"message {key!r} is a plural message; use plural()")
    return _fill(template, key, values)


def plural(lang: str, key: str, count: float, /, **values: object) -> str:
    """The plural form of `key` for `count` (Babel's CLDR rules), placeholders filled; the
    formatted count is available to the template as {count}."""
    template = _template(lang, key)
    if isinstance(template, str):
        raise TypeError(f"message {key!r} is not a plural message; use message()")
    category = _locale(lang).plural_form(count)
    chosen = template.get(category, template["other"])
    return _fill(chosen, key, {"count": format_count(count, lang), **values})


def has_message(lang: str, key: str) -> bool:
    return key in catalog(lang)


# ------------------------------------------------------------------------------ formatting


def _decimal_pattern(digits: int) -> str:
    return "#,##0." + "0" * digits if digits > 0 else "#,##0"


# Formatted numbers kept, by their arguments (Babel takes 30-60 us a number; a panel or an answer
# formats the same prices, hours and totals again and again: about 115 money cells a chat turn).
# A kept key cannot tell -0.0 from 0.0 (they are equal), so -0.0 is formatted as 0.0 ('$0.00',
# not '-$0.00') whatever was formatted first.
FORMATTED = 8192


def format_number(value: float, lang: str, digits: int = 1) -> str:
    """A decimal with exactly `digits` fraction digits in the locale: 1234.5 -> '1.234,5' (de)."""
    return _format_number(value + 0.0, lang, digits)  # + 0.0: -0.0 becomes 0.0


@lru_cache(maxsize=FORMATTED)
def _format_number(value: float, lang: str, digits: int) -> str:
    return format_decimal(value, format=_decimal_pattern(digits), locale=_locale(lang))


@lru_cache(maxsize=FORMATTED)
def format_count(count: float, lang: str) -> str:
    """A whole number with the locale's grouping: 12345 -> '12.345' (de), '12 345' (fr)."""
    return format_decimal(round(count), format="#,##0", locale=_locale(lang))


def money_digits(amount: float) -> int:
    """Fraction digits shown for money: whole units from 100 up, cents below."""
    return 0 if abs(amount) >= 100 else 2


def format_money(amount: float, currency: str, lang: str, digits: int | None = None) -> str:
    """`amount` in `currency` (ISO code, kept as given: USD stays USD) in the locale's style:
    '$1,234' (en), '1.234 $' (de), 'US$ 12,50' (nl). Digits default to `money_digits`."""
    return _format_money(amount + 0.0, currency, lang, digits)  # + 0.0: -0.0 becomes 0.0


@lru_cache(maxsize=FORMATTED)
def _format_money(amount: float, currency: str, lang: str, digits: int | None) -> str:
    code = currency.strip().upper()
    if not is_currency(code):
        raise InvalidInputError("currency", currency, "an ISO 4217 code such as USD, EUR or TRY")
    locale = _locale(lang)
    places = money_digits(amount) if digits is None else digits
    base = locale.currency_formats["standard"].pattern
    pattern = base.replace("#,##0.00", _decimal_pattern(places))
    text = format_currency(amount, code, format=pattern, locale=locale, currency_digits=False)
    return _currency_spacing(text)


def _currency_spacing(text: str) -> str:
    """CLDR currency spacing: a letter-ending symbol ('TRY', 'US') is kept apart from the digits
    by a no-break space ('TRY 1,234'), which Babel's formatter leaves out."""
    text = re.sub(r"(?<=[^\W\d_])(?=\d)", NBSP, text)
    return re.sub(r"(?<=\d)(?=[^\W\d_])", NBSP, text)


def format_gib(n_bytes: float, lang: str, digits: int = 1) -> str:
    """Bytes as GiB (2^30) in the locale: 44_880_000_000 -> '41,8 GiB' (de; no-break space)."""
    return f"{format_number(to_gib(n_bytes), lang, digits)}{NBSP}GiB"


def hour_digits(hours: float) -> int:
    """Fraction digits shown for hours: 2 below one hour, 1 below 100 hours, else none."""
    if abs(hours) < 1:
        return 2
    return 1 if abs(hours) < 100 else 0


def format_hours(hours: float, lang: str, digits: int | None = None) -> str:
    """Hours with the locale's short unit: '12.5 hr' (en), '12,5 Std.' (de), '12,5 sa.' (tr)."""
    places = hour_digits(hours) if digits is None else digits
    return format_unit(
        hours,
        "duration-hour",
        length="short",
        format=_decimal_pattern(places),
        locale=_locale(lang),
    )


def format_duration(hours: float, lang: str) -> str:
    """A run time or interval: minutes under an hour ('26 min', '26 dk.' in tr), else hours."""
    if abs(hours) >= 1:
        return format_hours(hours, lang)
    minutes = hours * 60
    return format_unit(
        minutes,
        "duration-minute",
        length="short",
        format=_decimal_pattern(0 if abs(minutes) >= 1 else 1),
        locale=_locale(lang),
    )


def format_percent(fraction: float, lang: str, digits: int = 0) -> str:
    """A fraction as a percentage in the locale: 0.12 -> '12%' (en), '12 %' (de), '%12' (tr)."""
    locale = _locale(lang)
    base = locale.percent_formats[None].pattern
    pattern = base.replace("#,##0", _decimal_pattern(digits))
    return babel_format_percent(fraction, format=pattern, locale=locale)


def format_date(day: date, lang: str) -> str:
    """A date in the locale's medium style: 'Jun 1, 2025' (en), '01.06.2025' (de)."""
    return babel_format_date(day, format="medium", locale=_locale(lang))


def format_list(items: list[str], lang: str) -> str:
    """'a, b and c' joined the locale's way ('a, b und c' in de)."""
    return babel_format_list(items, locale=_locale(lang)) if items else ""


def language_name(code: str, lang: str) -> str:
    """The name of language `code` written in `lang`: ('de', 'fr') -> 'allemand'."""
    name = Locale.parse(code).get_display_name(_locale(lang))
    return name or code
