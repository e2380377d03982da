"""Writing files so that a reader never sees half of one: a temporary file beside the target,
flushed to disk, then renamed over it (`os.replace` is atomic on POSIX and Windows).

Every file the project writes (catalog snapshots and imports, session files, the knowledge
index pointer, embedding caches) goes through `write_atomic`; a failed write leaves the old file
as it was and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_path", "write_atomic"]


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`: write it inside the block; on success it replaces `path`
    (the folder is created first), on an error it is removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, data: str | bytes | Callable[[IO[bytes]], None]) -> Path:
    """Write `data` (text as UTF-8, bytes, or a function writing to a binary handle) to `path`
    atomically; returns `path`."""
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        if callable(data):
            data(handle)
        else:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        handle.flush()
    return path
