"""The launcher: the whole set on one machine, started in order, watched, stopped on Ctrl-C.

    python -m deploy.serve [--workers 2] [--port 7860] [--worker-port 7861] [--chroma-port 8765]
    make serve ARGS="--workers 2"

1. a Chroma server (`chroma run`, data in <data_dir>/chroma-server), unless GPU_ADVISOR_CHROMA_URL
   names one already running;
2. `python -m deploy.prepare`: the shared browser key and the knowledge index, once;
3. the workers, `python app.py --port P` for each worker port, all with the same data folder and
   Chroma server;
4. nginx in front of them (`deploy.nginx`), on host:port, 127.0.0.1:7860 by default.

The launcher prints one line when the set answers through the proxy, then waits. Ctrl-C (SIGINT)
or SIGTERM stops nginx, then the workers, then Chroma; if any part exits by itself, the rest are
stopped too and the launcher exits with status 1. Logs: <run_dir>/logs/<part>.log.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from deploy.nginx import NGINX_HINT, ProxyPlan, find_nginx, prepare_dirs, render
from deploy.procs import Child, StartError, port_free, spawn, stop, wait_http
from deploy.settings import LOOPBACK, ServeSettings, serve_settings_from_args

__all__ = ["OFFLINE_ENV", "Stack", "main"]

ROOT = Path(__file__).resolve().parents[1]
OFFLINE_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
WORKER_GRACE_S = 15.0  # a worker finishing its turns after Ctrl-C


class Stack:
    """One served set: its settings, the children it started and how to stop them."""

    def __init__(self, settings: ServeSettings, *, say: Callable[[str], None] = print) -> None:
        self.settings = settings
        self.say = say
        self.run_dir = settings.serve_dir().resolve()
        self.log_dir = self.run_dir / "logs"
        self.chroma: Child | None = None
        self.workers: list[Child] = []
        self.proxy: Child | None = None
        self._stopped = threading.Event()

    # -- starting ----------------------------------------------------------------------------

    def children(self) -> list[Child]:
        """Every child started so far, in starting order."""
        parts = [self.chroma, *self.workers, self.proxy]
        return [child for child in parts if child is not None]

    def env(self) -> dict[str, str]:
        """The environment of every Python child: the same data folder and Chroma server."""
        env = {**os.environ, **OFFLINE_ENV}
        env["GPU_ADVISOR_DATA_DIR"] = str(self.settings.data_dir.resolve())
        env["GPU_ADVISOR_CHROMA_URL"] = self.settings.chroma_address()
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def start(self) -> None:
        """Start every part in order and wait until each answers; on any failure stop what was
        started and raise StartError."""
        try:
            self._check_ports()
            nginx = self._nginx_program()
            self._start_chroma()
            self._prepare()
            self._start_workers()
            self._start_proxy(nginx)
        except BaseException:
            self.stop()
            raise

    def _check_ports(self) -> None:
        wanted = {f"proxy ({self.settings.host})": (self.settings.host, self.settings.port)}
        for i, port in enumerate(self.settings.worker_ports(), 1):
            wanted[f"worker w{i}"] = (LOOPBACK, port)
        if self.settings.chroma_url is None:
            wanted["Chroma server"] = (LOOPBACK, self.settings.chroma_port)
        for name, (host, port) in wanted.items():
            if not port_free(host, port):
                raise StartError(f"port {port} of the {name} is already in use on {host}")

    def _nginx_program(self) -> str:
        found = find_nginx(self.settings.nginx)
        if found is None:
            raise StartError(
                f"nginx not found ({self.settings.nginx!r}, on PATH or in /usr/sbin): install it"
                f" ({NGINX_HINT}) or point GPU_ADVISOR_NGINX at it"
            )
        return found

    def _start_chroma(self) -> None:
        if self.settings.chroma_url is not None:
            self.say(f"using the Chroma server at {self.settings.chroma_url}")
            return
        program = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
        path = self.settings.data_dir.resolve() / "chroma-server"
        argv = [program, "run", "--path", str(path), "--host", LOOPBACK,
                "--port", str(self.settings.chroma_port)]  # fmt: skip
        self.chroma = spawn("chroma", argv, env=self.env(), cwd=ROOT, log_dir=self.log_dir)
        url = f"{self.settings.chroma_address()}/api/v2/heartbeat"
        seconds = wait_http(url, self.chroma, self.settings.start_timeout_s)
        self.say(f"Chroma server on {self.settings.chroma_address()} ({seconds:.1f} s)")

    def _prepare(self) -> None:
        child = spawn(
            "prepare", [sys.executable, "-m", "deploy.prepare"],
            env=self.env(), cwd=ROOT, log_dir=self.log_dir,
        )  # fmt: skip
        try:
            status = child.proc.wait(timeout=self.settings.start_timeout_s)
        except BaseException:
            stop(child)
            raise
        if status != 0:
            raise StartError(f"preparing the data folder failed:\n{child.log_tail()}")
        self.say(child.log_tail(1).removeprefix("INFO deploy.prepare: "))

    def _start_workers(self) -> None:
        for i, port in enumerate(self.settings.worker_ports(), 1):
            env = {**self.env(), "GRADIO_TEMP_DIR": str(self.run_dir / "gradio-tmp" / f"w{i}")}
            argv = [sys.executable, str(ROOT / "app.py"), "--host", LOOPBACK, "--port", str(port)]
            self.workers.append(spawn(f"w{i}", argv, env=env, cwd=ROOT, log_dir=self.log_dir))
        for child, port in zip(self.workers, self.settings.worker_ports(), strict=True):
            seconds = wait_http(f"http://{LOOPBACK}:{port}/", child, self.settings.start_timeout_s)
            self.say(f"worker {child.name} on http://{LOOPBACK}:{port}/ ({seconds:.1f} s)")

    def _start_proxy(self, nginx: str) -> None:
        prepare_dirs(self.run_dir)
        workers = [f"{LOOPBACK}:{port}" for port in self.settings.worker_ports()]
        host = self.settings.host
        listen = f"[{host}]:{self.settings.port}" if ":" in host else f"{host}:{self.settings.port}"
        conf = self.run_dir / "nginx.conf"
        conf.write_text(render(ProxyPlan(listen, workers, self.run_dir)), encoding="utf-8")
        argv = [nginx, "-e", str(self.log_dir / "nginx-error.log"), "-c", str(conf)]
        self.proxy = spawn("nginx", argv, env=os.environ, cwd=self.run_dir, log_dir=self.log_dir)
        url = self.settings.public_url() + "config"
        wait_http(url, self.proxy, self.settings.start_timeout_s)

    # -- running and stopping ----------------------------------------------------------------

    def request_stop(self) -> None:
        """Ask `wait` to return (from a signal handler or another thread)."""
        self._stopped.set()

    def wait(self) -> int:
        """Block until a stop is requested (0) or a part exits by itself (1)."""
        while not self._stopped.wait(0.2):
            for child in self.children():
                if not child.alive():
                    self.say(
                        f"{child.name} exited with status {child.proc.returncode}; stopping the"
                        f" set. The end of {child.log}:\n{child.log_tail()}"
                    )
                    return 1
        return 0

    def stop(self) -> None:
        """Stop the proxy, then the workers (Ctrl-C, so they close cleanly), then Chroma."""
        if self.proxy is not None:
            stop(self.proxy, signal.SIGQUIT, grace_s=5.0)  # graceful: finish open requests
        for child in self.workers:  # all at once: each closes its server in parallel
            if child.alive():
                child.proc.send_signal(signal.SIGINT)
        for child in self.workers:
            stop(child, None, grace_s=WORKER_GRACE_S)
        if self.chroma is not None:
            stop(self.chroma, signal.SIGTERM, grace_s=10.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Start the set, print where it answers, run until Ctrl-C or SIGTERM, stop it."""
    settings = serve_settings_from_args(argv)
    stack = Stack(settings, say=lambda line: print(line, flush=True))

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stack.request_stop()
        if not stack.children() or stack.proxy is None:  # still starting: stop right away
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        stack.start()
    except StartError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("stopped while starting", flush=True)
        return 130
    print(
        f"GPU Advisor is ready on {settings.public_url()} ({settings.workers} workers behind"
        f" nginx, Chroma at {settings.chroma_address()}); logs in {stack.log_dir}."
        " Ctrl-C stops it.",
        flush=True,
    )
    status = stack.wait()
    stack.stop()
    print("stopped", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
