"""A downloaded copy after parsing, and the checks it must pass before it replaces the last one.

A new copy is refused (the last good copy stays) when it has no usable GPU instance, when its
header differs from the last good copy's (a changed format would be misread silently), or when it
has fewer than (1 - max_drop) of the last good copy's data rows (a half-published or truncated
file); `accept_changes` lets a user take a header change or a large drop they have checked.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tools.catalog.instances import Catalog
from tools.catalog.refresh.state import SnapshotState

_UNKNOWN = re.compile(r"unknown accelerator '(.*)'")


class SnapshotError(Exception):
    """A downloaded copy that cannot be used; the message is one line."""


@dataclass(frozen=True)
class NotModified:
    """The source still publishes the copy already held."""

    version: str | None


@dataclass(frozen=True)
class Download:
    """A downloaded copy: its version, where it came from, its bytes and validators."""

    version: str
    url: str
    body: bytes
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class Parsed:
    """A parsed copy: its header, data rows, instances and the rows skipped by reason."""

    header: list[str]
    rows_read: int
    catalog: Catalog
    skipped: dict[str, int]
    unknown_gpus: dict[str, int]


def unknown_gpus(skipped: Counter[str] | dict[str, int]) -> dict[str, int]:
    """GPU name -> rows, from skip reasons "unknown accelerator 'X'"."""
    found: dict[str, int] = {}
    for reason, count in skipped.items():
        match = _UNKNOWN.fullmatch(reason)
        if match:
            found[match.group(1)] = found.get(match.group(1), 0) + count
    return found


def check_copy(
    parsed: Parsed, last: SnapshotState | None, max_drop: float, accept_changes: bool
) -> None:
    """Raise SnapshotError when `parsed` must not replace the last good copy."""
    if not len(parsed.catalog):
        raise SnapshotError(f"no usable GPU instance in {parsed.rows_read:,} rows")
    if last is None or not last.header or accept_changes:
        return
    if parsed.header != last.header:
        added = [c for c in parsed.header if c not in last.header]
        removed = [c for c in last.header if c not in parsed.header]
        change = ", ".join(
            part
            for part in (
                f"added {', '.join(added)}" if added else "",
                f"removed {', '.join(removed)}" if removed else "",
                "reordered" if not added and not removed else "",
            )
            if part
        )
        raise SnapshotError(f"header changed ({change}); pass --accept-changes to take it")
    floor = last.rows_read * (1 - max_drop)
    if last.rows_read and parsed.rows_read < floor:
        raise SnapshotError(
            f"{parsed.rows_read:,} rows where the last good copy had {last.rows_read:,} (more"
            f" than {max_drop:.0%} dropped); pass --accept-changes to take it"
        )
