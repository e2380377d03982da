"""A data folder that cannot be written (a read-only mount) or is full (a tiny tmpfs).

Reading keeps working: `kb search` and `kb stats` on a built index, `ask` without a session file;
a built index is reported ready, never corrupt. Whatever must write fails with one line naming
the folder and the cause, exit code 1, no traceback: `kb build`, `catalog import`,
`ask --session`, a build on a full disk. The commands run in `readonly_driver` inside a private
mount namespace (`unshare`), so the mounts are real and vanish with the process; without
`unshare` a non-root user gets permission bits instead, and root (whom permission bits do not
stop) skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]
NO_TRACEBACK = "Traceback (most recent call last)"


@cache
def isolation() -> list[str] | None:
    """The command prefix that gives a private mount namespace here, or None."""
    if shutil.which("unshare") is None:
        return None
    for prefix in (["unshare", "-m"], ["unshare", "-r", "-m"]):
        probe = [
            *prefix,
            "sh",
            "-c",
            "mount -t tmpfs tmpfs /mnt 2>/dev/null || mount -t tmpfs tmpfs /tmp",
        ]
        if subprocess.run(probe, capture_output=True, timeout=10).returncode == 0:
            return prefix
    return None


def read_only_step(folder: Path) -> dict[str, str]:
    if isolation() is not None:
        return {"read_only": str(folder)}
    if os.geteuid() != 0:
        return {"chmod_read_only": str(folder)}
    pytest.skip("root without unshare: no way to make a folder read-only here")


def drive(tmp_path: Path, plan: list[dict[str, Any]], env: dict[str, str]) -> list[dict[str, Any]]:
    """Run `plan` in `readonly_driver` (in a private mount namespace when there is one)."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    command = [sys.executable, "-m", "tests.reliability.readonly_driver", str(plan_file)]
    proc = subprocess.run(
        [*(isolation() or []), *command],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def env(data_dir: Path, tmp_path: Path) -> dict[str, str]:
    return {
        "GPU_ADVISOR_DATA_DIR": str(data_dir),
        "HOME": str(tmp_path / "home"),
        "TMPDIR": str(tmp_path),  # the private copy of a read-only store goes here
        "PYTHONPATH": str(REPO),
    }


def last_line(record: dict[str, Any]) -> str:
    lines = record["err"].strip().splitlines()
    return lines[-1] if lines else ""


@pytest.mark.slow  # one process: builds the real index (shipped vectors), then six commands
def test_reading_works_and_writing_fails_clearly_on_a_read_only_folder(
    tmp_path: Path, data_dir: Path, env: dict[str, str]
) -> None:
    skypilot = REPO.parent / "shared" / "catalogs" / "skypilot" / "aws.csv"
    session = data_dir / "session.json"
    plan = [
        {"run": ["kb", "build"]},
        read_only_step(data_dir),
        {"run": ["kb", "search", "Are spot instances safe for training?", "--k", "1"]},
        {"run": ["kb", "stats", "--json"]},
        {"run": ["kb", "build"]},
        {"run": ["ask", "Are spot instances safe for training?"]},
        {"run": ["ask", "Are spot instances safe for training?", "--session", str(session)]},
        {"run": ["catalog", "import", str(skypilot), "--replace"]} if skypilot.exists() else {},
    ]
    built, search, stats, build, ask, ask_session, *imported = drive(tmp_path, plan, env)
    index = data_dir / "index"
    assert built["code"] == 0 and "index: ready" in built["out"]

    assert (search["code"], search["out"].startswith("1. ")) == (0, True), search
    assert "searching a private copy" in search["err"] and "corrupt" not in search["err"]
    report = json.loads(stats["out"])
    assert (report["status"], report["writable"]) == ("ready", False), "ready, not corrupt"

    assert build["code"] == 1
    assert last_line(build) == (
        f"error: cannot write to {index} (read-only file system): building the knowledge index "
        "needs to write there"
    )
    assert ask["code"] == 0 and "spot" in ask["out"].lower(), ask
    assert ask_session["code"] == 1
    assert "spot" in ask_session["out"].lower(), "the answer is shown before the save fails"
    assert last_line(ask_session) == (
        f"error: cannot write to {data_dir} (read-only file system): saving the session"
        " needs to write there"
    ), ask_session["err"]
    if imported:
        assert imported[0]["code"] == 1
        assert last_line(imported[0]) == (
            f"error: cannot write {data_dir / 'catalogs'} (read-only file system)"
        )
    for record in (search, stats, build, ask, ask_session, *imported):
        assert NO_TRACEBACK not in record["err"], record
        assert record["seconds"] < 15, f"{record['argv']} took {record['seconds']} s"
    assert not list(tmp_path.glob("gpu-advisor-index-*")), "the private copy was removed"


@pytest.mark.slow  # one process, a build that fills a 2 MB file system
def test_a_full_disk_fails_the_build_with_one_line(
    tmp_path: Path, data_dir: Path, env: dict[str, str]
) -> None:
    if isolation() is None:
        pytest.skip("no private mount namespace (unshare) to mount a small file system in")
    full = tmp_path / "full"
    plan = [{"full": str(full), "bytes": 2 * 2**20}, {"run": ["kb", "build"]}]
    (build,) = drive(tmp_path, plan, {**env, "GPU_ADVISOR_DATA_DIR": str(full)})
    assert build["code"] == 1 and NO_TRACEBACK not in build["err"]
    assert last_line(build) == (
        f"error: cannot write to {full / 'index'} (no space left on device): building the "
        "knowledge index needs to write there"
    )


@pytest.mark.slow  # one process: builds with an extra source, which then changes
def test_a_stale_index_in_a_read_only_folder_is_searched_as_it_is(
    tmp_path: Path, data_dir: Path, env: dict[str, str]
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kites.md").write_text("# Kites\n\nA kite needs steady wind.\n", encoding="utf-8")
    plan = [
        {"run": ["kb", "build", "--source", str(notes)]},
        read_only_step(data_dir),
    ]
    drive(tmp_path, plan, env)  # built; the mount ended with the process
    (notes / "kites.md").write_text("# Kites\n\nA kite needs a long line.\n", encoding="utf-8")
    plan = [read_only_step(data_dir), {"run": ["kb", "search", "kite long line", "--k", "1"]}]
    (search,) = drive(tmp_path, plan, env)
    assert search["code"] == 0 and "source: notes/kites.md" in search["out"]
    assert (
        "is out of date (content changed), but its folder cannot be written (read-only file "
        "system); searching it as it is"
    ) in search["err"]
