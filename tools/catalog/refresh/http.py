"""Downloading one catalog file: timeouts, retries with backoff, a size cap, conditional GETs.

`fetch` makes at most `attempts` tries. A timeout, a dropped or short read (fewer bytes than
Content-Length), HTTP 429 and 5xx are retried after `backoff_s` x 2^(try-1) seconds; any other
4xx is final. A host that cannot be reached at all (no DNS answer, connection refused, network
unreachable) is final at once and is remembered in `Unreachable`, so the other providers on that
host fail fast too: offline, a refresh ends in about a second with one line per provider. A host
that lets every try's connect time out (a black hole) is remembered the same way after its
tries, so one such host costs one file's tries, not every provider's.
Only http(s) URLs are fetched, and at most `max_bytes` of a body are read. A body that trickles
(each read within the timeout, but under `min_rate` bytes per second on average once
`stall_after_s` have passed) is cut off as too slow and retried like a timeout, so a host that
drips a byte at a time cannot hold a refresh for minutes per file.
"""

from __future__ import annotations

import errno
import http.client
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

USER_AGENT = "gpu-advisor-catalog-refresh/1"
_CHUNK = 1 << 16
_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH}


class FetchError(Exception):
    """A download that failed; `reason` is one line, `status` the HTTP status if any."""

    def __init__(
        self,
        reason: str,
        status: int | None = None,
        retryable: bool = False,
        unreachable: bool = False,
        connect_timeout: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.unreachable = unreachable
        self.connect_timeout = connect_timeout


@dataclass(frozen=True)
class Fetched:
    """A response: 200 with its body, or 304 (not modified) with none."""

    url: str
    status: int
    body: bytes = b""
    etag: str | None = None
    last_modified: str | None = None
    attempts: int = 1


@dataclass
class Unreachable:
    """Hosts found unreachable during one refresh (shared by its providers)."""

    hosts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HttpPolicy:
    """Timeouts (seconds per connect/read), tries, first backoff (seconds), size cap (bytes),
    and the slowest transfer kept (bytes per second on average, judged after `stall_after_s`;
    the published catalogs are a few MB, so 16 KiB/s reads the largest in under five minutes)."""

    timeout_s: float = 20.0
    attempts: int = 3
    backoff_s: float = 1.0
    max_bytes: int = 256 * 2**20
    min_rate: float = 16 * 1024
    stall_after_s: float = 10.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


def fetch(
    url: str,
    policy: HttpPolicy,
    *,
    headers: Mapping[str, str] | None = None,
    unreachable: Unreachable | None = None,
    mirror_on_429: str | None = None,
) -> Fetched:
    """GET `url` under `policy`; on HTTP 429 switch to `mirror_on_429` (same tries, no wait).
    Raises FetchError with one line saying why it failed."""
    last: FetchError | None = None
    attempt = 0
    while attempt < max(1, policy.attempts):
        attempt += 1
        host = urlsplit(url).netloc
        try:
            _check_target(url, unreachable)
            return _get_once(url, policy, headers or {}, attempt)
        except FetchError as exc:
            last = exc
            if exc.unreachable and unreachable is not None:
                unreachable.hosts[host] = exc.reason
            if exc.status == 429 and mirror_on_429:
                url, mirror_on_429, attempt = mirror_on_429, None, attempt - 1
                continue
            if not exc.retryable or attempt == policy.attempts:
                break
            policy.sleep(policy.backoff_s * 2 ** (attempt - 1))
    assert last is not None
    tries = f" after {policy.attempts} attempts" if last.retryable and policy.attempts > 1 else ""
    if last.connect_timeout and unreachable is not None:  # every try timed out connecting
        unreachable.hosts[urlsplit(url).netloc] = last.reason + tries
    raise FetchError(last.reason + tries, last.status, last.retryable)


def _check_target(url: str, unreachable: Unreachable | None) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchError(f"not an http(s) URL: {url[:120]}")
    if unreachable is not None and parts.netloc in unreachable.hosts:
        raise FetchError(unreachable.hosts[parts.netloc])


def _get_once(url: str, policy: HttpPolicy, headers: Mapping[str, str], attempt: int) -> Fetched:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
    try:
        with urllib.request.urlopen(request, timeout=policy.timeout_s) as response:
            body = _read_capped(response, policy)
            return Fetched(
                url=url,
                status=response.status,
                body=body,
                etag=response.headers.get("ETag"),
                last_modified=response.headers.get("Last-Modified"),
                attempts=attempt,
            )
    except urllib.error.HTTPError as exc:
        if exc.code == 304:
            return Fetched(url=url, status=304, etag=exc.headers.get("ETag"), attempts=attempt)
        retry = exc.code == 429 or exc.code >= 500
        raise FetchError(f"HTTP {exc.code} {exc.reason}", exc.code, retry) from None
    except urllib.error.URLError as exc:
        raise _connection_error(exc.reason, url) from None
    except TimeoutError:
        raise FetchError(f"timed out after {policy.timeout_s:g} s", retryable=True) from None
    except (http.client.IncompleteRead, ConnectionError, http.client.HTTPException) as exc:
        raise FetchError(f"truncated download ({_short(exc)})", retryable=True) from None


def _read_capped(response: http.client.HTTPResponse, policy: HttpPolicy) -> bytes:
    """The body, at most `policy.max_bytes`, read as it arrives (`read1`: one socket read each,
    so a trickle is seen between reads) and cut off when its average rate stays too low."""
    max_bytes = policy.max_bytes
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"file of {int(declared):,} bytes is over the {max_bytes:,}-byte cap")
    chunks: list[bytes] = []
    total, start = 0, policy.clock()
    while chunk := response.read1(_CHUNK):
        total += len(chunk)
        if total > max_bytes:
            raise FetchError(f"download over the {max_bytes:,}-byte cap")
        chunks.append(chunk)
        elapsed = policy.clock() - start
        if elapsed > policy.stall_after_s and total < policy.min_rate * elapsed:
            raise FetchError(
                f"too slow: {total:,} bytes in {elapsed:.0f} s (under"
                f" {policy.min_rate / 1024:g} KiB/s)",
                retryable=True,
            )
    if declared is not None and declared.isdigit() and total < int(declared):
        raise FetchError(
            f"truncated download ({total:,} of {int(declared):,} bytes)", retryable=True
        )
    return b"".join(chunks)


def _connection_error(reason: object, url: str) -> FetchError:
    host = urlsplit(url).netloc
    if isinstance(reason, socket.gaierror):
        return FetchError(f"cannot resolve {host} (offline?)", unreachable=True)
    if isinstance(reason, OSError) and reason.errno in _UNREACHABLE_ERRNOS:
        return FetchError(
            f"cannot connect to {host} ({reason.strerror or reason})", unreachable=True
        )
    if isinstance(reason, TimeoutError | socket.timeout):
        return FetchError(f"timed out connecting to {host}", retryable=True, connect_timeout=True)
    return FetchError(f"cannot reach {host} ({_short(reason)})", retryable=True)


def _short(value: object) -> str:
    text = str(value) or type(value).__name__
    return text if len(text) <= 120 else text[:119] + "…"
