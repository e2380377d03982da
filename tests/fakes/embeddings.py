"""Deterministic embeddings for plumbing tests: no model, no download, the same vector every run."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from langchain_core.embeddings import Embeddings


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings: each lowercase word adds +-1 to hashed dimensions.

    Texts sharing words get similar vectors, so dense ranking is meaningful without a model.
    `fail_after` makes `embed_documents` raise once that many texts were embedded (failed builds).
    """

    def __init__(self, dim: int = 64, salt: str = "", fail_after: int | None = None) -> None:
        self.dim = dim
        self.salt = salt
        self.fail_after = fail_after
        self.embedded = 0
        self.embedder_id = f"hash-{dim}{'-' + salt if salt else ''}"

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dim, dtype=np.float64)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b((self.salt + word).encode(), digest_size=8).digest()
            vec[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else np.full(self.dim, self.dim**-0.5)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.fail_after is not None and self.embedded + len(texts) > self.fail_after:
            raise RuntimeError("simulated embedding failure")
        self.embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
