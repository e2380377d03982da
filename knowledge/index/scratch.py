"""Searching an embedded Chroma store that this process cannot write.

Chroma's embedded client writes to its SQLite database even to read it ("attempt to write a
readonly database"), so an index on a read-only mount, or in another user's folder, cannot be
opened in place. `read_only_copy(store)` then copies the store (a few MB for the built-in
knowledge base) into a private temporary folder, which the caller opens instead and removes when
done. The index on disk is untouched and stays current.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from knowledge.errors import StoreUnavailableError
from tools.errors import write_probe

__all__ = ["READ_ONLY_COPY_LIMIT", "read_only_copy"]

READ_ONLY_COPY_LIMIT = 512 * 2**20  # bytes; a larger read-only store is searched by BM25 alone
DATABASE = "chroma.sqlite3"

log = logging.getLogger("knowledge")


def unwritable_cause(store: Path) -> str | None:
    """Why the embedded store folder `store` cannot be written ("read-only file system", ...),
    or None when it can."""
    cause = write_probe(store)
    database = store / DATABASE
    if cause is None and database.exists() and not os.access(database, os.W_OK):
        cause = "its database file is read-only"
    return cause


def read_only_copy(
    store: Path,
    limit: int = READ_ONLY_COPY_LIMIT,
    probe: Callable[[Path], str | None] = unwritable_cause,
) -> tempfile.TemporaryDirectory[str] | None:
    """A private writable copy of the embedded store `store` (as `<copy>/chroma`) when this
    process cannot write `store` (`probe` says why); None when it can or when there is no such
    folder (the caller then opens it in place). StoreUnavailableError when the store is over
    `limit` bytes or the copy fails (the temporary folder is full or read-only too)."""
    if not store.is_dir():
        return None
    cause = probe(store)
    if cause is None:
        return None
    files = [p for p in store.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    if size > limit:
        raise StoreUnavailableError(
            f"the embedded Chroma store in {store} cannot be written ({cause}) and is too large "
            f"({size / 2**20:.0f} MiB) to search from a private copy"
        )
    scratch = tempfile.TemporaryDirectory(prefix="gpu-advisor-index-")
    try:
        _copy_files(store, files, Path(scratch.name) / "chroma")
    except OSError as exc:
        scratch.cleanup()
        raise StoreUnavailableError(
            f"the embedded Chroma store in {store} cannot be written ({cause}) nor copied to "
            f"{tempfile.gettempdir()} ({exc.strerror or exc})"
        ) from exc
    log.info("Chroma store in %s cannot be written (%s); searching a private copy", store, cause)
    return scratch


def _copy_files(source: Path, files: Sequence[Path], target: Path) -> None:
    """Copy `files` (under `source`) to the same places under `target`, contents only: the
    copies get this process's default permissions, so a read-only original yields a writable
    copy."""
    target.mkdir(parents=True)
    for path in files:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
