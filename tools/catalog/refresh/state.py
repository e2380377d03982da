"""Where refreshed prices live: one snapshot per provider and source, and what was fetched when.

    <data_dir>/prices/<source>-<provider>.csv   the last good copy, our CSV (every Instance field)
    <data_dir>/prices/state.json                per snapshot: URL, version, header, row counts,
                                                download and check times, the last error

Both are written with `tools.files.write_atomic`, the snapshot first: a refresh that fails or is
killed leaves the previous snapshot whole. The folder is apart from `<data_dir>/catalogs/`, where
the user's own imports live, so a refresh can never overwrite one. A lock file keeps two
refreshes (the app's background thread and a CLI run) from interleaving their state writes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from tools.catalog.bounds import read_bounded_text
from tools.files import write_atomic

PRICES_SUBDIR = "prices"
STATE_FILE = "state.json"
_STATE_MAX_BYTES = 8 * 2**20
_LOCK = threading.Lock()


class SnapshotState(BaseModel):
    """What is known about one provider's snapshot (absent fields: never fetched)."""

    source: str
    provider: str
    url: str | None = None
    version: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    header: list[str] = Field(default_factory=list)
    rows_read: int = 0
    instances: int = 0
    skipped: dict[str, int] = Field(default_factory=dict)
    unknown_gpus: dict[str, int] = Field(default_factory=dict)
    fetched_at: datetime | None = None  # download time of the snapshot in use
    checked_at: datetime | None = None  # last time the source confirmed or replaced it
    last_error: str | None = None
    last_error_at: datetime | None = None


def prices_dir(data_dir: Path) -> Path:
    return data_dir / PRICES_SUBDIR


def snapshot_path(data_dir: Path, key: str) -> Path:
    """The snapshot file of plan key '<source>-<provider>'."""
    return prices_dir(data_dir) / f"{key}.csv"


def snapshot_paths(data_dir: Path) -> list[Path]:
    """Every snapshot on disk, sorted by name."""
    folder = prices_dir(data_dir)
    return sorted(folder.glob("*.csv")) if folder.is_dir() else []


def read_states(data_dir: Path) -> dict[str, SnapshotState]:
    """Plan key -> state; an unreadable or corrupt state file reads as empty (the snapshots
    themselves still load, and the next refresh downloads afresh)."""
    path = prices_dir(data_dir) / STATE_FILE
    if not path.is_file():
        return {}
    try:
        raw = json.loads(read_bounded_text(path, _STATE_MAX_BYTES))
        return {key: SnapshotState.model_validate(value) for key, value in raw.items()}
    except (ValueError, ValidationError, AttributeError, OSError):
        return {}


def write_states(data_dir: Path, states: dict[str, SnapshotState]) -> Path:
    data = {key: states[key].model_dump(mode="json") for key in sorted(states)}
    return write_atomic(prices_dir(data_dir) / STATE_FILE, json.dumps(data, indent=1) + "\n")


class RefreshBusyError(RuntimeError):
    """Another refresh holds the lock on this data folder."""


@contextmanager
def refresh_lock(data_dir: Path) -> Iterator[None]:
    """Exclusive for one refresh per data folder: across threads, and across processes where
    the platform has fcntl. Raises RefreshBusyError instead of waiting."""
    if not _LOCK.acquire(blocking=False):
        raise RefreshBusyError("a refresh is already running in this process")
    try:
        folder = prices_dir(data_dir)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a+b") as handle:
            _lock_file(handle.fileno())
            yield
    finally:
        _LOCK.release()


def _lock_file(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: the in-process lock still holds
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise RefreshBusyError("another process is refreshing this data folder") from None
