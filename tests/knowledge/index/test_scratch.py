"""The private copy of an embedded store that cannot be written (real read-only mounts are in
tests/reliability/test_readonly.py; here the probe's verdict is given)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from knowledge.errors import StoreUnavailableError
from knowledge.index.scratch import read_only_copy, unwritable_cause


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "v-1" / "chroma"
    (store / "segment").mkdir(parents=True)
    (store / "chroma.sqlite3").write_bytes(b"db" * 100)
    (store / "segment" / "data_level0.bin").write_bytes(b"\0" * 50)
    return store


def test_a_writable_store_is_opened_in_place(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert unwritable_cause(store) is None
    assert read_only_copy(store) is None
    assert read_only_copy(tmp_path / "missing") is None, "no store: nothing to copy"


def test_an_unwritable_store_is_copied_writable_and_removed_after(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store / "chroma.sqlite3").chmod(stat.S_IRUSR)
    scratch = read_only_copy(store, probe=lambda _: "read-only file system")
    assert scratch is not None
    copy = Path(scratch.name) / "chroma"
    assert (copy / "chroma.sqlite3").read_bytes() == b"db" * 100
    assert (copy / "segment" / "data_level0.bin").stat().st_size == 50
    assert (copy / "chroma.sqlite3").stat().st_mode & stat.S_IWUSR, "the copy can be written"
    scratch.cleanup()
    assert not copy.exists()


def test_a_store_too_large_to_copy_is_unavailable(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(
        StoreUnavailableError,
        match=rf"^the embedded Chroma store in {store} cannot be written \(read-only file "
        r"system\) and is too large \(0 MiB\) to search from a private copy$",
    ):
        read_only_copy(store, limit=100, probe=lambda _: "read-only file system")
