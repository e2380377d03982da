"""Downloads that hang: a host whose connects time out is tried `attempts` times once per refresh,
then skipped for the other providers on it (no network: urlopen is replaced by a black hole)."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tools.catalog.refresh import RefreshConfig, refresh_catalogs

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_host_that_times_out_connecting_costs_one_files_tries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def black_hole(request: urllib.request.Request, timeout: float) -> Any:
        asked.append(request.full_url)
        raise urllib.error.URLError(TimeoutError("timed out"))

    monkeypatch.setattr(urllib.request, "urlopen", black_hole)
    config = RefreshConfig(
        gpuhunt_url="http://192.0.2.1/v3", skypilot_url="http://192.0.2.2/sky",
        skypilot_mirror_url="", backoff_s=0.0, attempts=3,
    )  # fmt: skip
    report = refresh_catalogs(
        tmp_path, config, providers=["aws", "gcp", "lambda", "vast"], now=lambda: NOW,
        sleep=lambda _s: None,
    )  # fmt: skip
    assert (
        asked
        == ["http://192.0.2.1/v3/aws/version"] * 3 + ["http://192.0.2.2/sky/v8/vast/vms.csv"] * 3
    ), "each host tried three times, once; gcp and lambda never asked"
    assert [r.error for r in report.results] == [
        "timed out connecting to 192.0.2.1 after 3 attempts"
    ] * 3 + ["timed out connecting to 192.0.2.2 after 3 attempts"]


def test_a_read_timeout_does_not_skip_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that is slow to send says nothing about the host's other files."""
    asked: list[str] = []

    def slow(request: urllib.request.Request, timeout: float) -> Any:
        asked.append(request.full_url)
        raise TimeoutError("read timed out")

    monkeypatch.setattr(urllib.request, "urlopen", slow)
    config = RefreshConfig(gpuhunt_url="http://192.0.2.1/v3", backoff_s=0.0, attempts=2)
    refresh_catalogs(tmp_path, config, providers=["aws", "gcp"], now=lambda: NOW,
                     sleep=lambda _s: None)  # fmt: skip
    assert (
        asked == ["http://192.0.2.1/v3/aws/version"] * 2 + ["http://192.0.2.1/v3/gcp/version"] * 2
    )
