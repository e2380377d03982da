"""Bounded calls to the LLM endpoint: how long each phase may take, and what counts as a reply.

An endpoint may refuse the connection, accept it and stay silent, start answering and never
finish, answer with an error status, or answer 200 with something that is not an OpenAI-style
reply (an HTML error page from a proxy). Each of these must end the model call quickly with an
exception the agent treats as "endpoint unreachable" (`assistant.agent.graph.endpoint_errors`),
so the turn falls back to the offline brain instead of hanging or apologising.

`LLMTimeouts` holds the bounds, in seconds: `connect_s` to open the connection, `first_byte_s`
to the first byte of the reply and between any two reads after it (replies are streamed, so a
healthy endpoint sends its first token within this), and `total_s` for the whole reply.

`chat_model_kwargs(provider, timeouts, max_retries)` gives the `init_chat_model` arguments that
apply them. For OpenAI-compatible endpoints (`openai:...`) the HTTP client is
`bounded_http_client`, whose `ReplyCheckingTransport` also enforces `total_s` and refuses a 2xx
reply that is neither JSON nor an event stream, or whose JSON or events do not parse
(`EndpointReplyError`). Other providers get the per-read timeout only.

The client, its timeout and its transport are built on the HTTP library the installed OpenAI SDK
is built on (`sdk_http`), since the SDK refuses another's classes: openai 3 moved from httpx to
httpx2, a fork of it with the same API; openai 1 and 2 use httpx.
"""

from __future__ import annotations

import importlib
import json
import re
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

__all__ = [
    "MAX_REPLY_BYTES",
    "EndpointReplyError",
    "LLMTimeouts",
    "ReplyCheckingTransport",
    "bounded_http_client",
    "chat_model_kwargs",
    "sdk_http",
]


def sdk_http_name(requirements: list[str] | None) -> str:
    """The HTTP library that a distribution's requirements (`importlib.metadata.requires`)
    name, unconditionally: 'httpx2' where it needs httpx2, else 'httpx'."""
    for requirement in requirements or ():
        if "extra ==" not in requirement and re.match(r"\s*httpx2\b", requirement):
            return "httpx2"
    return "httpx"


def _installed_sdk_http() -> ModuleType:
    try:
        requirements = metadata.requires("openai")
    except metadata.PackageNotFoundError:  # no OpenAI SDK: the transport serves tests only
        requirements = None
    return importlib.import_module(sdk_http_name(requirements))


if TYPE_CHECKING:  # both libraries have one API; type-checked against httpx
    import httpx as sdk_http
else:
    sdk_http = _installed_sdk_http()

MAX_REPLY_BYTES = 32 * 2**20  # a JSON reply larger than this is not a chat completion
STREAMING_PROVIDERS = frozenset({"openai", "anthropic"})


class LLMTimeouts(BaseModel):
    """How long an LLM call may take, in seconds (see the module docstring)."""

    connect_s: float = Field(default=5.0, gt=0, description="to open the connection, s")
    first_byte_s: float = Field(
        default=10.0, gt=0, description="to the reply's first byte, and between reads after it, s"
    )
    total_s: float = Field(default=60.0, gt=0, description="for the whole reply, s")


class EndpointReplyError(sdk_http.DecodingError):
    """The endpoint answered, but not with a chat-completions reply (wrong content type, JSON
    that does not parse, an event stream without events)."""


class _DeadlineStream(sdk_http.SyncByteStream):
    """A response body that fails with ReadTimeout once the reply's total deadline passes."""

    def __init__(
        self,
        inner: sdk_http.SyncByteStream,
        deadline: float,
        total_s: float,
        clock: Callable[[], float],
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._total_s = total_s
        self._clock = clock

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._clock() > self._deadline:
                raise sdk_http.ReadTimeout(f"the reply took longer than {self._total_s:g} s")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _EventStream(sdk_http.SyncByteStream):
    """An event-stream body whose `data:` lines must each be JSON or `[DONE]`, with at least
    one event before the stream ends."""

    def __init__(self, inner: sdk_http.SyncByteStream) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        pending, events = b"", 0
        for chunk in self._inner:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            events += sum(_check_event_line(line) for line in lines)
            yield chunk
        events += _check_event_line(pending)
        if events == 0:
            raise EndpointReplyError("the reply's event stream ended without any event")

    def close(self) -> None:
        self._inner.close()


def _check_event_line(line: bytes) -> int:
    """1 for a valid `data:` line, 0 for any other line; EndpointReplyError for bad data."""
    line = line.rstrip(b"\r")
    if not line.startswith(b"data:"):
        return 0
    payload = line[5:].strip()
    if payload == b"[DONE]":
        return 1
    try:
        json.loads(payload)
    except ValueError:
        raise EndpointReplyError(f"an event of the reply is not JSON: {payload[:80]!r}") from None
    return 1


class ReplyCheckingTransport(sdk_http.BaseTransport):
    """An HTTP transport that caps each reply at `total_s` seconds and checks that a 2xx reply
    is JSON or an event stream that parses (error statuses pass through unchanged: the SDK turns
    them into its own typed errors)."""

    def __init__(
        self,
        total_s: float,
        inner: sdk_http.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_s = total_s
        self._inner = inner or sdk_http.HTTPTransport()
        self._clock = clock

    def handle_request(self, request: sdk_http.Request) -> sdk_http.Response:
        request.headers["Accept-Encoding"] = "identity"  # bodies are checked as sent
        deadline = self._clock() + self.total_s
        raw = self._inner.handle_request(request)
        assert isinstance(raw.stream, sdk_http.SyncByteStream)
        body: sdk_http.SyncByteStream = _DeadlineStream(
            raw.stream, deadline, self.total_s, self._clock
        )
        kind = raw.headers.get("content-type", "").split(";")[0].strip().lower()
        if 200 <= raw.status_code < 300:
            if kind == "text/event-stream":
                body = _EventStream(body)
            elif kind == "application/json" or kind.endswith("+json"):
                return self._checked_json(raw, body)
            else:
                raw.close()
                raise EndpointReplyError(
                    f"HTTP {raw.status_code} reply of type {kind or 'none'}, "
                    "not JSON or an event stream"
                )
        return sdk_http.Response(
            raw.status_code, headers=raw.headers, stream=body, extensions=raw.extensions
        )

    def _checked_json(
        self, raw: sdk_http.Response, body: sdk_http.SyncByteStream
    ) -> sdk_http.Response:
        content = bytearray()
        try:
            for chunk in body:
                content += chunk
                if len(content) > MAX_REPLY_BYTES:
                    raise EndpointReplyError(f"a JSON reply over {MAX_REPLY_BYTES} bytes")
        finally:
            body.close()
        try:
            json.loads(bytes(content))
        except ValueError:
            raise EndpointReplyError(
                f"HTTP {raw.status_code} reply says JSON but does not parse: "
                f"{bytes(content[:80])!r}"
            ) from None
        return sdk_http.Response(
            raw.status_code, headers=raw.headers, content=bytes(content), extensions=raw.extensions
        )

    def close(self) -> None:
        self._inner.close()


def bounded_http_client(timeouts: LLMTimeouts) -> sdk_http.Client:
    """A client (`sdk_http`) for an OpenAI-compatible SDK: the `ReplyCheckingTransport` and the
    connect / first-byte timeouts (the SDK also passes them on each request)."""
    return sdk_http.Client(
        transport=ReplyCheckingTransport(timeouts.total_s),
        timeout=sdk_http.Timeout(timeouts.first_byte_s, connect=timeouts.connect_s),
    )


def chat_model_kwargs(provider: str, timeouts: LLMTimeouts, max_retries: int) -> dict[str, Any]:
    """`init_chat_model` keyword arguments that bound a model of `provider` ('openai',
    'anthropic', ...): streamed replies where the provider streams, timeouts, retries."""
    kwargs: dict[str, Any] = {"max_retries": max_retries}
    if provider in STREAMING_PROVIDERS:
        kwargs["streaming"] = True
    if provider == "openai":
        kwargs["timeout"] = sdk_http.Timeout(timeouts.first_byte_s, connect=timeouts.connect_s)
        kwargs["http_client"] = bounded_http_client(timeouts)
    else:
        kwargs["timeout"] = timeouts.first_byte_s
    return kwargs
