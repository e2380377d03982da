"""What goes into a Chroma collection: our embeddings behind Chroma's embedding-function interface,
and chunks added with their vectors and metadata in batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from knowledge.documents.chunking import Chunk
from knowledge.errors import IndexCorruptError
from knowledge.index.embcache import Embed

__all__ = ["ADD_BATCH", "EMBED_BATCH", "ChromaEmbeddingAdapter", "Progress", "embed_into"]

EMBED_BATCH = 16
ADD_BATCH = 512

Progress = Callable[[int, int], None]


class ChromaEmbeddingAdapter:
    """Chroma embedding function backed by our LangChain embeddings, so Chroma never falls back to
    its default function (which downloads an ONNX model). Vectors are passed explicitly anyway."""

    def __init__(self, embeddings: Embeddings, embedder: str) -> None:
        self._embeddings = embeddings
        self._embedder = embedder

    def __call__(self, input: Sequence[str]) -> list[Any]:
        import numpy as np

        return [
            np.asarray(v, dtype=np.float32) for v in self._embeddings.embed_documents(list(input))
        ]

    def embed_query(self, input: Sequence[str]) -> list[Any]:
        import numpy as np

        return [np.asarray(self._embeddings.embed_query(t), dtype=np.float32) for t in input]

    @staticmethod
    def name() -> str:
        return "gpu-advisor"

    def get_config(self) -> dict[str, Any]:
        return {"embedder_id": self._embedder}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChromaEmbeddingAdapter:
        """Chroma calls this when it reads a stored collection; the placeholder refuses to embed
        (the real function is always passed explicitly) instead of Chroma's downloading default."""
        return ChromaEmbeddingAdapter(_NoEmbeddings(), str(config.get("embedder_id", "")))

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]


class _NoEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise IndexCorruptError("no embedding function was passed for this Chroma collection")

    def embed_query(self, text: str) -> list[float]:
        raise IndexCorruptError("no embedding function was passed for this Chroma collection")


def embed_into(
    collection: Any, chunks: Sequence[Chunk], embed: Embed, progress: Progress | None
) -> int:
    """Embed chunks in small batches (progress after each), add them to Chroma in large ones
    (each add is a transaction); returns the embedding dimension."""
    total = len(chunks)
    if progress is not None:
        progress(0, total)
    pending: list[tuple[Chunk, list[float]]] = []
    dimension = 0
    for start in range(0, total, EMBED_BATCH):
        batch = list(chunks[start : start + EMBED_BATCH])
        vectors = embed([chunk.index_text for chunk in batch])
        dimension = len(vectors[0])
        pending.extend(zip(batch, vectors, strict=True))
        if len(pending) >= ADD_BATCH or start + EMBED_BATCH >= total:
            _add(collection, pending)
            pending = []
        if progress is not None:
            progress(start + len(batch), total)
    if collection.count() != total:
        raise IndexCorruptError(f"Chroma stored {collection.count()} of {total} chunks")
    return dimension or 1


def _add(collection: Any, items: list[tuple[Chunk, list[float]]]) -> None:
    collection.add(
        ids=[chunk.id for chunk, _ in items],
        embeddings=[vector for _, vector in items],
        documents=[chunk.text for chunk, _ in items],
        metadatas=[_metadata(chunk) for chunk, _ in items],
    )


def _metadata(chunk: Chunk) -> dict[str, str | int]:
    return {
        "topic": chunk.topic or "",
        "lang": chunk.lang,
        "kind": chunk.kind,
        "title": chunk.title,
        "source": chunk.source,
        "n": chunk.n,
    }
