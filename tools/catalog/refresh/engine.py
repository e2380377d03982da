"""`refresh_catalogs`: download current offers per provider, keep the last good copy on failure.

Each provider is refreshed on its own, in plan order: a copy younger than its source's TTL is not
fetched at all ("fresh"); otherwise the source is asked whether it changed (gpuhunt's version
file, SkyPilot's ETag) and the catalog is downloaded only when it did; the new copy is parsed,
checked against the last good one (`tools.catalog.refresh.parsed.check_copy`) and written
atomically. Any failure (unreachable, HTTP error after retries, truncated, changed header, more
than half the rows gone) leaves that provider's last good copy in place, is reported in one line,
and the refresh goes on with the next provider. Nothing is downloaded unless this is called.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tools.catalog.files import CatalogFileError, read_catalog_file, write_catalog_csv
from tools.catalog.instances import Catalog
from tools.catalog.refresh import gpuhunt_live, gpuhunt_source, skypilot_source
from tools.catalog.refresh.http import FetchError, HttpPolicy, Unreachable
from tools.catalog.refresh.models import (
    ProgressFn,
    ProviderPlan,
    ProviderResult,
    RefreshConfig,
    RefreshEvent,
    RefreshReport,
    SourceChoice,
    Stage,
)
from tools.catalog.refresh.parsed import Download, NotModified, Parsed, SnapshotError, check_copy
from tools.catalog.refresh.state import (
    SnapshotState,
    read_states,
    refresh_lock,
    snapshot_path,
    snapshot_paths,
    write_states,
)
from tools.errors import InvalidInputError

_SOURCES = {"gpuhunt": gpuhunt_source, "skypilot": skypilot_source}


def plan_refresh(
    providers: Sequence[str] | None = None, source: SourceChoice = "all"
) -> list[ProviderPlan]:
    """Which (source, provider) pairs to refresh. Without `providers`: every gpuhunt offline
    provider and/or SkyPilot's clouds that gpuhunt lacks (never a live marketplace API). With
    them, each named provider from the first source that publishes it: gpuhunt's offline
    catalogs, then SkyPilot's (any SkyPilot cloud may be named with --source skypilot), then
    gpuhunt's live providers (first with --source gpuhunt). Unknown names raise
    InvalidInputError listing the known ones."""
    hunted = gpuhunt_source.offline_providers() if source in ("gpuhunt", "all") else {}
    live = gpuhunt_live.live_providers() if source in ("gpuhunt", "all") else {}
    sky = set(skypilot_source.CLOUDS) if source in ("skypilot", "all") else set()
    if not providers:
        plans = [ProviderPlan(source="gpuhunt", provider=p, remote=r) for p, r in hunted.items()]
        return plans + [ProviderPlan(source="skypilot", provider=c, remote=c) for c in sorted(sky)]
    return [_plan_for(name, source, hunted, live, sky)
            for name in dict.fromkeys(p.strip().lower() for p in providers)]  # fmt: skip


def _plan_for(
    name: str, source: SourceChoice, hunted: dict[str, str], live: dict[str, str], sky: set[str]
) -> ProviderPlan:
    if name in hunted:
        return ProviderPlan(source="gpuhunt", provider=name, remote=hunted[name])
    if name in live and (source == "gpuhunt" or name not in sky):
        return ProviderPlan(source="gpuhunt", provider=name, remote=live[name], live=True)
    if name in sky or (source == "skypilot" and name.isidentifier()):
        return ProviderPlan(source="skypilot", provider=name, remote=name)
    known = sorted({*hunted, *sky, *live})
    raise InvalidInputError("provider", name, f"one of {', '.join(known)} (source {source})")


def refresh_catalogs(
    data_dir: Path,
    config: RefreshConfig | None = None,
    *,
    providers: Sequence[str] | None = None,
    source: SourceChoice = "all",
    force: bool = False,
    accept_changes: bool = False,
    max_age: timedelta | None = None,
    on_progress: ProgressFn | None = None,
    now: Callable[[], datetime] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> RefreshReport:
    """Refresh the planned providers into `<data_dir>/prices/` and report on each.

    config: URLs, timeouts, retries, TTLs (RefreshConfig(); the CLI and the app build it from
    Settings). force: ignore TTLs and versions, download everything. accept_changes: take a copy
    whose header changed or whose rows dropped by more than config.max_drop. max_age: refresh only
    what is older than this (the app's background refresh), overriding the TTLs. on_progress:
    called per stage of each provider. now/sleep: clock and backoff sleep (tests pass their own).
    Raises RefreshBusyError when another refresh holds the data folder."""
    config = config or RefreshConfig()
    clock = now or (lambda: datetime.now(UTC))
    plans = plan_refresh(providers, source)
    policy = HttpPolicy(
        timeout_s=config.timeout_s, attempts=config.attempts, backoff_s=config.backoff_s,
        max_bytes=config.max_bytes, sleep=sleep or HttpPolicy().sleep,
    )  # fmt: skip
    started = clock()
    results: list[ProviderResult] = []
    with refresh_lock(data_dir):
        states = read_states(data_dir)
        unreachable = Unreachable()
        for plan in plans:

            def emit(
                stage: Stage, message: str = "", result: ProviderResult | None = None,
                _plan: ProviderPlan = plan,
            ) -> None:  # fmt: skip
                if on_progress is not None:
                    event = RefreshEvent(
                        source=_plan.source, provider=_plan.provider, stage=stage,
                        message=message, done=len(results), total=len(plans), result=result,
                    )  # fmt: skip
                    on_progress(event)

            emit("start")
            ttl = max_age or timedelta(hours=config.ttl_hours.get(plan.source, 1.0))
            job = _Job(plan, states.get(plan.key), data_dir, config, policy, unreachable, clock)
            result = job.run(force, accept_changes, ttl, emit)
            if job.state is not None:
                states[plan.key] = job.state
                write_states(data_dir, states)
            emit("failed" if result.status == "failed" else "done", result.message, result)
            results.append(result)
    return RefreshReport(started_at=started, finished_at=clock(), results=results)


class _Job:
    """One provider's refresh."""

    def __init__(
        self,
        plan: ProviderPlan,
        state: SnapshotState | None,
        data_dir: Path,
        config: RefreshConfig,
        policy: HttpPolicy,
        unreachable: Unreachable,
        clock: Callable[[], datetime],
    ) -> None:
        self.plan, self.state, self.data_dir = plan, state, data_dir
        self.config, self.policy, self.unreachable, self.clock = config, policy, unreachable, clock
        self.path = snapshot_path(data_dir, plan.key)

    def run(
        self, force: bool, accept: bool, ttl: timedelta, emit: Callable[[Stage, str], None]
    ) -> ProviderResult:
        state, now = self.state, self.clock()
        have = state is not None and state.fetched_at is not None and self.path.is_file()
        checked = state.checked_at if state is not None else None
        if have and not force and checked is not None and now - checked < ttl:
            return self._result(
                "fresh", f"fresh: checked {_ago(now - checked)} ago, TTL {_hours(ttl)}"
            )
        try:
            emit("checking", "")
            fetched = self._fetch(state if have else None, force, now, emit)
            if isinstance(fetched, NotModified):
                assert state is not None
                update = {"checked_at": now, "last_error": None, "last_error_at": None}
                self.state = state.model_copy(update=update)
                return self._result(
                    "unchanged", f"unchanged (version {fetched.version}); no download"
                )
            got, parsed = fetched
            check_copy(parsed, state if have else None, self.config.max_drop, accept)
        except (FetchError, SnapshotError, CatalogFileError) as exc:
            return self._failed(str(exc), now, have)
        write_catalog_csv(parsed.catalog, self.path)
        self.state = _new_state(self.plan, got, parsed, now)
        return self._result("updated", _updated_text(parsed, got.version))

    def _fetch(
        self,
        state: SnapshotState | None,
        force: bool,
        now: datetime,
        emit: Callable[[Stage, str], None],
    ) -> NotModified | tuple[Download, Parsed]:
        """The new copy, downloaded and parsed, or NotModified."""
        if self.plan.live:
            wait = self.config.timeout_s * self.config.attempts
            items = gpuhunt_live.query(self.plan, wait)
            emit("parsing", f"{len(items):,} live offers")
            label = f"gpuhunt live query of {self.plan.remote}"
            return Download(f"live-{now:%Y%m%dT%H%M}", label, b""), gpuhunt_live.parse(
                self.plan, items, now
            )
        module = _SOURCES[self.plan.source]
        got = module.download(self.plan, state, self.config, self.policy, self.unreachable, force)
        if isinstance(got, NotModified):
            return got
        emit("parsing", f"{len(got.body):,} bytes")
        return got, module.parse(self.plan, got, now)

    def _failed(self, reason: str, now: datetime, have: bool) -> ProviderResult:
        base = self.state or SnapshotState(source=self.plan.source, provider=self.plan.provider)
        self.state = base.model_copy(update={"last_error": reason, "last_error_at": now})
        if have and base.fetched_at is not None:
            kept = (
                f"; kept the last good copy ({base.instances} instance types, fetched"
                f" {base.fetched_at:%Y-%m-%d %H:%M} UTC)"
            )
        else:
            kept = "; no earlier copy: the curated prices stay in use"
        result = self._result("failed", f"failed: {reason}{kept}")
        return result.model_copy(update={"kept_last_good": have, "error": reason})

    def _result(self, status: str, message: str) -> ProviderResult:
        state = self.state
        return ProviderResult.model_validate({
            "source": self.plan.source, "provider": self.plan.provider, "status": status,
            "message": message,
            **({} if state is None else {
                "url": state.url, "version": state.version, "fetched_at": state.fetched_at,
                "rows_read": state.rows_read, "instances": state.instances,
                "skipped": state.skipped, "unknown_gpus": state.unknown_gpus,
            }),
        })  # fmt: skip


def _new_state(plan: ProviderPlan, got: Download, parsed: Parsed, now: datetime) -> SnapshotState:
    return SnapshotState(
        source=plan.source,
        provider=plan.provider,
        url=got.url,
        version=got.version,
        etag=got.etag,
        last_modified=got.last_modified,
        header=parsed.header,
        rows_read=parsed.rows_read,
        instances=len(parsed.catalog),
        skipped=parsed.skipped,
        unknown_gpus=parsed.unknown_gpus,
        fetched_at=now,
        checked_at=now,
    )


def _updated_text(parsed: Parsed, version: str) -> str:
    skipped = sum(parsed.skipped.values())
    unknown = sum(parsed.unknown_gpus.values())
    text = (
        f"updated: {len(parsed.catalog):,} instance types from {parsed.rows_read:,} rows"
        f" (version {version}); {skipped:,} rows skipped"
    )
    if unknown:
        names = ", ".join(f"{n} ({c})" for n, c in sorted(parsed.unknown_gpus.items())[:6])
        text += f", {unknown:,} of them with a GPU we have no datasheet for: {names}"
    return text


def _ago(delta: timedelta) -> str:
    minutes = delta.total_seconds() / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def _hours(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 3600:g} h"


def load_refreshed(data_dir: Path) -> list[Catalog]:
    """Every snapshot on disk, oldest download first; an unreadable snapshot is left out."""
    catalogs: list[tuple[datetime, Catalog]] = []
    for path in snapshot_paths(data_dir):
        try:
            catalog = read_catalog_file(path)
        except CatalogFileError:
            continue
        stamps = [i.fetched_at for i in catalog if i.fetched_at is not None]
        catalogs.append((min(stamps, default=datetime.min.replace(tzinfo=UTC)), catalog))
    return [catalog for _, catalog in sorted(catalogs, key=lambda pair: pair[0])]


def refresh_older_than(
    data_dir: Path,
    config: RefreshConfig | None,
    hours: float,
    *,
    on_progress: ProgressFn | None = None,
    now: Callable[[], datetime] | None = None,
) -> RefreshReport:
    """The app's background refresh: every default provider whose copy was last checked more
    than `hours` ago (Settings.catalog_refresh_hours), the others left untouched and unasked."""
    if hours <= 0:
        raise InvalidInputError("hours", hours, "a number of hours > 0")
    return refresh_catalogs(
        data_dir, config, max_age=timedelta(hours=hours), on_progress=on_progress, now=now
    )


def due_for_refresh(
    data_dir: Path, max_age: timedelta, now: datetime, plans: Sequence[ProviderPlan]
) -> list[ProviderPlan]:
    """The plans whose copy was last checked more than `max_age` ago (or never)."""
    states = read_states(data_dir)
    due = []
    for plan in plans:
        state = states.get(plan.key)
        if state is None or state.checked_at is None or now - state.checked_at >= max_age:
            due.append(plan)
    return due
