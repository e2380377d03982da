"""Runs `gpu-advisor` commands against a data folder that becomes read-only (or full) mid-run.

    python -m tests.reliability.readonly_driver PLAN.json

Started by tests/reliability/test_readonly.py inside a private mount namespace (`unshare -m`,
`unshare -r -m` without root), so its mounts vanish with the process and touch nothing else. The
plan is a list of steps: {"run": [argv...]} runs `assistant.cli.main(argv)` in this process and
records its exit code, stdout, stderr and seconds; {"read_only": DIR} bind-mounts DIR over itself
read-only; {"chmod_read_only": DIR} removes write permission instead (for a non-root user where
mounts are not allowed); {"full": DIR, "bytes": N} mounts an N-byte tmpfs on DIR. The records are
printed as one JSON list on the real stdout at the end.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _chmod_read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _run(argv: list[str]) -> dict[str, Any]:
    from assistant.cli import main

    for handler in list(logging.getLogger("knowledge").handlers):  # `kb` adds one on sys.stderr
        logging.getLogger("knowledge").removeHandler(handler)
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return {
        "argv": argv,
        "code": code,
        "out": out.getvalue(),
        "err": err.getvalue(),
        "seconds": round(time.monotonic() - started, 2),
    }


def main(plan_path: str) -> int:
    records: list[dict[str, Any]] = []
    for step in json.loads(Path(plan_path).read_text(encoding="utf-8")):
        if "run" in step:
            records.append(_run(step["run"]))
        elif "read_only" in step:
            _mount("--bind", step["read_only"], step["read_only"])
            _mount("-o", "remount,bind,ro", step["read_only"])
        elif "chmod_read_only" in step:
            _chmod_read_only(Path(step["chmod_read_only"]))
        elif "full" in step:
            os.makedirs(step["full"], exist_ok=True)
            _mount("-t", "tmpfs", "-o", f"size={step['bytes']}", "tmpfs", step["full"])
    sys.__stdout__.write(json.dumps(records) + "\n")  # type: ignore[union-attr]
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
