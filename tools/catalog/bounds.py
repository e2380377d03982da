"""Bounded input for catalog files: what is read, how much of it, and how deep YAML may nest.

Every catalog file (our CSV/YAML, SkyPilot CSVs, saved imports, refreshed snapshots) is opened
through `open_bounded`: it must be a regular file (a symlink to /dev/zero or a FIFO is refused
before one byte is read), its size is checked against the cap of its kind before reading, and the
reader stops at the cap even if the file grows meanwhile. YAML goes through `load_yaml`, a safe
loader that refuses more than `MAX_YAML_ALIASES` aliases (a 593-byte "billion laughs" file) and
nesting deeper than `MAX_YAML_DEPTH` (100,000 nested lists raised RecursionError before).

Caps (bytes): CSV files stream row by row, so theirs is generous; YAML is parsed whole (PyYAML
holds the node tree, about 40x the text), so its cap is smaller.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import yaml

from tools.errors import InvalidInputError

MAX_CSV_BYTES = 512 * 2**20  # a whole cloud's SkyPilot vms.csv (Azure) is under 100 MB
MAX_YAML_BYTES = 16 * 2**20  # the built-in catalog is 90 KB; 16 MiB is ~50k rows of our YAML
MAX_ROWS = 1_000_000  # data rows per file, whatever its size
MAX_YAML_DEPTH = 32  # our layout nests 4 deep (file > instances > row > regions)
MAX_YAML_ALIASES = 32  # the curated files use none; 9 levels of 9 "laughs" take 81


class CatalogFileError(InvalidInputError):
    """A catalog file (or one row of it) is not valid; nothing from the file was used."""


def check_regular_file(path: Path, max_bytes: int) -> int:
    """The size of `path` in bytes, after checking it is a regular file of at most `max_bytes`
    (symlinks are followed: the target must be regular)."""
    try:
        info = path.stat()
    except OSError as exc:
        raise CatalogFileError(
            "catalog file", str(path), f"a readable file ({exc.strerror})"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise CatalogFileError(
            "catalog file", str(path), f"a regular file (this is {_kind(info.st_mode)})"
        )
    if info.st_size > max_bytes:
        raise CatalogFileError(
            "catalog file",
            str(path),
            f"a file of at most {max_bytes / 2**20:g} MiB (this one is"
            f" {info.st_size / 2**20:,.1f} MiB)",
        )
    return info.st_size


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class _CappedReader(io.RawIOBase):
    """A binary stream that raises CatalogFileError past `limit` bytes."""

    def __init__(self, raw: IO[bytes], limit: int, name: str) -> None:
        self._raw, self._left, self._limit, self._name = raw, limit, limit, name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        count = self._raw.readinto(view[: max(1, min(len(view), self._left + 1))])  # type: ignore[attr-defined]
        count = count or 0
        self._left -= count
        if self._left < 0:
            raise CatalogFileError(
                "catalog file", self._name, f"at most {self._limit / 2**20:g} MiB (it grew)"
            )
        return count


@contextmanager
def open_bounded(path: Path, max_bytes: int, *, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """A text handle on a regular file of at most `max_bytes` (checked first, enforced while
    reading). Newlines are kept as in the file (csv wants newline='')."""
    check_regular_file(path, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in cannot block open
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as raw:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):  # swapped after the first check
            raise CatalogFileError("catalog file", str(path), "a regular file")
        capped = io.BufferedReader(_CappedReader(raw, max_bytes, str(path)))
        text = io.TextIOWrapper(capped, encoding=encoding, newline="")
        try:
            yield text
        except UnicodeDecodeError as exc:
            raise CatalogFileError(
                "catalog file", str(path), f"UTF-8 text ({exc.reason})"
            ) from None


def read_bounded_text(path: Path, max_bytes: int) -> str:
    """The whole text of a regular file of at most `max_bytes`."""
    with open_bounded(path, max_bytes) as handle:
        try:
            return handle.read()
        except UnicodeDecodeError as exc:
            raise CatalogFileError(
                "catalog file", str(path), f"UTF-8 text ({exc.reason})"
            ) from None


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a cap on aliases and on nesting depth."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_YAML_ALIASES} aliases (*name)")
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise yaml.YAMLError(f"nesting deeper than {MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML text with the bounded safe loader; CatalogFileError names what was wrong."""
    if len(text) > MAX_YAML_BYTES:
        raise CatalogFileError(
            source, f"{len(text):,} characters", f"at most {MAX_YAML_BYTES / 2**20:g} MiB of YAML"
        )
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc) or type(exc).__name__
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CatalogFileError(
            source, "unparseable YAML", f"valid YAML ({problem}{where})"
        ) from None
    except RecursionError:
        raise CatalogFileError(source, "YAML", f"nesting under {MAX_YAML_DEPTH} levels") from None
    finally:
        loader.dispose()
