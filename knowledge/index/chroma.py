"""Talking to Chroma with bounded waits and errors that name the real cause.

`make_client(config, folder)` returns a Chroma client: an HTTP client when `chroma_url` is set,
else an embedded `PersistentClient` in `folder/chroma`. A server is first probed
(`GET /api/v2/heartbeat`), so a bad address fails at once with one of:

- `InvalidInputError` (field `chroma_url`): not an http(s)://host[:port] URL;
- `ChromaUnreachableError`: nothing accepts the connection (refused, unknown host, no answer
  to the connect within `chroma_connect_timeout_s`);
- `ChromaTimeoutError`: the connection is accepted but no answer comes within
  `chroma_read_timeout_s` (a paused or overloaded server);
- `ChromaServerError`: something answered, but not as a Chroma server would (an HTTP error, a
  page that is not JSON, a failed request).

All three are `StoreUnavailableError`: the index on disk is fine, the vector store cannot be
used now, and the knowledge base answers from BM25 alone. The HTTP client keeps the same
connect and read timeouts for every later request (Chroma's own client waits for ever), and
`bounded_call` caps a whole call, server or embedded, at the read timeout plus
`DEADLINE_SLACK_S`.

Credentials in `chroma_url` (`http://user:password@host:port`) are sent as HTTP basic auth and
never appear in a message: every URL shown goes through `tools.redaction.redact_url`.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from knowledge.config import KnowledgeConfig
from knowledge.errors import (
    ChromaServerError,
    ChromaTimeoutError,
    ChromaUnreachableError,
    StoreUnavailableError,
)
from tools.errors import InvalidInputError
from tools.redaction import redact, redact_url, url_secrets

T = TypeVar("T")

HEARTBEAT_PATH = "/api/v2/heartbeat"
DEADLINE_SLACK_S = 1.0  # a call may take this long past its read timeout before it is abandoned


@dataclass(frozen=True)
class ChromaServer:
    """Where a Chroma server is and how to reach it; `shown` is the URL with secrets removed."""

    host: str
    port: int
    ssl: bool
    shown: str
    headers: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.ssl else 'http'}://{host}:{self.port}"


def parse_server(url: str) -> ChromaServer:
    """The server a `chroma_url` names (default port 8000 for http, 443 for https); user and
    password in the URL become a basic-auth header. InvalidInputError when it is no such URL."""
    shown = redact_url(url)
    valid = "http(s)://host:port, e.g. http://127.0.0.1:8000"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise InvalidInputError("chroma_url", shown, valid) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError("chroma_url", shown, valid)
    headers: dict[str, str] = {}
    if parts.username is not None:
        user_pass = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(user_pass.encode()).decode()
    ssl = parts.scheme == "https"
    return ChromaServer(
        host=parts.hostname,
        port=port or (443 if ssl else 8000),
        ssl=ssl,
        shown=shown,
        headers=headers,
        secrets=tuple(url_secrets(url)) + tuple(headers.values()),
    )


def probe(server: ChromaServer, connect_s: float, read_s: float) -> None:
    """Check that a Chroma server answers its heartbeat; raises the `StoreUnavailableError`
    subclass naming why it does not. Waits at most `connect_s` + `read_s` seconds."""
    import httpx

    timeout = httpx.Timeout(read_s, connect=connect_s)
    try:
        with httpx.Client(timeout=timeout, headers=server.headers) as client:
            response = client.get(server.base_url + HEARTBEAT_PATH)
    except httpx.HTTPError as exc:
        raise transport_failure(exc, server, connect_s, read_s) from None
    if response.status_code != 200:
        raise ChromaServerError(
            f"{server.shown} answered, but not as a Chroma server: HTTP {response.status_code} "
            f"on {HEARTBEAT_PATH}"
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not any("heartbeat" in str(key) for key in body):
        kind = response.headers.get("content-type", "no content type")
        raise ChromaServerError(
            f"{server.shown} answered, but not as a Chroma server: {HEARTBEAT_PATH} returned "
            f"no heartbeat ({kind})"
        )


def transport_failure(
    exc: BaseException, server: ChromaServer, connect_s: float, read_s: float
) -> StoreUnavailableError:
    """The store error an httpx failure on `server` means (refused, unknown host, timeouts)."""
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return ChromaUnreachableError(
            f"Chroma server {server.shown} is unreachable: no answer to the connection within "
            f"{connect_s:g} s"
        )
    if isinstance(exc, httpx.TimeoutException):
        return ChromaTimeoutError(
            f"Chroma server {server.shown} accepted the connection but did not answer within "
            f"{read_s:g} s"
        )
    if isinstance(exc, httpx.ConnectError):
        return ChromaUnreachableError(
            f"Chroma server {server.shown} is unreachable: {_connect_cause(exc)}"
        )
    detail = redact(str(exc) or type(exc).__name__, server.secrets)
    return ChromaServerError(f"{server.shown} answered, but not as a Chroma server: {detail}")


def _connect_cause(exc: BaseException) -> str:
    text = str(exc).lower()
    if "refused" in text:
        return "connection refused (is the server running, on this port?)"
    if "name or service not known" in text or "nodename nor servname" in text:
        return "host name not found"
    return redact(str(exc)) or type(exc).__name__


def server_failure(exc: BaseException, config: KnowledgeConfig) -> StoreUnavailableError:
    """What an exception raised by a Chroma server call means for the store (transport
    failures by cause; anything else the server did wrong as a `ChromaServerError`)."""
    import httpx

    server = parse_server(config.chroma_url or "")
    connect_s, read_s = config.chroma_connect_timeout_s, config.chroma_read_timeout_s
    if isinstance(exc, StoreUnavailableError):
        return exc
    if isinstance(exc, httpx.HTTPError):
        return transport_failure(exc, server, connect_s, read_s)
    detail = redact(f"{type(exc).__name__}: {exc}", server.secrets)
    return ChromaServerError(f"Chroma server {server.shown} failed the request ({detail})")


def bounded_call(call: Callable[[], T], timeout_s: float, what: str) -> T:
    """`call()`, abandoned with `ChromaTimeoutError` after `timeout_s` + `DEADLINE_SLACK_S`
    seconds (it keeps running in a daemon thread, so it can never keep the process alive).
    Exceptions of `call` are raised as they are. `what` names the store in the message."""
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=run, name="chroma-call", daemon=True).start()
    if not finished.wait(timeout_s + DEADLINE_SLACK_S):
        raise ChromaTimeoutError(f"{what} did not answer within {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def make_client(config: KnowledgeConfig, folder: Path) -> Any:
    """A Chroma HTTP client (probed first, then bounded by the configured timeouts) when
    `chroma_url` is set, else a PersistentClient in `folder/chroma`."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if not config.chroma_url:
        return chromadb.PersistentClient(path=str(folder / "chroma"), settings=settings)
    server = parse_server(config.chroma_url)
    connect_s, read_s = config.chroma_connect_timeout_s, config.chroma_read_timeout_s
    probe(server, connect_s, read_s)
    try:
        client = bounded_call(
            lambda: chromadb.HttpClient(
                host=server.host,
                port=server.port,
                ssl=server.ssl,
                headers=dict(server.headers) or None,
                settings=settings,
            ),
            read_s,
            f"Chroma server {server.shown}",
        )
    except Exception as exc:
        raise server_failure(exc, config) from None
    bound_session(client, connect_s, read_s)
    return client


def bound_session(client: Any, connect_s: float, read_s: float) -> None:
    """Give a Chroma HttpClient's httpx session connect and read timeouts (chromadb 1.5 builds
    it with `timeout=None`, so a silent server would block every later call for ever).

    This reaches into the client (`client._server._session`): there is no public setting. If a
    chromadb release moves it, this raises instead of silently leaving calls unbounded."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client):
        raise RuntimeError(
            "chromadb's HttpClient no longer keeps an httpx session at client._server._session; "
            "knowledge/index/chroma.py must learn where to set its timeouts"
        )
    session.timeout = httpx.Timeout(read_s, connect=connect_s)
