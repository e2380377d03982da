"""A persistent cache of document vectors per embedder, so a rebuild only embeds changed texts.

One SQLite file per embedder under `<data dir>/embedding-cache/`, keyed by the sha256 of the text.
The cache is an optimisation only: if it is unreadable it is logged, deleted and started afresh.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger("knowledge")

Embed = Callable[[list[str]], list[list[float]]]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors of one embedder, stored as float32 blobs keyed by text hash."""

    def __init__(self, folder: Path, embedder: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(embedder.encode("utf-8")).hexdigest()[:16]
        self.path = folder / f"{name}.sqlite"
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
        """Vectors of `texts`: cached ones read back, the others computed by `embed` and stored."""
        keys = [_key(t) for t in texts]
        found = self._lookup(set(keys))
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            fresh = embed([texts[i] for i in missing])
            rows = []
            for i, vector in zip(missing, fresh, strict=True):
                found[keys[i]] = list(vector)
                rows.append((keys[i], np.asarray(vector, dtype=np.float32).tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
        return [found[key] for key in keys]

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
