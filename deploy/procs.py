"""Child processes of a served set: started in a process group of their own, with their output in
a log file, watched, and stopped so that none outlives the set.

Each child gets its own session (process group): a Ctrl-C in the terminal reaches only the
launcher, which then stops the children in order. On Linux a child is also told to end when the
launcher dies (PR_SET_PDEATHSIG), so even a killed launcher leaves no workers behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Child", "StartError", "descendants", "free_ports", "port_free", "process_cpu_s", "spawn",
    "stop", "wait_http",
]  # fmt: skip

PR_SET_PDEATHSIG = 1
POLL_S = 0.1


class StartError(RuntimeError):
    """A part of the set did not start; the message says which and why (with its log's end)."""


@dataclass
class Child:
    """One started program: its name in the set, the process and its log file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the child's log, for error messages."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _child_setup(parent: int) -> Callable[[], None]:
    """What runs in the child before it executes: Ctrl-C handled normally (a launcher started in
    the background would otherwise hand down an ignored SIGINT) and SIGTERM when the launcher
    dies."""

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if sys.platform == "linux":
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent:  # the launcher died before the line above
                os._exit(1)

    return setup


def spawn(
    name: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_dir: Path
) -> Child:
    """Start `argv` as child `name`, its output appended to `log_dir/<name>.log`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{name}.log"
    with log.open("ab") as handle:
        proc = subprocess.Popen(  # our own programs, no shell
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_child_setup(os.getpid()),  # the launcher starts no threads
        )
    return Child(name, proc, log)


def _signal_group(child: Child, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, sig)


def stop(child: Child, first: int | None = signal.SIGTERM, grace_s: float = 15.0) -> int | None:
    """Stop `child` and anything left in its process group: signal `first` (None: it was sent
    already), then SIGKILL after `grace_s`. Returns its exit status (None if it was killed)."""
    status = child.proc.poll()
    if status is None:
        if first is not None:
            _signal_group(child, first)
        try:
            status = child.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            status = None
    _signal_group(child, signal.SIGKILL)  # helpers it started in its group
    if child.proc.poll() is None:
        child.proc.wait(timeout=5)
    return status


def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (Linux /proc; empty elsewhere)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        current = pending.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids = [int(k) for k in (task / "children").read_text().split()]
                found.extend(kids)
                pending.extend(kids)
    return found


def port_free(host: str, port: int) -> bool:
    """Whether nothing listens on host:port yet."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy


def _answers(url: str) -> bool:
    try:
        with _DIRECT.open(url, timeout=2) as response:
            return int(response.status) < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (OSError, ValueError):
        return False


def wait_http(url: str, child: Child, timeout_s: float) -> float:
    """Wait until `url` answers (any status under 500); returns the seconds it took. Raises
    StartError when `child` exits first or the time runs out."""
    start = time.monotonic()
    while not _answers(url):
        if not child.alive():
            raise StartError(
                f"{child.name} exited with status {child.proc.returncode} before {url} answered;"
                f" the end of {child.log}:\n{child.log_tail()}"
            )
        if time.monotonic() - start > timeout_s:
            raise StartError(
                f"{child.name} did not answer {url} within {timeout_s:.0f} s; the end of"
                f" {child.log}:\n{child.log_tail()}"
            )
        time.sleep(POLL_S)
    return time.monotonic() - start


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of `pid` so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_ports(count: int) -> int:
    """A first port such that `count` consecutive loopback ports are free (tests, benchmarks)."""
    rng = random.Random()
    while True:
        base = rng.randrange(20000, 60000)
        if all(port_free("127.0.0.1", base + i) for i in range(count)):
            return base
