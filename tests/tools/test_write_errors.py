"""Failed writes as one clear error: the folder, the cause, what needed to write there.

Real read-only mounts and full disks are in tests/reliability/test_readonly.py; these tests raise
the OSErrors a file system gives, so every errno the helper knows is covered on any machine."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tools.errors import (
    AdvisorError,
    NotWritableError,
    needs_write_access,
    require_writable,
    write_failure,
    write_probe,
)


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "operation not permitted"),
        (errno.ENOSPC, "no space left on device"),
        (errno.EDQUOT, "disk quota exceeded"),
    ],
)
def test_a_failed_write_names_folder_cause_and_purpose(
    tmp_path: Path, code: int, cause: str
) -> None:
    with (
        pytest.raises(NotWritableError) as caught,
        needs_write_access(tmp_path, "saving the session"),
    ):
        raise OSError(code, "os text", str(tmp_path / "x.json"))
    assert str(caught.value) == (
        f"cannot write to {tmp_path} ({cause}): saving the session needs to write there"
    )
    assert isinstance(caught.value, AdvisorError) and isinstance(caught.value, OSError)
    assert "\n" not in str(caught.value), "one line"


def test_other_errors_pass_unchanged(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), needs_write_access(tmp_path, "x"):
        raise FileNotFoundError(errno.ENOENT, "gone")
    with pytest.raises(ValueError, match="a bug"), needs_write_access(tmp_path, "x"):
        raise ValueError("a bug")
    assert write_failure(OSError(errno.ENOENT, "gone")) is None


def test_probe_and_require_on_a_writable_folder(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper"
    assert write_probe(target) is None, "judged by its nearest existing parent"
    require_writable(target, "building")
    assert target.is_dir() and list(target.iterdir()) == [], "created, probe file removed"
