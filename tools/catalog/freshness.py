"""How old a price is, in words and figures, per row and per provider.

A refreshed row has `fetched_at` (UTC download time) and ages in hours ("fetched 3 h ago from
gpuhunt"); a curated or imported row has only `as_of` and ages in days ("curated price, 187 days
old"). A price is stale when it is more than `stale_days` days old (Settings.stale_price_days,
default 120). These are the data helpers the CLI, the ranking and the app's Catalog tab share:
`price_age` per row, `provider_summaries` (or `summaries_of_aged`) per provider, `per_gpu_hour`
for a comparison column, `catalog_row` for a whole table row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.catalog.instances import DEFAULT_STALE_PRICE_DAYS, Instance, Origin
from tools.catalog.merge import price_time

SECONDS_PER_DAY = 86_400
_ORIGIN_WORDS = {"curated": "curated", "import": "imported", "gpuhunt": "", "skypilot": ""}


class PriceAge(BaseModel):
    """The age of one row's price on a given day."""

    model_config = ConfigDict(frozen=True)

    origin: Origin
    source: str
    fetched_at: datetime | None
    age_hours: float = Field(
        description="hours since the price was read (as_of counts from 0:00 UTC)"
    )
    age_days: int = Field(description="whole days since the price was read")
    stale: bool = Field(description="older than the stale limit in days")
    text: str = Field(
        description="e.g. 'fetched 3 h ago from gpuhunt', 'curated price, 187 days old'"
    )


def price_age(
    item: Instance, now: datetime, stale_days: int = DEFAULT_STALE_PRICE_DAYS
) -> PriceAge:
    """How old `item`'s price is at `now` (timezone-aware; naive means UTC)."""
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    seconds = max(0.0, (now - price_time(item)).total_seconds())
    days = int(seconds // SECONDS_PER_DAY) if item.fetched_at else (now.date() - item.as_of).days
    return PriceAge(
        origin=item.origin,
        source=item.source,
        fetched_at=item.fetched_at,
        age_hours=round(seconds / 3600, 3),
        age_days=days,
        stale=days > stale_days,
        text=age_text(item.origin, seconds, days),
    )


def age_text(origin: Origin, seconds: float, days: int) -> str:
    """'fetched 3 h ago from gpuhunt' for a refreshed row, 'curated price, 187 days old' else."""
    if origin in ("gpuhunt", "skypilot"):
        return f"fetched {duration(seconds)} ago from {origin}"
    return f"{_ORIGIN_WORDS[origin]} price, {days} day{'s' if days != 1 else ''} old"


def duration(seconds: float) -> str:
    """'12 min', '3 h', '4 days'."""
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))} min"
    if seconds < 2 * SECONDS_PER_DAY:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / SECONDS_PER_DAY)} days"


def short_age(age: PriceAge) -> str:
    """'3h', '187d', 'now' for a table cell."""
    if age.fetched_at is not None and age.age_hours < 48:
        return f"{round(age.age_hours)}h" if age.age_hours >= 1 else "now"
    return f"{age.age_days}d"


class ProviderFreshness(BaseModel):
    """How fresh one provider's prices are, for a summary line or the Catalog tab."""

    provider: str
    rows: int
    origins: dict[str, int] = Field(description="rows per origin (curated, import, gpuhunt, ...)")
    newest_hours: float = Field(description="age of the newest price, hours")
    oldest_days: int = Field(description="age of the oldest price, days")
    stale_rows: int
    text: str = Field(description="e.g. 'aws: 812 rows, fetched 3 h ago from gpuhunt'")


def provider_summaries(
    items: Iterable[Instance], now: datetime, stale_days: int = DEFAULT_STALE_PRICE_DAYS
) -> list[ProviderFreshness]:
    """One summary per provider of `items`, sorted by provider."""
    aged = ((item, price_age(item, now, stale_days)) for item in items)
    return summaries_of_aged(aged, stale_days)


def summaries_of_aged(
    aged: Iterable[tuple[Instance, PriceAge]], stale_days: int = DEFAULT_STALE_PRICE_DAYS
) -> list[ProviderFreshness]:
    """`provider_summaries` of rows whose ages are known (all read at one `now`, with
    `stale_days`): a ranking has them already, one per ranked row."""
    groups: dict[str, list[tuple[Instance, PriceAge]]] = {}
    for item, age in aged:
        groups.setdefault(item.provider, []).append((item, age))
    return [_summary(name, groups[name], stale_days) for name in sorted(groups)]


def _summary(
    provider: str, rows: list[tuple[Instance, PriceAge]], stale_days: int
) -> ProviderFreshness:
    origins = Counter(item.origin for item, _ in rows)
    ages = [age for _, age in rows]
    newest = min(ages, key=lambda a: a.age_hours)
    oldest = max(a.age_days for a in ages)
    stale = sum(a.stale for a in ages)
    parts = [f"{provider}: {len(rows)} row{'s' if len(rows) != 1 else ''}, {newest.text}"]
    if oldest != newest.age_days:
        parts.append(f"oldest {oldest} days")
    if len(origins) > 1:
        parts.append("mixed: " + ", ".join(f"{n} {o}" for o, n in sorted(origins.items())))
    if stale:
        parts.append(f"{stale} stale (older than {stale_days} days)")
    return ProviderFreshness(
        provider=provider,
        rows=len(rows),
        origins=dict(origins),
        newest_hours=newest.age_hours,
        oldest_days=oldest,
        stale_rows=stale,
        text="; ".join(parts),
    )


def per_gpu_hour(item: Instance, spot: bool = False) -> float | None:
    """USD per GPU-hour, on demand or spot (None without a spot price): the comparison column."""
    return item.spot_price_per_gpu_hour if spot else item.price_per_gpu_hour


def catalog_row(
    item: Instance, now: datetime, stale_days: int = DEFAULT_STALE_PRICE_DAYS
) -> dict[str, Any]:
    """One row of a comparison table (the CLI's `catalog list --json`, the app's Catalog tab):
    every Instance field as JSON, USD per GPU-hour on demand and spot, the price's age in days,
    hours and words, and the stale flag."""
    age = price_age(item, now, stale_days)
    spot = per_gpu_hour(item, spot=True)
    return {
        **item.model_dump(mode="json"),
        "price_per_gpu_hour": round(item.price_per_gpu_hour, 6),
        "spot_price_per_gpu_hour": None if spot is None else round(spot, 6),
        "price_age_days": age.age_days,
        "price_age_hours": age.age_hours,
        "price_age": age.text,
        "stale": age.stale,
    }
