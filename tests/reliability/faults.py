"""Misbehaving servers on 127.0.0.1 for the fault tests, each stopped by its context manager.

- `SilentServer`: a TCP socket that accepts every connection and never sends a byte (a paused
  Chroma, or an LLM endpoint stuck before its first byte).
- `ChatEndpoint`: an OpenAI-compatible `POST /v1/chat/completions` whose behaviour the test
  picks: a real (scripted) completion, an HTTP error status with a chosen body, a 200 that is not
  JSON, silence, or a reply that trickles a byte at a time and never ends.

`free_port` and the real `chroma_server` come from `tests.fakes.chroma`.

Every server runs in daemon threads and records what it was sent, so a test can check that a
secret reached the endpoint (it must) and nothing else (logs, answers) saw it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.fakes.chroma import free_port

Behaviour = Literal["ok", "status", "garbage", "silent", "trickle"]


class SilentServer:
    """Accepts connections on 127.0.0.1 and never answers; `url` is http://127.0.0.1:PORT."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)  # kept open, never read from or written to

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        for conn in self._held:
            with contextlib.suppress(OSError):
                conn.close()
        self._listener.close()


def completion(content: str, model: str = "stub-model") -> dict[str, Any]:
    """A minimal OpenAI chat-completions response carrying `content`."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def stream_events(content: str, model: str = "stub-model") -> list[bytes]:
    """The same answer as server-sent events, one chunk, then [DONE]."""
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0, "model": model}
    first = {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]}
    last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return [f"data: {json.dumps(e)}\n\n".encode() for e in (first, last)] + [b"data: [DONE]\n\n"]


@dataclass
class ChatEndpoint:
    """An OpenAI-compatible endpoint on 127.0.0.1. `base_url` is what `llm_base_url` takes.

    behaviour: 'ok' answers `answer` (as JSON, or as events when the request streams);
    'status' replies `status` with `body`; 'garbage' replies 200 with an HTML page; 'silent'
    reads the request and never answers; 'trickle' sends headers for a stream, then one byte
    every `trickle_every_s` seconds, forever."""

    behaviour: Behaviour = "ok"
    answer: str = "stub answer"
    status: int = 500
    body: str = '{"error": {"message": "internal error", "type": "server_error"}}'
    trickle_every_s: float = 0.5
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)  # names lower-cased

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ChatEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=2)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                endpoint.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    endpoint.requests.append(json.loads(raw or b"{}"))
                except ValueError:
                    endpoint.requests.append({"raw": raw.decode("utf-8", "replace")})
                endpoint.respond(self)

        return Handler

    def respond(self, handler: BaseHTTPRequestHandler) -> None:
        streaming = bool(self.requests[-1].get("stream"))
        if self.behaviour == "silent":
            self._stop.wait()
            return
        if self.behaviour == "trickle":
            self._trickle(handler)
            return
        if self.behaviour == "status":
            self._send(handler, self.status, "application/json", self.body.encode())
        elif self.behaviour == "garbage":
            self._send(handler, 200, "text/html", b"<html><body>Bad gateway, sorry</body></html>")
        elif streaming:
            self._send(handler, 200, "text/event-stream", b"".join(stream_events(self.answer)))
        else:
            self._send(
                handler, 200, "application/json", json.dumps(completion(self.answer)).encode()
            )

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, ctype: str, payload: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        with contextlib.suppress(OSError):
            handler.wfile.write(payload)

    def _trickle(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        while not self._stop.wait(self.trickle_every_s):
            try:
                handler.wfile.write(b":")  # an SSE comment byte: keeps the stream alive
                handler.wfile.flush()
            except OSError:
                return


@contextlib.contextmanager
def chat_endpoint(**kwargs: Any) -> Iterator[ChatEndpoint]:
    """`with chat_endpoint(behaviour='status', status=401) as ep:` ..."""
    with ChatEndpoint(**kwargs) as endpoint:
        yield endpoint


MAX_WAIT_S = 15.0  # no call may wait longer than this on anything outside the process


class Stopwatch:
    """Elapsed seconds since `start()`; `assert_within(bound)` fails naming both."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def assert_within(self, bound: float, what: str) -> float:
        elapsed = self.elapsed
        assert elapsed <= bound, f"{what} took {elapsed:.1f} s, more than {bound:g} s"
        return elapsed


ProxyMode = Literal["forward", "silent", "refuse"]


class FaultProxy:
    """A TCP proxy on 127.0.0.1 in front of a real server, switched at will between
    'forward' (pass bytes both ways), 'silent' (accept, never answer: a paused server) and
    'refuse' (nothing listens: a stopped server). Switching drops every open connection, so a
    client's kept-alive connections see the new mode too. `url` stays the same throughout."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode: ProxyMode = "forward"
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> FaultProxy:
        self._listen()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._drop_connections()
        if self._listener is not None:
            self._listener.close()

    def set_mode(self, mode: ProxyMode) -> None:
        with self._lock:
            self.mode = mode
            if mode == "refuse" and self._listener is not None:
                self._listener.close()
                self._listener = None
            elif mode != "refuse" and self._listener is None:
                self._listen()
        self._drop_connections()

    def _listen(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port))  # SO_REUSEADDR on POSIX
        listener.settimeout(0.1)
        self._listener = listener

    def _drop_connections(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            listener = self._listener
            if listener is None:
                time.sleep(0.05)
                continue
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self._sockets.append(conn)
                mode = self.mode
            if mode == "forward":
                self._forward(conn)

    def _forward(self, conn: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            conn.close()
            return
        upstream.settimeout(None)
        with self._lock:
            self._sockets.append(upstream)
        for source, target in ((conn, upstream), (upstream, conn)):
            threading.Thread(target=_pump, args=(source, target), daemon=True).start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy bytes from `source` to `target` until either side closes."""
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class PageServer:
    """An HTTP server on 127.0.0.1 that answers every GET with one fixed page (a web server or
    proxy where a Chroma server was expected)."""

    def __init__(self, status: int = 200, body: bytes = b"<html>hello</html>") -> None:
        page = (status, body)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self.send_response(page[0])
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page[1])))
                self.end_headers()
                self.wfile.write(page[1])

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
