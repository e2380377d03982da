"""A small client of Gradio's queue protocol, speaking it as the page's JavaScript does: load the
page (which sets the proxy's route cookie), keep a heartbeat stream open, and for each event POST
`queue/join`, then read `queue/data` (server-sent events) until the event completes.

It costs the caller little CPU (only the final message of an event is decoded), so a load test
on a small machine measures the server rather than its own client.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import uuid
from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = [
    "CallError",
    "GradioSession",
    "JoinRefused",
    "chat_text",
    "find_fn_index",
    "find_load_event",
    "find_page_event",
    "follow_ups",
    "user_messages",
]

API = "gradio_api"


class CallError(RuntimeError):
    """An event that did not complete successfully (HTTP error, queue full, handler error)."""


class JoinRefused(CallError):
    """The event was not queued at all (the server never saw its input)."""


def _config(base_url: str, timeout: float) -> dict[str, Any]:
    url = f"{base_url.rstrip('/')}/config"
    return dict(httpx.get(url, timeout=timeout, trust_env=False).json())


def find_fn_index(base_url: str, api_name: str, timeout: float = 30.0) -> int:
    """The id of the event published as `api_name`, read from the app's /config."""
    for dependency in _config(base_url, timeout)["dependencies"]:
        if dependency.get("api_name") == api_name:
            return int(dependency["id"])
    raise CallError(f"no event named {api_name!r} in {base_url}/config")


def find_page_event(
    base_url: str, elem_id: str, event: str = "click", timeout: float = 30.0
) -> int:
    """The id of the server event the page runs on `event` of the component `elem_id` (the
    send button's click is a chat turn as the page sends it), read from the app's /config."""
    config = _config(base_url, timeout)
    ids = {c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id}
    for dependency in config["dependencies"]:
        on = {(target[0], target[1]) for target in dependency.get("targets", [])}
        if dependency.get("backend_fn") and any((i, event) in on for i in ids):
            return int(dependency["id"])
    raise CallError(f"no server event on {event} of #{elem_id} in {base_url}/config")


def find_load_event(base_url: str, timeout: float = 30.0) -> tuple[int, int]:
    """The server event a page runs as it opens (the app's `load`), as (id, number of inputs):
    a browser sends it before anyone can type, and it starts the tab's server-side session."""
    for dependency in _config(base_url, timeout)["dependencies"]:
        on_load = any(target[1] == "load" for target in dependency.get("targets", []))
        if on_load and dependency.get("backend_fn"):
            return int(dependency["id"]), len(dependency["inputs"])
    raise CallError(f"no server event on the page's load in {base_url}/config")


def follow_ups(base_url: str, fn_index: int, timeout: float = 30.0) -> list[tuple[int, int]]:
    """The server events the page runs after event `fn_index` (its `.then` chain), in order,
    each as (id, number of inputs). The page sends them after every completed turn."""
    dependencies = _config(base_url, timeout)["dependencies"]
    chain: list[tuple[int, int]] = []
    current = fn_index
    while True:
        nxt = next((d for d in dependencies if d.get("trigger_after") == current), None)
        if nxt is None or not nxt.get("backend_fn"):
            return chain
        chain.append((int(nxt["id"]), len(nxt["inputs"])))
        current = int(nxt["id"])


class GradioSession:
    """One browser tab: its cookies, its session hash, its heartbeat and its events."""

    def __init__(self, base_url: str, *, timeout: float = 120.0) -> None:
        self.base = base_url.rstrip("/")
        self.session_hash = uuid.uuid4().hex[:11]
        # trust_env=False: the set under test is on this machine, never behind HTTP(S)_PROXY
        self.http = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0), trust_env=False)
        self._beat_conn: http.client.HTTPConnection | None = None
        self._beat: threading.Thread | None = None

    @property
    def worker(self) -> str | None:
        """The worker the proxy pinned this session to (its route cookie), if any."""
        return self.http.cookies.get("gpu_advisor_worker")

    def open(self, heartbeat: bool = True) -> None:
        """Load the page (as a browser does first) and start the heartbeat stream."""
        self.http.get(f"{self.base}/").raise_for_status()
        if heartbeat:
            parts = urlsplit(self.base)
            self._beat_conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 80)
            cookie = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
            path = f"{parts.path}/{API}/heartbeat/{self.session_hash}"
            self._beat_conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()

    def _heartbeat(self) -> None:
        """Read the heartbeat stream until the server or `close` ends it."""
        assert self._beat_conn is not None
        # closing from `close` may surface as any of these inside http.client
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError, AttributeError):
            response = self._beat_conn.getresponse()
            while response.read1(4096):
                pass

    def call(self, fn_index: int, data: list[Any]) -> list[Any]:
        """Run event `fn_index` with `data`; returns its final output values."""
        body = {"data": data, "fn_index": fn_index, "session_hash": self.session_hash,
                "event_data": None, "trigger_id": None}  # fmt: skip
        joined = self.http.post(f"{self.base}/{API}/queue/join", json=body)
        if joined.status_code != 200:
            raise JoinRefused(f"queue/join answered {joined.status_code}: {joined.text[:200]}")
        event_id = joined.json()["event_id"]
        params = {"session_hash": self.session_hash}
        with self.http.stream("GET", f"{self.base}/{API}/queue/data", params=params) as stream:
            if stream.status_code != 200:
                raise CallError(f"queue/data answered {stream.status_code}")
            for line in stream.iter_lines():
                if line.startswith('data: {"msg":"process_completed"') or (
                    line.startswith("data:") and '"process_completed"' in line[:60]
                ):
                    message = json.loads(line[5:])
                    if message.get("event_id") == event_id:
                        return _completed(message)
        raise CallError(f"the event stream ended before event {event_id} completed")

    def close(self) -> None:
        """End the heartbeat (the server then forgets the session) and the connections."""
        if self._beat_conn is not None and self._beat_conn.sock is not None:
            with contextlib.suppress(OSError):  # wakes the reading thread at once
                self._beat_conn.sock.shutdown(socket.SHUT_RDWR)
            self._beat_conn.close()
        if self._beat is not None:
            self._beat.join(timeout=5)
        self.http.close()


def _completed(message: dict[str, Any]) -> list[Any]:
    if not message.get("success"):
        output = message.get("output") or {}
        raise CallError(f"the event failed: {str(output.get('error'))[:200]}")
    return list(message["output"]["data"])


def chat_text(message: dict[str, Any]) -> str:
    """The text of one chat message as the Chatbot sends it (a string or text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def user_messages(chat: list[dict[str, Any]]) -> list[str]:
    """The user's messages of a chat, in order."""
    return [chat_text(m) for m in chat if m.get("role") == "user"]
