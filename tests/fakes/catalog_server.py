"""A local HTTP server for catalog downloads: routes answer recorded or synthetic responses.

Tests never reach the network: `CatalogServer` binds 127.0.0.1 on a free port, serves each path
from a queue of `Reply`s (the last one repeats), answers If-None-Match with 304 when the ETag
matches, and logs every request path so a test can assert what was (not) downloaded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """One response. `declared_length` > len(body) makes a truncated download (the server
    closes the connection early); `etag` is sent and honoured for If-None-Match."""

    body: bytes = b""
    status: int = 200
    etag: str | None = None
    declared_length: int | None = None


@dataclass
class CatalogServer:
    """Routes: path -> replies. `requests` logs (method, path) in order."""

    routes: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set(self, path: str, *replies: Reply) -> None:
        self.routes[path] = list(replies)

    def hits(self, path: str) -> int:
        return self.requests.count(path)

    def _next(self, path: str) -> Reply:
        queue = self.routes.get(path)
        if not queue:
            return Reply(b"not found", status=404)
        return queue.pop(0) if len(queue) > 1 else queue[0]


def _handler(server: CatalogServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.requests.append(self.path)
            reply = server._next(self.path)
            if reply.etag and self.headers.get("If-None-Match") == reply.etag:
                self.send_response(304)
                self.send_header("ETag", reply.etag)
                self.end_headers()
                return
            self.send_response(reply.status)
            length = reply.declared_length or len(reply.body)
            self.send_header("Content-Length", str(length))
            if reply.etag:
                self.send_header("ETag", reply.etag)
            self.end_headers()
            self.wfile.write(reply.body)
            if reply.declared_length:
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def serve() -> Iterator[CatalogServer]:
    """A running CatalogServer on 127.0.0.1, shut down after the block."""
    state = CatalogServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
