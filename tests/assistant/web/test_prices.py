"""The app's price refresh without Gradio: progress lines per provider, one refresh at a time,
the catalog reloaded after a change, the outcome table and the endpoint's JSON.

Downloads come from the local server of tests/fakes/catalog_server.py (127.0.0.1); the lock tests
use a refresh function that waits on an event, so they control when it ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from assistant.web.prices import (
    PriceRefresher,
    RefreshRunning,
    outcome_table,
    price_age_markdown,
    progress_markdown,
    report_json,
    report_markdown,
    result_line,
)
from tests.fakes.app import free_port
from tests.fakes.catalog_server import CatalogServer, Reply, serve
from tests.fakes.catalogs import make_instance
from tests.fakes.price_sources import gpu, publish
from tools.catalog.refresh import (
    ProviderResult,
    RefreshConfig,
    RefreshEvent,
    RefreshReport,
    refresh_catalogs,
)
from tools.catalog.refresh.state import refresh_lock
from tools.catalog.store import load_catalog
from tools.errors import InvalidInputError

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
AWS = [
    gpu("p5.48xlarge", "us-east-1", 55.04, 8, "H100", 80),
    gpu("g6.xlarge", "us-east-1", 0.8048, 1, "L4", 24),
]


@pytest.fixture
def server() -> Iterator[CatalogServer]:
    with serve() as running:
        yield running


def _config(url: str) -> RefreshConfig:
    return RefreshConfig(
        gpuhunt_url=f"{url}/v3", skypilot_url=f"{url}/sky", skypilot_mirror_url="",
        backoff_s=0.0, timeout_s=5.0,
    )  # fmt: skip


class Reloads:
    """Counts the catalog reloads a refresher asks for."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def _events(stream: Iterator[RefreshEvent | RefreshReport]) -> tuple[list[RefreshEvent], Any]:
    events: list[RefreshEvent] = []
    for item in stream:
        if isinstance(item, RefreshReport):
            return events, item
        events.append(item)
    raise AssertionError("the stream ended without its report")


def test_progress_lines_follow_each_provider_then_the_report(
    tmp_path: Path, server: CatalogServer
) -> None:
    publish(server, "aws", "v1", AWS)
    server.set("/v3/gcp/version", Reply(b"boom", status=500))
    reloads = Reloads()
    refresher = PriceRefresher(tmp_path, _config(server.url), reloads)
    events, report = _events(refresher.stream(["aws", "gcp"], "gpuhunt"))
    first = progress_markdown(events[:1], "en")
    assert first.splitlines() == [
        "Refreshing prices: 0 of 2 providers done",
        "",
        "- ⏳ **aws** (gpuhunt): looking for new prices…",
    ]
    done_aws = next(i for i, e in enumerate(events) if e.provider == "aws" and e.result)
    middle = progress_markdown(events[: done_aws + 1], "de").splitlines()
    assert middle[0] == "Preise werden aktualisiert: 1 von 2 Anbietern fertig"
    assert middle[2] == "- ✓ **aws** (gpuhunt): neue Preise, 2 Instanztypen"
    last = progress_markdown(events, "en").splitlines()
    assert last[0] == "Refreshing prices: 2 of 2 providers done" and len(last) == 4
    assert last[3].startswith("- ✗ **gcp** (gpuhunt): not refreshed (HTTP 500")
    assert last[3].endswith("; the built-in prices stay in use"), "no earlier copy of gcp"
    assert [r.status for r in report.results] == ["updated", "failed"]
    assert reloads.count == 1, "prices changed: the catalog is loaded again, once"
    catalog = load_catalog(tmp_path)
    assert catalog.get("aws/p5.48xlarge").origin == "gpuhunt"


def test_a_failed_provider_keeps_its_last_good_copy_and_says_so(
    tmp_path: Path, server: CatalogServer
) -> None:
    publish(server, "aws", "v1", AWS)
    config = _config(server.url)
    refresh_catalogs(tmp_path, config, providers=["aws"], now=lambda: NOW)
    server.set("/v3/aws/version", Reply(b"v2\n"))
    server.set("/v3/aws/v2/catalog.zip", Reply(b"not a zip"))
    reloads = Reloads()
    report = PriceRefresher(tmp_path, config.model_copy(update={"ttl_hours": {}}), reloads).run(
        ["aws"]
    )
    (aws,) = report.results
    assert (aws.status, aws.kept_last_good, aws.instances) == ("failed", True, 2)
    line = result_line(aws, "fr")
    assert line.startswith("✗ **aws** (gpuhunt) : non actualisé (")
    assert line.endswith("; sa dernière bonne copie reste utilisée")
    assert reloads.count == 0, "nothing changed: no reload"
    assert load_catalog(tmp_path).get("aws/p5.48xlarge").fetched_at == NOW, "the old copy"


def test_offline_every_provider_fails_fast_in_one_line_each(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens: connection refused
    reloads = Reloads()
    refresher = PriceRefresher(tmp_path, _config(closed), reloads)
    before = load_catalog(tmp_path)
    started = time.monotonic()
    _, report = _events(refresher.stream())  # every default provider of both sources
    took = time.monotonic() - started
    assert len(report.results) >= 10 and report.failed == report.results
    assert took < 10, f"offline refresh took {took:.1f} s"
    lines = report_markdown(report, len(before), "en").splitlines()
    assert lines[0].startswith(f"**Prices refreshed**: 0 of {len(report.results)} providers")
    assert len(lines) == 2 + len(report.results), "the summary, then one line per provider"
    assert all(line.startswith("- ✗ ") for line in lines[2:])
    assert reloads.count == 0 and [i.id for i in load_catalog(tmp_path)] == [i.id for i in before]
    assert not refresher.running, "the lock is released after the refresh"


class Gate:
    """A refresh that waits until the test opens the gate."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()
        self.calls = 0

    def __call__(self, data_dir: Path, config: Any, **kwargs: Any) -> RefreshReport:
        self.calls += 1
        self.entered.set()
        assert self.open.wait(10), "the test never opened the gate"
        return RefreshReport(started_at=NOW, finished_at=NOW, results=[])


def test_a_second_refresh_while_one_runs_is_refused_at_once(tmp_path: Path) -> None:
    gate = Gate()
    refresher = PriceRefresher(tmp_path, None, Reloads(), refresh=gate)
    stream = refresher.stream()
    assert gate.entered.wait(5) and refresher.running
    started = time.monotonic()
    with pytest.raises(RefreshRunning, match="already running"):
        refresher.run()
    with pytest.raises(RefreshRunning):
        refresher.stream()
    assert time.monotonic() - started < 1, "refused at once, not queued"
    gate.open.set()
    assert _events(stream)[1].results == [] and gate.calls == 1
    refresher.run()  # free again
    assert gate.calls == 2 and not refresher.running


def test_a_refresh_held_elsewhere_counts_as_running(tmp_path: Path) -> None:
    """The background thread or a CLI run on the same data folder holds the engine's lock."""
    refresher = PriceRefresher(tmp_path, _config(f"http://127.0.0.1:{free_port()}"), Reloads())
    with refresh_lock(tmp_path), pytest.raises(RefreshRunning):
        refresher.run(["aws"])
    assert not refresher.running


def test_bad_input_is_refused_before_anything_starts(tmp_path: Path) -> None:
    gate = Gate()
    refresher = PriceRefresher(tmp_path, None, Reloads(), refresh=gate)
    with pytest.raises(
        InvalidInputError, match=r"^provider: got 'nosuchcloud'; valid: one of .*aws"
    ):
        refresher.run(["nosuchcloud"])
    with pytest.raises(
        InvalidInputError, match=r"^source: got 'web'; valid: one of gpuhunt, skypilot, all"
    ):
        refresher.stream(None, "web")
    assert gate.calls == 0 and not refresher.running


def _report() -> RefreshReport:
    fetched = NOW - timedelta(hours=3)
    results = [
        ProviderResult(source="gpuhunt", provider="aws", status="updated", message="updated",
                       fetched_at=fetched, instances=812, rows_read=5000, version="v1",
                       url="http://127.0.0.1/v3/aws/v1/catalog.zip"),
        ProviderResult(source="skypilot", provider="vast", status="failed",
                       message="failed: HTTP 500; no earlier copy", error="HTTP 500 after 3 tries"),
    ]  # fmt: skip
    return RefreshReport(started_at=NOW, finished_at=NOW, results=results)


def test_outcome_table_one_row_per_provider() -> None:
    table = outcome_table(_report(), NOW, "en")
    assert table.headers == [
        "Provider", "Price from", "Outcome", "Instance types", "Downloaded", "Price age", "Reason",
    ]  # fmt: skip
    assert table.display == [
        ["aws", "gpuhunt", "new prices", "812", "Nov 30, 2026 09:00 UTC", "3 hr", ""],
        ["vast", "skypilot", "failed", "0", "–", "–", "HTTP 500 after 3 tries"],
    ]
    assert table.rows[0][3] == 812 and table.rows[0][5] == pytest.approx(3.0, abs=1e-6)
    assert table.rows[1][5] is None, "never downloaded: no age to sort by"
    de = outcome_table(_report(), NOW, "de")
    assert de.display[0][2:5] == ["neue Preise", "812", "30.11.2026 09:00 UTC"]


def test_report_json_per_provider_outcome() -> None:
    got = json.loads(report_json(_report(), 900))
    assert (got["ok"], got["failed"], got["catalog_instance_types"]) == (False, 1, 900)
    aws, vast = got["providers"]
    assert aws | {"message": None} == {
        "provider": "aws", "source": "gpuhunt", "status": "updated", "instance_types": 812,
        "rows_read": 5000, "as_of": "2026-11-30T09:00:00+00:00", "url":
        "http://127.0.0.1/v3/aws/v1/catalog.zip", "version": "v1", "error": None,
        "kept_last_good": False, "unknown_gpus": {}, "message": None,
    }  # fmt: skip
    assert (vast["status"], vast["error"], vast["as_of"]) == (
        "failed",
        "HTTP 500 after 3 tries",
        None,
    )


def test_the_header_line_gives_the_newest_and_median_age_and_the_stale_count() -> None:
    """Issue 26, defect 7: how old the prices are, from the first screen."""
    now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    rows = [
        make_instance(instance_type=f"t{days}", as_of=(now - timedelta(days=days)).date())
        for days in (10, 100, 200, 300)
    ]
    fresh = make_instance(
        instance_type="fresh", as_of=now.date(), fetched_at=now - timedelta(hours=3),
        origin="gpuhunt",
    )  # fmt: skip
    assert price_age_markdown(rows, now, 120, "en") == (
        "Price age: newest 10 days, median 200 days · ⚠ 2 of 4 older than 120 days"
    )
    assert price_age_markdown([fresh, *rows], now, 120, "de") == (
        "Alter der Preise: neuester 3 Std., Median 100 Tg. · ⚠ 2 von 5 älter als 120 Tage"
    )
    assert price_age_markdown(rows[:2], now, 120, "fr") == (
        "Âge des prix : le plus récent 10\u202fj, médian 100\u202fj"
    ), "no stale part when none is stale"
    assert price_age_markdown([], now, 120, "en") == ""
