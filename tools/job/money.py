"""Money as the user gave it: an amount and its ISO 4217 currency.

Catalog prices are USD. An amount in another currency is kept as written; whether and how it is
converted is decided where the job is resolved (`tools.advice`), which says so in the answer.
`Money.parse` reads what people type: "200", "200 EUR", "€200", "$3.5", "3.5usd", "1.000,50 €".
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.errors import InvalidInputError

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
}
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
