"""`make serve`'s launcher, for real: two app workers, nginx and `chroma run` on loopback; one
chat turn through the proxy, one session kept on one worker, and Ctrl-C leaving nothing behind.

The set is started once for the module (about 20-30 s of start-up on the 2-core machine); the
tests then take a few seconds; the last one stops it.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from deploy.nginx import NGINX_HINT, find_nginx
from deploy.probe import GradioSession, chat_text, find_fn_index
from deploy.procs import descendants, free_ports, port_free

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 300.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.reliability,
    pytest.mark.skipif(
        find_nginx() is None, reason=f"nginx not found on PATH or in /usr/sbin ({NGINX_HINT})"
    ),
]


@dataclass
class Served:
    """The running launcher and what the tests need to know about it."""

    proc: subprocess.Popen[str]
    url: str
    data_dir: Path
    worker_ports: list[int]
    output: list[str] = field(default_factory=list)

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "serve" / "logs"

    def access_log(self) -> list[str]:
        return (self.log_dir / "nginx-access.log").read_text(encoding="utf-8").splitlines()


def _read_lines(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _wait_ready(
    proc: subprocess.Popen[str], lines: queue.Queue[str | None], out: list[str]
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line is None:
            pytest.fail("the launcher exited while starting:\n" + "\n".join(out))
        out.append(line)
        if "is ready on" in line:
            return
    proc.kill()
    pytest.fail(f"the set was not ready within {START_TIMEOUT_S:.0f} s:\n" + "\n".join(out))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve")
    data = home / "data"
    base = free_ports(4)  # proxy, two workers, Chroma
    env = {**os.environ, "HOME": str(home), "GPU_ADVISOR_DATA_DIR": str(data),
           "PYTHONUNBUFFERED": "1"}  # fmt: skip
    argv = [sys.executable, "-m", "deploy.serve", "--workers", "2", "--port", str(base),
            "--worker-port", str(base + 1), "--chroma-port", str(base + 3)]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc, lines), daemon=True).start()
    served = Served(proc, f"http://127.0.0.1:{base}/", data, [base + 1, base + 2])
    try:
        _wait_ready(proc, lines, served.output)
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_a_chat_turn_is_answered_through_the_proxy(served: Served) -> None:
    session = GradioSession(served.url)
    try:
        session.open()
        fn = find_fn_index(served.url, "chat")
        chat = session.call(fn, ["LoRA on a 7.3B model", "en", None])[0]
    finally:
        session.close()
    assert session.worker in ("w1", "w2"), "the proxy pinned the page to a worker"
    assert [m["role"] for m in chat[:1]] == ["user"] and chat_text(
        chat[0]
    ) == "LoRA on a 7.3B model"
    assert "~7.3B" in "\n".join(chat_text(m) for m in chat[1:]), "the answer is about this job"


def test_one_session_stays_on_one_worker(served: Served) -> None:
    fn = find_fn_index(served.url, "chat")
    first, second = GradioSession(served.url), GradioSession(served.url)
    try:
        first.open()  # its heartbeat stream stays open: the next page goes to the other worker
        second.open()
        for text in ("QLoRA on a 5.1B model, 50M tokens", "only spot", "sequence length 4096"):
            chat = first.call(fn, [text, "en", None])[0]
            last_user = max(i for i, m in enumerate(chat) if m["role"] == "user")
            # this turn's messages: tool calls, the answer, the passages its caveats cite
            answer = "\n".join(chat_text(m) for m in chat[last_user + 1 :])
            assert "~5.1B" in answer, f"the worker kept the session's job: {text!r} -> {answer}"
    finally:
        first.close()
        second.close()
    assert {first.worker, second.worker} == {"w1", "w2"}, "two open pages use both workers"
    port = served.worker_ports[int(str(first.worker)[1:]) - 1]
    deadline = time.monotonic() + 10  # nginx logs a request once it has ended
    while True:
        lines = [line for line in served.access_log() if first.session_hash in line]
        if len(lines) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    upstreams = set(re.findall(r"upstream=(\S+)", "\n".join(lines)))
    assert len(lines) >= 3, f"the three turns' event streams are logged: {lines}"
    assert upstreams == {f"127.0.0.1:{port}"}, f"the session's requests all on one worker: {lines}"


def test_the_workers_share_what_prepare_made_once(served: Served) -> None:
    assert (served.data_dir / "browser-state.key").exists(), "one browser key for all workers"
    assert (served.data_dir / "chroma-server").is_dir(), "the Chroma server keeps its data here"
    conf = (served.data_dir / "serve" / "nginx.conf").read_text(encoding="utf-8")
    assert f"listen 127.0.0.1:{served.worker_ports[0] - 1};" in conf, "loopback by default"
    for name in ("w1", "w2"):
        log = (served.log_dir / f"{name}.log").read_text(encoding="utf-8")
        assert "building knowledge index" not in log, f"{name} opened the prepared index"


def test_ctrl_c_stops_every_process_of_the_set(served: Served) -> None:
    """Last: it stops the set."""
    pids = descendants(served.proc.pid)
    assert len(pids) >= 5, f"Chroma, two workers, nginx and its worker run: {pids}"
    served.proc.send_signal(signal.SIGINT)
    assert served.proc.wait(timeout=60) == 0, "a Ctrl-C is a clean stop"
    time.sleep(0.5)
    alive = [pid for pid in pids if _alive(pid)]
    assert alive == [], f"processes left behind: {alive}"
    for port in [*served.worker_ports, served.worker_ports[0] - 1, served.worker_ports[1] + 1]:
        assert port_free("127.0.0.1", port), f"port {port} is free again"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
