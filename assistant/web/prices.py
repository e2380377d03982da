"""Refreshing prices from the app: the Catalog tab's button and the `refresh_prices` endpoint.

`PriceRefresher` runs `tools.catalog.refresh.refresh_catalogs` for the whole app, one refresh at
a time: a request while one runs (from another tab, the API, the background thread or a CLI run
on the same data folder) is refused at once with `RefreshRunning`, never queued. After a refresh
in which a provider's prices changed, `on_updated()` loads the catalog again, so the Catalog
tab, the ranking and the chat use the new rows. The engine bounds every download (timeouts,
retries, a size cap) and fails fast offline; a provider that fails keeps its last good copy.

The views are pure functions (no UI library): a progress line per provider while it runs, one
line per provider when it is done, the closing summary, the outcome table, the endpoint's
JSON, and the header's line on how old the prices are. `assistant.web.blocks.catalog` draws them.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from assistant.web import cells
from assistant.web.tables import Column, Table, build_table, text_column
from assistant.web.ui_strings import ui_format, ui_text
from tools.catalog.freshness import PriceAge, price_age
from tools.catalog.instances import Instance
from tools.catalog.refresh import (
    ProviderResult,
    RefreshBusyError,
    RefreshConfig,
    RefreshEvent,
    RefreshReport,
    plan_refresh,
    refresh_catalogs,
)
from tools.catalog.refresh.models import SourceChoice
from tools.errors import AdvisorError, InvalidInputError

__all__ = [
    "PriceRefresher",
    "RefreshRunning",
    "outcome_table",
    "price_age_markdown",
    "progress_markdown",
    "report_json",
    "report_markdown",
    "result_line",
    "summary_line",
]

SOURCES: tuple[str, ...] = get_args(SourceChoice)
Refresh = Callable[..., RefreshReport]  # refresh_catalogs' signature
_WORKING = {"start": "refresh_checking", "checking": "refresh_checking",
            "downloading": "refresh_checking", "parsing": "refresh_parsing"}  # fmt: skip
_DONE = {"updated": "refresh_updated", "unchanged": "refresh_unchanged",
         "fresh": "refresh_fresh"}  # fmt: skip
_STATUS = {"updated": "refresh_status_updated", "unchanged": "refresh_status_unchanged",
           "fresh": "refresh_status_fresh", "failed": "refresh_status_failed"}  # fmt: skip


class RefreshRunning(AdvisorError):
    """A refresh is already running; this one did not start."""

    def __init__(self) -> None:
        super().__init__(
            "a price refresh is already running; its results count for everyone when it ends"
        )


class PriceRefresher:
    """The app's price refresh: one at a time, the catalog reloaded after a change."""

    def __init__(
        self,
        data_dir: Path,
        config: RefreshConfig | None,
        on_updated: Callable[[], None],
        *,
        refresh: Refresh = refresh_catalogs,
    ) -> None:
        self.data_dir, self.config, self.on_updated = data_dir, config, on_updated
        self._refresh = refresh
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._lock.locked()

    def run(
        self,
        providers: Sequence[str] | None = None,
        source: str = "all",
        on_progress: Callable[[RefreshEvent], None] | None = None,
    ) -> RefreshReport:
        """Refresh now and return the report. Raises InvalidInputError for an unknown provider
        or source (before anything starts) and RefreshRunning when a refresh is running."""
        chosen = _validated(providers, source)
        if not self._lock.acquire(blocking=False):
            raise RefreshRunning()
        return self._locked_run(providers, chosen, on_progress)

    def stream(
        self, providers: Sequence[str] | None = None, source: str = "all"
    ) -> Iterator[RefreshEvent | RefreshReport]:
        """Start a refresh on a worker thread and return its events as they happen, then the
        report. Raises at once, as `run` does, when it cannot start. A caller that stops
        reading leaves the refresh to finish on its own (the lock is released when it ends)."""
        chosen = _validated(providers, source)
        if not self._lock.acquire(blocking=False):
            raise RefreshRunning()
        events: queue.Queue[RefreshEvent | RefreshReport | BaseException] = queue.Queue()

        def work() -> None:
            try:
                events.put(self._locked_run(providers, chosen, events.put))
            except BaseException as exc:  # handed to the reader, who raises it
                events.put(exc)

        threading.Thread(target=work, name="price-refresh-ui", daemon=True).start()
        return _drain(events)

    def _locked_run(
        self,
        providers: Sequence[str] | None,
        source: SourceChoice,
        on_progress: Callable[[RefreshEvent], None] | None,
    ) -> RefreshReport:
        try:
            report = self._refresh(
                self.data_dir, self.config, providers=providers, source=source,
                on_progress=on_progress,
            )  # fmt: skip
        except RefreshBusyError:  # the background thread or another process holds the folder
            raise RefreshRunning() from None
        finally:
            self._lock.release()
        if any(result.status == "updated" for result in report.results):
            self.on_updated()
        return report


def _drain(
    events: queue.Queue[RefreshEvent | RefreshReport | BaseException],
) -> Iterator[RefreshEvent | RefreshReport]:
    while True:
        item = events.get()
        if isinstance(item, BaseException):
            raise item
        yield item
        if isinstance(item, RefreshReport):
            return


def _validated(providers: Sequence[str] | None, source: str) -> SourceChoice:
    """The source, checked, after checking every provider name against it."""
    if source not in SOURCES:
        raise InvalidInputError("source", source, f"one of {', '.join(SOURCES)}")
    chosen: SourceChoice = source  # type: ignore[assignment]
    if providers is not None and not all(isinstance(p, str) and p.strip() for p in providers):
        raise InvalidInputError("providers", list(providers), "a list of provider names")
    plan_refresh(providers, chosen)  # raises for an unknown provider, listing the known ones
    return chosen


# --------------------------------------------------------------------------- views


def _names(source: str, provider: str) -> dict[str, str]:
    return {"provider": provider, "source": source}


def result_line(result: ProviderResult, lang: str) -> str:
    """One line for a finished provider: what changed, or why it failed and what stays."""
    names = _names(result.source, result.provider)
    if result.status == "failed":
        key = "refresh_failed_kept" if result.kept_last_good else "refresh_failed_curated"
        return ui_format(lang, key, error=result.error or result.message, **names)
    count = cells.count(result.instances, lang)
    return ui_format(lang, _DONE[result.status], instances=count, **names)


def progress_markdown(events: Sequence[RefreshEvent], lang: str) -> str:
    """While a refresh runs: how many providers are done, then one line per provider started
    so far, in plan order: its stage, or its result once it has one."""
    lines: dict[str, str] = {}
    done, total = 0, 0
    for event in events:
        key = f"{event.source}-{event.provider}"
        total = max(total, event.total)
        done = max(done, event.done + (event.result is not None))
        if event.result is not None:
            lines[key] = result_line(event.result, lang)
        elif event.stage in _WORKING:
            lines[key] = ui_format(
                lang, _WORKING[event.stage], **_names(event.source, event.provider)
            )
    head = ui_format(lang, "refresh_progress", done=done, total=total)
    return "\n".join([head, "", *(f"- {line}" for line in lines.values())])


def summary_line(report: RefreshReport, instances: int, lang: str) -> str:
    """The closing line: providers current, how many failed, what the catalog holds now."""
    failed = len(report.failed)
    key = "refresh_done_failed" if failed else "refresh_done"
    return ui_format(
        lang, key, current=len(report.results) - failed, total=len(report.results),
        failed=failed, instances=cells.count(instances, lang),
    )  # fmt: skip


def report_markdown(report: RefreshReport, instances: int, lang: str) -> str:
    """The status after a refresh: the summary, then one line per provider."""
    lines = [f"- {result_line(r, lang)}" for r in report.results]
    return "\n".join([summary_line(report, instances, lang), "", *lines])


def _moment(when: datetime | None, lang: str) -> str:
    """'Nov 30, 2026 11:00 UTC' in the locale's date style."""
    if when is None:
        return cells.DASH
    when = when.astimezone(UTC)
    return f"{cells.day(when.date(), lang)} {when:%H:%M} UTC"


def _hours_old(result: ProviderResult, now: datetime) -> float | None:
    if result.fetched_at is None:
        return None
    return round(max(0.0, (now - result.fetched_at).total_seconds() / 3600), 2)


def _age(result: ProviderResult, now: datetime, lang: str) -> str:
    hours = _hours_old(result, now)
    return cells.DASH if hours is None else cells.age_cell(int(hours // 24), hours, True, lang)


def _status(result: ProviderResult, lang: str) -> str:
    return ui_text(lang, _STATUS[result.status])


def _instances(result: ProviderResult, lang: str) -> str:
    return cells.count(result.instances, lang)


def _fetched(result: ProviderResult, lang: str) -> str:
    return _moment(result.fetched_at, lang)


def outcome_table(report: RefreshReport, now: datetime, lang: str) -> Table:
    """One row per provider of the refresh: source, outcome, instance types in use, when that
    copy was downloaded and its age (the built-in prices when never), and why it failed."""
    columns: tuple[Column[ProviderResult], ...] = (
        text_column("col_provider", lambda r: r.provider),
        text_column("col_origin", lambda r: r.source),
        Column("col_status", "str", lambda r: r.status, _status),
        Column("col_instances", "number", lambda r: r.instances, _instances),
        Column("col_fetched", "str", lambda r: _moment(r.fetched_at, "en"), _fetched),
        Column("col_age", "number", lambda r: _hours_old(r, now), lambda r, lg: _age(r, now, lg)),
        text_column("col_reason", lambda r: r.error or ""),
    )
    return build_table(columns, report.results, lang)


def report_json(report: RefreshReport, instances: int) -> str:
    """The endpoint's answer: per provider its outcome, rows in use, as_of, source and error;
    then the totals and how many instance types the catalog holds now."""
    providers: list[dict[str, Any]] = [
        {
            "provider": r.provider, "source": r.source, "status": r.status,
            "instance_types": r.instances, "rows_read": r.rows_read,
            "as_of": r.fetched_at.isoformat() if r.fetched_at else None,
            "url": r.url, "version": r.version, "error": r.error,
            "kept_last_good": r.kept_last_good, "unknown_gpus": r.unknown_gpus,
            "message": r.message,
        }
        for r in report.results
    ]  # fmt: skip
    return json.dumps(
        {
            "ok": report.ok, "providers": providers, "failed": len(report.failed),
            "started_at": report.started_at.isoformat(),
            "finished_at": report.finished_at.isoformat(), "catalog_instance_types": instances,
        },
        ensure_ascii=False,
    )  # fmt: skip


def price_age_markdown(
    catalog: Iterable[Instance], now: datetime, stale_days: int, lang: str
) -> str:
    """The header's line on how old the prices are: the newest and the median price's age,
    and how many rows are older than `stale_days` ('Price age: newest 3 hr, median 187 days ·
    ⚠ 120 of 140 older than 120 days'). Empty for an empty catalog."""
    ages = sorted((price_age(item, now, stale_days) for item in catalog), key=_hours)
    if not ages:
        return ""
    median = ages[len(ages) // 2]
    stale = sum(age.stale for age in ages)
    line = ui_format(
        lang, "price_age_line", newest=_age_of(ages[0], lang), median=_age_of(median, lang)
    )
    if stale:
        counted = ui_format(
            lang, "price_age_stale", stale=cells.count(stale, lang),
            total=cells.count(len(ages), lang), days=cells.count(stale_days, lang),
        )  # fmt: skip
        line = f"{line} · ⚠ {counted}"
    return line


def _hours(age: PriceAge) -> float:
    return age.age_hours


def _age_of(age: PriceAge, lang: str) -> str:
    return cells.age_cell(age.age_days, age.age_hours, age.fetched_at is not None, lang)
