"""The proxy's configuration in front of two stand-in workers (tiny HTTP servers that say who
they are): real nginx, real cookies, real streams; no Gradio, so it takes about a second.
Requests never go through an HTTP(S)_PROXY of the environment (trust_env=False)."""

from __future__ import annotations

import http.server
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from deploy.nginx import COOKIE, NGINX_HINT, ProxyPlan, find_nginx, prepare_dirs, render
from deploy.procs import Child, spawn, stop, wait_http
from tests.fakes.chroma import free_port

NGINX = find_nginx()

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(
        NGINX is None, reason=f"nginx not found on PATH or in /usr/sbin ({NGINX_HINT})"
    ),
]


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers with the server's name; /stream sends three events 0.3 s apart."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        name = self.server.name  # type: ignore[attr-defined]
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(3):
                event = f"data: {name} {i}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                time.sleep(0.3)
            self.wfile.write(b"0\r\n\r\n")
            return
        body = name.encode()
        self.send_response(200)
        self.send_header("Connection", "close")  # a stopped worker then really is gone
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Proxy:
    url: str
    servers: dict[str, http.server.ThreadingHTTPServer]
    nginx: Child
    conf: Path


def _worker(name: str) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Echo)
    server.name = name  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    run = tmp_path_factory.mktemp("nginx")
    servers = {"w1": _worker("w1"), "w2": _worker("w2")}
    workers = [f"127.0.0.1:{s.server_address[1]}" for s in servers.values()]
    port = free_port()
    conf = run / "nginx.conf"
    prepare_dirs(run)
    conf.write_text(render(ProxyPlan(f"127.0.0.1:{port}", workers, run)), encoding="utf-8")
    argv = [str(NGINX), "-e", str(run / "logs" / "err.log"), "-c", str(conf)]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    nginx = spawn("nginx", argv, env=env, cwd=run, log_dir=run / "logs")
    wait_http(f"http://127.0.0.1:{port}/", nginx, 20)
    yield Proxy(f"http://127.0.0.1:{port}", servers, nginx, conf)
    stop(nginx, signal.SIGQUIT, grace_s=5)
    for server in servers.values():
        server.shutdown()


def test_rendered_configuration_passes_nginx_test(proxy: Proxy) -> None:
    check = subprocess.run(
        [str(NGINX), "-t", "-e", "/dev/stderr", "-c", str(proxy.conf)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr


def test_new_pages_spread_and_the_cookie_names_the_worker(proxy: Proxy) -> None:
    seen = []
    for _ in range(4):
        page = httpx.get(proxy.url + "/", trust_env=False)
        assert page.cookies.get(COOKIE) == page.text, "the cookie names the worker that served"
        seen.append(page.text)
    assert set(seen) == {"w1", "w2"}, f"new pages go to both workers: {seen}"


def test_a_pinned_session_stays_on_its_worker(proxy: Proxy) -> None:
    with httpx.Client(base_url=proxy.url, trust_env=False) as browser:
        first = browser.get("/").text
        answers = {browser.get(path).text for path in ("/config", "/gradio_api/queue/data") * 5}
    assert answers == {first}, f"every request of the session reached {first}: {answers}"


def test_requests_without_a_cookie_stick_by_client_address(proxy: Proxy) -> None:
    answers = {httpx.get(proxy.url + "/gradio_api/info", trust_env=False).text for _ in range(8)}
    assert len(answers) == 1, f"a cookie-less client's join and stream must meet: {answers}"


def test_an_unknown_cookie_is_replaced(proxy: Proxy) -> None:
    page = httpx.get(proxy.url + "/", cookies={COOKIE: "w9"}, trust_env=False)
    assert page.cookies.get(COOKIE) == page.text in ("w1", "w2")


def test_events_stream_through_unbuffered(proxy: Proxy) -> None:
    arrivals = []
    start = time.monotonic()
    with httpx.stream(
        "GET", proxy.url + "/stream", cookies={COOKIE: "w1"}, trust_env=False
    ) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                arrivals.append((time.monotonic() - start, line))
    assert [line for _, line in arrivals] == ["data: w1 0", "data: w1 1", "data: w1 2"]
    # sent 0.3 s apart: buffered, they would arrive together; a slow start under load is no matter
    spread = arrivals[-1][0] - arrivals[0][0]
    assert spread > 0.4, f"each event came as it was sent, not all at the end: {arrivals}"


def test_a_stopped_worker_is_stood_in_for(proxy: Proxy) -> None:
    """Last: it stops w2 for good."""
    proxy.servers["w2"].shutdown()
    proxy.servers["w2"].server_close()
    answer = httpx.get(proxy.url + "/config", cookies={COOKIE: "w2"}, trust_env=False)
    assert (answer.status_code, answer.text) == (200, "w1"), "w1 answers for the stopped w2"


def test_idle_worker_connections_close_before_the_worker_closes_them() -> None:
    """uvicorn drops an idle keep-alive connection after its timeout; nginx must drop it first,
    or a request sent on a closing connection comes back as 502 Bad Gateway."""
    import uvicorn

    conf = render(ProxyPlan("127.0.0.1:1", ["127.0.0.1:2", "127.0.0.1:3"], Path("/run")))
    timeouts = {int(t) for t in re.findall(r"keepalive_timeout (\d+)s;", conf)}
    assert len(timeouts) == 1 and conf.count("keepalive_timeout") == conf.count("upstream ")
    assert timeouts.pop() < uvicorn.Config(app=None).timeout_keep_alive
