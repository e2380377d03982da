"""Catalog refresh against a local HTTP server: gpuhunt's layout, SkyPilot's routes, failures.

Every response is synthetic, served from 127.0.0.1 by tests/fakes/catalog_server.py; the gpuhunt
CSVs are written with gpuhunt's own `storage.item_to_row` (tests/fakes/price_sources.py), so
their format is gpuhunt's. After
each refresh the tests check rows per provider, as_of/fetched_at, sources, and that a failure
changed nothing on disk.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gpuhunt import CatalogItem

from tests.fakes.catalog_server import CatalogServer, Reply, serve
from tests.fakes.price_sources import catalog_zip, gpu, gpuhunt_csv, publish
from tools.catalog.refresh import RefreshConfig, RefreshReport, plan_refresh, refresh_catalogs
from tools.catalog.refresh.state import read_states, snapshot_path
from tools.catalog.store import load_catalog
from tools.errors import InvalidInputError

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SKY_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
)
VAST = (
    SKY_HEADER
    + "1x-H100_SXM-32-65536,H100,1,32,64,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81559}}]}\","
    '1.75,0.00,"Texas, US"\n'
    + '2x-RTX_4090-32-65536,RTX4090,2,32,64,,0.62,0.00,"Quebec, CA"\n'
    + '1x-RTX_2080-8-16384,RTX2080,1,8,16,,0.10,0.00,"Ohio, US"\n'
)


AWS_ITEMS = [
    gpu("p5.48xlarge", "us-east-1", 55.04, 8, "H100", 80),
    gpu("p5.48xlarge", "us-east-1", 9.37, 8, "H100", 80, spot=True),
    gpu("p5.48xlarge", "us-west-2", 55.04, 8, "H100", 80),
    gpu("p5.48xlarge", "eu-north-1", 58.89, 8, "H100", 80),
    gpu("g6.xlarge", "us-east-1", 0.8048, 1, "L4", 24),
    gpu("p6-b300.48xlarge", "us-west-2", 142.416, 8, "B300", 268),
    gpu("trn1.2xlarge", "us-east-1", 1.34, 1, "Trainium", 32),
    gpu("c5.large", "us-east-1", 0.085, 0, None, None),
    gpu("c5.xlarge", "us-east-1", 0.17, 0, None, None),
]
GCP_ITEMS = [
    gpu("a3-highgpu-8g", "us-central1-a", 88.25, 8, "H100", 80),
    gpu("n1-standard-8", "us-central1-a", 0.73, 1, "T4", 16),
    gpu("n1-standard-8", "us-central1-a", 2.86, 1, "V100", 16),
    gpu("v5litepod-8", "us-central1-a", 9.6, 8, "v5litepod", 16, vendor="google"),
]


@pytest.fixture
def server() -> Iterator[CatalogServer]:
    with serve() as running:
        yield running


def config(server: CatalogServer, **extra: object) -> RefreshConfig:
    return RefreshConfig.model_validate({
        "gpuhunt_url": f"{server.url}/v3", "skypilot_url": f"{server.url}/sky",
        "skypilot_mirror_url": f"{server.url}/mirror", "backoff_s": 0.0, "timeout_s": 5.0,
        **extra,
    })  # fmt: skip


def refresh(data: Path, server: CatalogServer, providers: list[str], at: datetime = NOW,
            **kwargs: object) -> RefreshReport:  # fmt: skip
    return refresh_catalogs(data, config(server), providers=providers, now=lambda: at, **kwargs)  # type: ignore[arg-type]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def per_provider(data: Path, origin: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in load_catalog(data):
        if item.origin == origin:
            counts[item.provider] = counts.get(item.provider, 0) + 1
    return counts


def test_gpuhunt_layout_rows_sources_and_times(tmp_path: Path, server: CatalogServer) -> None:
    publish(server, "aws", "20261130-1100", AWS_ITEMS)
    publish(server, "gcp", "20261130-1105", GCP_ITEMS)
    report = refresh(tmp_path, server, ["aws", "gcp"])
    assert [(r.provider, r.status) for r in report.results] == [
        ("aws", "updated"),
        ("gcp", "updated"),
    ]
    aws, gcp = report.results
    assert (aws.rows_read, aws.instances) == (9, 4), "p5 (2 price tiers), g6, p6-b300"
    assert aws.skipped == {"no GPU": 2, "unknown accelerator 'Trainium'": 1}
    assert aws.unknown_gpus == {"Trainium": 1}
    assert gcp.skipped == {"TPU (not a GPU)": 1}
    assert per_provider(tmp_path, "gpuhunt") == {"aws": 4, "gcp": 3}
    catalog = load_catalog(tmp_path)
    p5 = catalog.get("aws/p5.48xlarge")
    assert (p5.price_per_hour, p5.spot_price_per_hour, p5.regions) == (
        55.04,
        9.37,
        ["us-east-1", "us-west-2"],
    )
    assert (p5.origin, p5.fetched_at, p5.as_of) == ("gpuhunt", NOW, NOW.date())
    assert (
        p5.source
        == f"gpuhunt aws catalog 20261130-1100 ({server.url}/v3/aws/20261130-1100/catalog.zip)"
    )
    assert catalog.get("aws/p5.48xlarge@eu-north-1").price_per_hour == 58.89
    assert catalog.get("aws/p6-b300.48xlarge").gpu == "B300"
    t4 = catalog.get("gcp/n1-standard-8+1xT4")
    assert (t4.gpu, t4.price_per_hour) == ("T4", 0.73), "whole-instance GCP price, GPU included"
    assert catalog.get("gcp/n1-standard-8+1xV100").gpu == "V100-16GB-SXM"
    states = read_states(tmp_path)
    assert (
        states["gpuhunt-aws"].version == "20261130-1100" and states["gpuhunt-aws"].fetched_at == NOW
    )


def test_curated_rows_stay_for_uncovered_providers_and_regions(
    tmp_path: Path, server: CatalogServer
) -> None:
    before = load_catalog(tmp_path)
    publish(server, "aws", "v1", AWS_ITEMS)
    refresh(tmp_path, server, ["aws"])
    after = load_catalog(tmp_path)
    curated_aws = [i for i in before if i.provider == "aws"]
    assert all(i.origin == "curated" for i in curated_aws) and len(curated_aws) > 4
    kept_aws = [i.id for i in after if i.provider == "aws" and i.origin == "curated"]
    for item_id in kept_aws:  # curated rows left: GPU shapes the fresh copy does not sell
        item = after.get(item_id)
        assert (item.gpu, item.gpu_count) not in {("H100-SXM", 8), ("L4", 1), ("B300", 8)}
    for provider in ("azure", "lambda", "tensordock", "vast"):
        mine = [i for i in after if i.provider == provider]
        assert mine == [i for i in before if i.provider == provider], f"{provider} untouched"


def test_ttl_version_bump_redownloads_only_that_provider(
    tmp_path: Path, server: CatalogServer
) -> None:
    publish(server, "aws", "v1", AWS_ITEMS)
    publish(server, "gcp", "g1", GCP_ITEMS)
    refresh(tmp_path, server, ["aws", "gcp"])
    server.requests.clear()
    again = refresh(tmp_path, server, ["aws", "gcp"], at=NOW + timedelta(minutes=30))
    assert [r.status for r in again.results] == ["fresh", "fresh"] and server.requests == []
    publish(server, "aws", "v2", AWS_ITEMS[:5])
    later = refresh(tmp_path, server, ["aws", "gcp"], at=NOW + timedelta(hours=2))
    assert [r.status for r in later.results] == ["updated", "unchanged"]
    assert server.requests == ["/v3/aws/version", "/v3/aws/v2/catalog.zip", "/v3/gcp/version"]
    states = read_states(tmp_path)
    assert (states["gpuhunt-aws"].version, states["gpuhunt-gcp"].version) == ("v2", "g1")
    assert states["gpuhunt-gcp"].checked_at == NOW + timedelta(hours=2)
    assert states["gpuhunt-gcp"].fetched_at == NOW, "unchanged: the copy is the same download"


def test_skypilot_429_falls_back_to_the_mirror(tmp_path: Path, server: CatalogServer) -> None:
    server.set("/sky/v8/vast/vms.csv", Reply(b"rate limited", status=429))
    server.set("/mirror/v8/vast/vms.csv", Reply(VAST.encode(), etag='"m1"'))
    report = refresh(tmp_path, server, ["vast"])
    (vast,) = report.results
    assert (vast.status, vast.instances, vast.url) == (
        "updated",
        2,
        f"{server.url}/mirror/v8/vast/vms.csv",
    )
    assert vast.unknown_gpus == {"RTX2080": 1}
    h100 = load_catalog(tmp_path).get("vast/1x-H100_SXM-32-65536")
    assert (h100.price_per_hour, h100.spot_price_per_hour, h100.origin) == (1.75, None, "skypilot")
    assert server.requests == ["/sky/v8/vast/vms.csv", "/mirror/v8/vast/vms.csv"]
    server.requests.clear()
    report = refresh(tmp_path, server, ["vast"], at=NOW + timedelta(hours=8))
    assert report.results[0].status == "unchanged", "ETag answered 304 by the mirror"


def test_a_500_is_retried_then_the_last_good_copy_stays(
    tmp_path: Path, server: CatalogServer
) -> None:
    server.set("/sky/v8/vast/vms.csv", Reply(VAST.encode()))
    publish(server, "aws", "v1", AWS_ITEMS)
    refresh(tmp_path, server, ["vast", "aws"])
    before = snapshot(tmp_path / "prices")
    server.set("/sky/v8/vast/vms.csv", Reply(b"oops", status=500))
    publish(server, "aws", "v2", AWS_ITEMS)
    server.requests.clear()
    report = refresh(tmp_path, server, ["vast", "aws"], at=NOW + timedelta(hours=8))
    vast, aws = report.results
    assert vast.status == "failed" and vast.kept_last_good
    assert vast.message == (
        "failed: HTTP 500 Internal Server Error after 3 attempts; kept the last good copy"
        " (2 instance types, fetched 2026-11-30 12:00 UTC)"
    )
    assert server.hits("/sky/v8/vast/vms.csv") == 3 and aws.status == "updated", "keeps going"
    after = snapshot(tmp_path / "prices")
    assert after["skypilot-vast.csv"] == before["skypilot-vast.csv"], "failure changed nothing"
    assert per_provider(tmp_path, "skypilot") == {"vast": 2}
    assert (
        read_states(tmp_path)["skypilot-vast"].last_error
        == "HTTP 500 Internal Server Error after 3 attempts"
    )


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(VAST[:-30].encode()),
         "truncated CSV: the last line has 2 of 9 cells and no newline"),
        (Reply(VAST.encode()[:100], declared_length=len(VAST)),
         "truncated download (100 of 318 bytes) after 3 attempts"),
        (Reply(VAST.replace("SpotPrice", "Spot").encode()),
         "header changed (added Spot, removed SpotPrice); pass --accept-changes to take it"),
        (Reply("\n".join(VAST.split("\n")[:2]).encode() + b"\n"),
         "1 rows where the last good copy had 3 (more than 50% dropped); pass --accept-changes"
         " to take it"),
    ],
    ids=["truncated-csv", "short-read", "changed-header", "half-the-rows"],
)  # fmt: skip
def test_a_bad_copy_is_refused_and_nothing_changes(
    tmp_path: Path, server: CatalogServer, reply: Reply, reason: str
) -> None:
    server.set("/sky/v8/vast/vms.csv", Reply(VAST.encode()))
    refresh(tmp_path, server, ["vast"])
    before = snapshot(tmp_path / "prices")
    server.set("/sky/v8/vast/vms.csv", reply)
    report = refresh(tmp_path, server, ["vast"], force=True)
    assert report.results[0].message.startswith(f"failed: {reason}; kept the last good copy")
    assert snapshot(tmp_path / "prices")["skypilot-vast.csv"] == before["skypilot-vast.csv"]
    assert per_provider(tmp_path, "skypilot") == {"vast": 2}


def test_accept_changes_takes_a_changed_header(tmp_path: Path, server: CatalogServer) -> None:
    server.set("/sky/v8/vast/vms.csv", Reply(VAST.encode()))
    refresh(tmp_path, server, ["vast"])
    server.set("/sky/v8/vast/vms.csv", Reply(VAST.replace("MemoryGiB", "MemGiB").encode()))
    report = refresh(tmp_path, server, ["vast"], force=True, accept_changes=True)
    assert report.results[0].status == "updated"


def test_a_truncated_gpuhunt_zip_keeps_the_last_copy(tmp_path: Path, server: CatalogServer) -> None:
    publish(server, "aws", "v1", AWS_ITEMS)
    refresh(tmp_path, server, ["aws"])
    server.set("/v3/aws/version", Reply(b"v2"))
    server.set("/v3/aws/v2/catalog.zip", Reply(catalog_zip("aws", gpuhunt_csv(AWS_ITEMS))[:-40]))
    report = refresh(tmp_path, server, ["aws"], force=True)
    assert report.results[0].message.startswith("failed: truncated or corrupt catalog.zip")
    assert read_states(tmp_path)["gpuhunt-aws"].version == "v1"


def test_gcp_accelerator_rows_and_the_700_placeholder(
    tmp_path: Path, server: CatalogServer
) -> None:
    gcp = (
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        "a2-highgpu-1g,12,85,,,,us-central1,us-central1-a,0.9,0.3\n"
        ",,,A100,1,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]}\","
        "us-central1,us-central1-a,1.5,0.5\n"
        ",,,tpu-v6e-8,1,tpu-v6e-8,us-central1,us-central1-a,700.0,700.0\n"
        ",,,A100,1,,europe-west4,europe-west4-a,700.0,1.0\n"
    )  # fmt: skip
    server.set("/sky/v8/gcp/vms.csv", Reply(gcp.encode()))
    report = refresh(tmp_path, server, ["gcp"], source="skypilot")
    (result,) = report.results
    assert result.skipped == {"TPU (not a GPU)": 1, "placeholder price 700.0": 1}
    a2 = load_catalog(tmp_path).get("gcp/a2-highgpu-1g")
    assert (a2.price_per_hour, a2.spot_price_per_hour, a2.regions) == (2.4, 0.8, ["us-central1"])


def test_a_users_import_is_never_overwritten(tmp_path: Path, server: CatalogServer) -> None:
    mine = tmp_path / "catalogs" / "yaml-mine.csv"
    mine.parent.mkdir(parents=True)
    mine.write_text(
        "provider,instance_type,gpu,gpu_count,price_per_hour,interconnect,source,as_of,"
        "billing_granularity,min_charge_seconds,persistent_volumes,spot_available\n"
        "aws,p5.48xlarge,H100,8,40.0,nvswitch,my contract,2026-10-01,hour,0,true,false\n"
    )
    original = mine.read_bytes()
    publish(server, "aws", "v1", AWS_ITEMS)
    refresh(tmp_path, server, ["aws"])
    assert mine.read_bytes() == original, "the refresh writes under prices/, never catalogs/"
    p5 = load_catalog(tmp_path).get("aws/p5.48xlarge")
    assert (p5.price_per_hour, p5.origin) == (40.0, "import"), "the user's own row wins"


def test_offline_fails_fast_with_one_line_per_provider(tmp_path: Path) -> None:
    dead = RefreshConfig(gpuhunt_url="http://127.0.0.1:9/v3", skypilot_url="http://127.0.0.1:9/s",
                         skypilot_mirror_url="", backoff_s=5.0)  # fmt: skip
    start = time.monotonic()
    report = refresh_catalogs(tmp_path, dead, providers=["aws", "lambda", "vast"], now=lambda: NOW)
    assert time.monotonic() - start < 3.0, "no retries against an unreachable host"
    assert [r.message for r in report.results] == [
        "failed: cannot connect to 127.0.0.1:9 (Connection refused); no earlier copy: the curated"
        " prices stay in use"
    ] * 3
    assert load_catalog(tmp_path) == load_catalog(None), "everything keeps working"


def test_plans_and_unknown_providers() -> None:
    default = plan_refresh()
    assert [p.key for p in default if p.source == "gpuhunt"] == [
        "gpuhunt-aws", "gpuhunt-azure", "gpuhunt-verda", "gpuhunt-gcp", "gpuhunt-lambda",
        "gpuhunt-nebius", "gpuhunt-oci", "gpuhunt-runpod", "gpuhunt-cloudrift",
    ]  # fmt: skip
    assert "skypilot-vast" in {p.key for p in default} and "skypilot-aws" not in {
        p.key for p in default
    }
    assert plan_refresh(["lambda"])[0].remote == "lambdalabs"
    assert plan_refresh(["aws"], source="skypilot")[0].key == "skypilot-aws"
    assert plan_refresh(["digitalocean"])[0].live, "a named online provider: a live query"
    assert not plan_refresh(["vast"])[0].live, "SkyPilot's hosted Vast.ai catalog comes first"
    assert plan_refresh(["vast"], source="gpuhunt")[0].remote == "vastai"
    with pytest.raises(InvalidInputError, match=r"provider: got 'nope'; valid: one of aws, azure"):
        plan_refresh(["nope"])


def test_settings_feed_the_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    from assistant.settings import SKYPILOT_CATALOG_URL, Settings
    from tools.catalog.refresh.models import SKYPILOT_CATALOG_URL as DEFAULT_URL

    assert SKYPILOT_CATALOG_URL == DEFAULT_URL
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", "http://127.0.0.1:1/v3")
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_REFRESH_HOURS", "6")
    settings = Settings()
    assert settings.refresh_config().gpuhunt_url == "http://127.0.0.1:1/v3"
    assert settings.catalog_refresh_hours == 6.0
    assert (
        settings.refresh_config().mirror()
        == "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs"
    )
    assert snapshot_path(Path("/d"), "gpuhunt-aws") == Path("/d/prices/gpuhunt-aws.csv")


def test_background_refresh_touches_only_what_is_older(
    tmp_path: Path, server: CatalogServer
) -> None:
    from tools.catalog.refresh import due_for_refresh, refresh_older_than

    publish(server, "aws", "v1", AWS_ITEMS)
    publish(server, "gcp", "g1", GCP_ITEMS)
    refresh(tmp_path, server, ["aws"], at=NOW - timedelta(hours=10))
    refresh(tmp_path, server, ["gcp"], at=NOW - timedelta(hours=2))
    plans = plan_refresh(["aws", "gcp"])
    due = due_for_refresh(tmp_path, timedelta(hours=6), NOW, plans)
    assert [p.key for p in due] == ["gpuhunt-aws"]
    server.requests.clear()
    events: list[str] = []
    report = refresh_catalogs(
        tmp_path, config(server), providers=["aws", "gcp"], max_age=timedelta(hours=6),
        now=lambda: NOW, on_progress=lambda e: events.append(f"{e.provider}:{e.stage}"),
    )  # fmt: skip
    assert [r.status for r in report.results] == ["unchanged", "fresh"]
    assert server.requests == ["/v3/aws/version"], "the fresh one is not even asked"
    assert events == [
        "aws:start", "aws:checking", "aws:done", "gcp:start", "gcp:done",
    ]  # fmt: skip
    with pytest.raises(InvalidInputError, match="hours: got 0; valid: a number of hours > 0"):
        refresh_older_than(tmp_path, config(server), 0)


class FakeMarketplace:
    """A gpuhunt online provider answering from memory (or slowly)."""

    NAME = "vastai"

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.calls = 0

    def get(self, query_filter: object = None, balance_resources: bool = True) -> list[CatalogItem]:
        self.calls += 1
        time.sleep(self.delay_s)
        offers = [
            gpu("1x-RTX_4090", "Texas, US", 0.35, 1, "RTX4090", 24),
            gpu("8x-H100_SXM", "Ohio, US", 14.94, 8, "H100", 80),
            gpu("8x-H100_SXM", "Ohio, US", 9.0, 8, "H100", 80, spot=True),
        ]
        return [dataclasses.replace(offer, provider="vastai") for offer in offers]


def test_a_named_online_provider_is_queried_live(
    tmp_path: Path, server: CatalogServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.catalog.refresh import gpuhunt_live

    fake = FakeMarketplace()
    monkeypatch.setattr(gpuhunt_live, "make_provider", lambda remote: fake)
    assert refresh(tmp_path, server, ["aws"]).results[0].status == "failed", "nothing published"
    report = refresh(tmp_path, server, ["vast"], source="gpuhunt")
    (result,) = report.results
    assert (result.status, result.instances, fake.calls) == ("updated", 2, 1)
    h100 = load_catalog(tmp_path).get("vast/8x-H100_SXM")
    assert (h100.price_per_hour, h100.spot_price_per_hour, h100.origin) == (14.94, 9.0, "gpuhunt")
    assert h100.source == "gpuhunt live query of vastai (2026-11-30 12:00 UTC)"
    assert server.requests == ["/v3/aws/version"], "no HTTP by us for the live provider"


def test_live_queries_need_credentials_and_are_time_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.catalog.refresh import gpuhunt_live

    monkeypatch.delenv("DIGITAL_OCEAN_API_KEY", raising=False)
    report = refresh_catalogs(
        tmp_path, RefreshConfig(), providers=["digitalocean"], now=lambda: NOW
    )
    assert report.results[0].message.startswith("failed: needs credentials: ")
    assert "DIGITAL_OCEAN_API_KEY" in report.results[0].message
    monkeypatch.setattr(gpuhunt_live, "make_provider", lambda remote: FakeMarketplace(5.0))
    start = time.monotonic()
    quick = RefreshConfig(timeout_s=0.2, attempts=1)
    report = refresh_catalogs(
        tmp_path, quick, providers=["vast"], source="gpuhunt", now=lambda: NOW
    )
    assert time.monotonic() - start < 2.0
    assert report.results[0].message.startswith(
        "failed: live query of vastai timed out after 0.2 s"
    )


# ------------------------------------------------------------------ the app's background refresh


def test_background_refresh_reports_an_update_once_and_keeps_running_through_failures(
    tmp_path: Path, server: CatalogServer, caplog: pytest.LogCaptureFixture
) -> None:
    from tools.catalog.refresh.background import BackgroundRefresh

    publish(server, "aws", "v1", AWS_ITEMS)
    updates: list[int] = []

    def run(data: Path, cfg: RefreshConfig | None, hours: float) -> RefreshReport:
        return refresh_catalogs(data, cfg, providers=["aws"], max_age=timedelta(hours=hours))

    job = BackgroundRefresh(tmp_path, config(server), 6.0, lambda: updates.append(1), refresh=run)
    assert job.check_every_s == 3600.0, "a due provider waits at most an hour"
    first = job.run_once()
    assert first is not None and [r.status for r in first.results] == ["updated"]
    assert updates == [1], "the app reloads its catalog after an update"
    second = job.run_once()
    assert second is not None and [r.status for r in second.results] == ["fresh"]
    assert updates == [1], "nothing new: no reload"
    assert per_provider(tmp_path, "gpuhunt") == {"aws": 4}, "the published rows are in the catalog"

    def broken(data: Path, cfg: RefreshConfig | None, hours: float) -> RefreshReport:
        raise OSError("disk full")

    failing = BackgroundRefresh(tmp_path, None, 1.0, lambda: updates.append(2), refresh=broken)
    assert failing.run_once() is None and updates == [1] and failing.runs == 1
    assert "background price refresh failed: OSError" in caplog.text
    with pytest.raises(InvalidInputError, match="catalog_refresh_hours: got 0"):
        BackgroundRefresh(tmp_path, None, 0, lambda: None)


def test_background_refresh_thread_runs_at_start_and_stops(tmp_path: Path) -> None:
    from tools.catalog.refresh.background import BackgroundRefresh

    ran = threading.Event()

    def run(data: Path, cfg: RefreshConfig | None, hours: float) -> RefreshReport:
        ran.set()
        return RefreshReport(started_at=NOW, finished_at=NOW, results=[])

    job = BackgroundRefresh(tmp_path, None, 2.0, lambda: None, refresh=run, check_every_s=60.0)
    job.start()
    assert ran.wait(5.0), "the first check runs at start"
    job.stop(timeout_s=5.0)
    assert job._thread is not None and not job._thread.is_alive()
