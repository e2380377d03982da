"""A real Chroma server for tests, and free loopback ports.

`chroma_server(path)` starts the `chroma run` CLI installed beside the test interpreter on a free
port of 127.0.0.1 with its data in `path`, waits for its heartbeat (20 s at most), yields the port
and stops the server by its PID afterwards (SIGTERM, then SIGKILL after 10 s). It skips the test
when the CLI is not installed. The knowledge-index tests and the fault tests share it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

_START_TIMEOUT_S = 20.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (at the moment of the call)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_heartbeat(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"chroma server on port {port} did not come up")
            time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def chroma_server(path: str | Path) -> Iterator[int]:
    """A real `chroma run` on a free loopback port with its data in `path`; yields the port."""
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip(f"the chroma CLI is not installed next to {sys.executable}")
    port = free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "ORT_DISABLE_TELEMETRY": "1"}
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for_heartbeat(port, proc)
        yield port
    finally:
        _stop(proc)
