"""The whole published set: the shared development cases and the project's own additions.

Two origins:
- `dev`: ../shared/calibration (read-only), the set the models were developed on;
- `added`: benchmarks/published_runs/added/*.json, cases gathered from sources not in the dev
  set, each with its citation (same layout; `check_added` checks them without estimating).

The added cases are split once, by publication, into a half the project may tune on (`tune`)
and a half reported once (`frozen`): a publication (repository + file, or page) goes to the
frozen half when the first byte of the SHA-256 of its name is odd. The rule reads nothing but
the citation, so it was fixed before any added case was scored and cannot follow the results.

A case's *source* for leave-one-source-out is its repository (a web page: its address): the
runs of one project share its measuring code and habits, so a constant fitted on one file of a
project is not fitted "without" the others.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchmarks.published_runs.cases import shared_calibration

Origin = Literal["dev", "tune", "frozen"]
ADDED = Path(__file__).with_name("added")
MEMORY_FILE = "gpu_memory_published.json"
THROUGHPUT_FILE = "training_throughput_published.json"
ORIGINS: tuple[Origin, ...] = ("dev", "tune", "frozen")


@dataclass(frozen=True)
class Tagged:
    """One raw case with where it came from."""

    raw: dict[str, Any]
    origin: Origin
    file: str  # the evidence file it was read from

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def source(self) -> str:
        return source_of(self.raw)


def source_of(raw: dict[str, Any]) -> str:
    """The leave-one-source-out unit: the repository, or a web page's address."""
    source = raw.get("source") or {}
    repo = str(source.get("repo") or "")
    if repo in ("", "web"):
        return str(source.get("path") or source.get("url") or raw.get("id"))
    return repo


def publication_of(raw: dict[str, Any]) -> str:
    """The split unit: repository and file (or the page)."""
    source = raw.get("source") or {}
    return f"{source.get('repo')}:{source.get('path') or source.get('url')}"


def split_of(raw: dict[str, Any]) -> Origin:
    """tune or frozen for an added case, from its publication's name alone."""
    digest = hashlib.sha256(publication_of(raw).encode("utf-8")).digest()
    return "frozen" if digest[0] % 2 else "tune"


def _cases(path: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return cases


def _is_kind(raw: dict[str, Any], kind: str) -> bool:
    if kind == "memory":
        return "gpu_advisor_flags" in raw
    if kind == "throughput":
        return "expected" in raw
    return "settings" in raw  # image-model cases (benchmarks/vision_published layout)


def evidence(
    kind: Literal["memory", "throughput", "vision"],
    origins: Iterable[Origin] = ("dev", "tune"),
    shared: Path | None = None,
    added: Path = ADDED,
) -> list[Tagged]:
    """Every case of `kind` from the chosen origins, dev first, then the added files by name."""
    wanted = set(origins)
    found: list[Tagged] = []
    if "dev" in wanted:
        for path in _dev_files(kind, shared or shared_calibration()):
            found += [Tagged(raw, "dev", path.name) for raw in _cases(path)]
    if wanted - {"dev"} and added.is_dir():
        for path in sorted(added.glob("*.json")):
            for raw in _cases(path):
                origin = split_of(raw)
                if _is_kind(raw, kind) and origin in wanted:
                    found.append(Tagged(raw, origin, path.name))
    return found


def _dev_files(kind: str, shared: Path) -> list[Path]:
    if kind == "vision":
        path = Path(__file__).parents[1] / "vision_published" / "cases.json"
    else:
        path = shared / (MEMORY_FILE if kind == "memory" else THROUGHPUT_FILE)
    return [path] if path.is_file() else []
