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


def test_a_body_that_trickles_is_cut_off_as_too_slow() -> None:
    """Each read arrives well within the read timeout, but a byte at a time: the transfer is cut
    once its average rate stays under the floor past `stall_after_s`, not after minutes."""
    import socket
    import threading
    import time

    from tools.catalog.refresh.http import FetchError, HttpPolicy, fetch

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        while not stop.is_set():
            try:
                conn.sendall(b"x")
            except OSError:
                break
            time.sleep(0.05)
        conn.close()

    threading.Thread(target=drip, daemon=True).start()
    policy = HttpPolicy(timeout_s=5.0, attempts=1, min_rate=1024, stall_after_s=1.0)
    started = time.monotonic()
    try:
        with pytest.raises(FetchError, match=r"^too slow: \d+ bytes in \d+ s \(under 1 KiB/s\)$"):
            fetch(f"http://127.0.0.1:{port}/catalog.zip", policy)
    finally:
        stop.set()
        listener.close()
    assert time.monotonic() - started < 4.5, (
        "cut off soon after stall_after_s (a trickle runs 83 min)"
    )
