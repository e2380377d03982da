"""The dense half of the hybrid search, kept from ever stalling a search.

`DenseGuard.nearest(index, vector, n, where)` asks Chroma for the chunks nearest to a query
vector, the call bounded by `chroma_read_timeout_s` (`knowledge.index.chroma.bounded_call`). When
Chroma cannot answer (a server that is down, paused or broken; an embedded store that fails or
could not be opened) it raises `StoreUnavailableError` naming the cause, and for the next
`retry_s` seconds every call fails at once with the same cause, so a dead server costs one
timeout per `retry_s`, not one per search. After that the next call tries again, reconnecting
first when the index was opened without a collection; the caller ranks by BM25 alone meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings

from knowledge.config import KnowledgeConfig
from knowledge.errors import IndexCorruptError, StoreUnavailableError
from knowledge.index.chroma import bounded_call, server_failure
from knowledge.index.store import IndexStore, OpenIndex
from tools.redaction import redact, redact_url

__all__ = ["DENSE_RETRY_S", "DenseGuard"]

DENSE_RETRY_S = 30.0

log = logging.getLogger("knowledge")


class DenseGuard:
    """Bounded Chroma queries with a retry pause after a failure (see the module docstring).
    Safe to share between threads; `clock` is in seconds (tests pass a fake one)."""

    def __init__(
        self,
        config: KnowledgeConfig,
        store: IndexStore,
        embeddings: Embeddings,
        retry_s: float = DENSE_RETRY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.store = store
        self.embeddings = embeddings
        self.retry_s = retry_s
        self.clock = clock
        self._lock = threading.Lock()
        self._error: StoreUnavailableError | None = None
        self._retry_at = 0.0

    def start(self, index: OpenIndex) -> None:
        """Begin with `index`: when it opened without a collection, the pause starts now."""
        with self._lock:
            self._error, self._retry_at = None, 0.0
            if index.store_error is not None:
                self._trip(index.store_error)

    def nearest(
        self, index: OpenIndex, vector: list[float], n: int, where: dict[str, Any] | None
    ) -> list[str]:
        """Ids of the `n` chunks nearest to `vector` (restricted by `where`), best first."""
        with self._lock:
            if self._error is not None and self.clock() < self._retry_at:
                raise type(self._error)(str(self._error))
            if index.collection is None:
                self._reconnect(index)
        collection = index.collection
        try:
            result = bounded_call(
                lambda: collection.query(
                    query_embeddings=[vector], n_results=n, where=where, include=["distances"]
                ),
                self.config.chroma_read_timeout_s,
                self._what(index),
            )
        except Exception as exc:
            failure = self._failure(exc, index)
            with self._lock:
                self._trip(failure)
            raise failure from exc
        with self._lock:
            self._error = None
        return [str(chunk_id) for chunk_id in result["ids"][0]]

    def _reconnect(self, index: OpenIndex) -> None:
        """Open the collection of an index that opened without one (called under the lock)."""
        try:
            fresh = self.store.connect(index.folder, index.manifest, index.chunks, self.embeddings)
        except (StoreUnavailableError, IndexCorruptError) as exc:
            failure = (
                exc
                if isinstance(exc, StoreUnavailableError)
                else StoreUnavailableError(f"the vector store cannot be opened again: {exc}")
            )
            self._trip(failure)
            raise failure from None
        index.collection, index.client, index.scratch = (
            fresh.collection,
            fresh.client,
            fresh.scratch,
        )
        index.store_error = None
        log.info("knowledge index in %s: the vector store answers again", self.config.data_dir)

    def _trip(self, failure: StoreUnavailableError) -> None:
        if self._error is None:
            log.warning("%s; searching with BM25 alone for %g s", failure, self.retry_s)
        self._error, self._retry_at = failure, self.clock() + self.retry_s

    def _what(self, index: OpenIndex) -> str:
        if self.config.chroma_url:
            return f"Chroma server {redact_url(self.config.chroma_url)}"
        return f"the embedded Chroma store of {index.folder}"

    def _failure(self, exc: Exception, index: OpenIndex) -> StoreUnavailableError:
        """The store failure an exception from a query means."""
        if isinstance(exc, StoreUnavailableError):
            return exc
        if self.config.chroma_url:
            return server_failure(exc, self.config)
        log.debug("embedded Chroma query failed", exc_info=exc)
        return StoreUnavailableError(
            f"{self._what(index)} failed the search ({type(exc).__name__}: {redact(str(exc))})"
        )
