"""The on-disk index: versioned build folders, a manifest, an atomic pointer, the Chroma collection.

Layout under `KnowledgeConfig.data_dir`:

    current.json            pointer {"version": "v-..."}; replaced atomically (os.replace)
    v-<hash>-<nonce>/       one complete build
        chunks.jsonl        every chunk (shown text, indexed text, metadata)
        chroma/             the embedded Chroma store (absent when a Chroma server is used)
        manifest.json       written last: content hash, embedder id, counts, checksums
    embedding-cache/        vectors per embedder by text hash: rebuilds embed changed texts only

Vectors of the built-in entries also ship with the package (`knowledge/data/`, see
`knowledge.embcache`), so a first build with a shipped embedder embeds nothing.

A build goes into a new folder and only becomes current when the pointer is swapped, so a failed
or interrupted build leaves the previous index in use. Opening checks the pointer, the manifest, the
chunk file checksum and the collection size, and raises `IndexCorruptError` saying what is wrong.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field, ValidationError

from knowledge.chunking import Chunk
from knowledge.config import KnowledgeConfig
from knowledge.embcache import SEED_DIR, Embed, EmbeddingCache, SeedVectors
from tools.errors import AdvisorError, InvalidInputError

INDEX_FORMAT = 3
POINTER = "current.json"
MANIFEST = "manifest.json"
CHUNKS = "chunks.jsonl"
CACHE_DIR = "embedding-cache"
EMBEDDED_COLLECTION = "gpu-advisor-kb"
EMBED_BATCH = 16
ADD_BATCH = 512
CONNECT_TIMEOUT_S = 5.0

Progress = Callable[[int, int], None]

log = logging.getLogger("knowledge")


class IndexCorruptError(AdvisorError):
    """The index on disk is unreadable, half-written or inconsistent; the message says where."""


class Manifest(BaseModel):
    """What a build contains; the index is reused only when hash and embedder id both match."""

    format: int = INDEX_FORMAT
    content_hash: str = Field(description="sha256 over every chunk's id and content hash")
    embedder_id: str
    dimension: int = Field(gt=0, description="embedding length, floats")
    chunk_count: int = Field(ge=0)
    chunks_sha256: str = Field(description="sha256 of chunks.jsonl")
    collection: str = Field(description="Chroma collection name")
    extra_sources: list[str] = Field(default_factory=list, description="folders ingested too")
    built_at: str = Field(description="UTC time the build finished, ISO 8601")
    build_seconds: float = Field(ge=0, description="wall time of the build, seconds")


@dataclass
class OpenIndex:
    """A verified index: its manifest, chunks (in stored order) and live Chroma collection."""

    folder: Path
    manifest: Manifest
    chunks: list[Chunk]
    collection: Any
    client: Any

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()


def content_hash(chunks: Sequence[Chunk]) -> str:
    """sha256 over the sorted (chunk id, chunk content hash) pairs."""
    digest = hashlib.sha256()
    for chunk_id, chunk_hash in sorted((c.id, c.content_hash) for c in chunks):
        digest.update(f"{chunk_id}\0{chunk_hash}\n".encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


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


def _check_reachable(shown: str, host: str, port: int) -> None:
    """Fail fast, with the address in the message, instead of letting Chroma's client (which has
    no timeout) wait on a host that does not answer."""
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise InvalidInputError(
            "chroma_url", shown, f"a reachable Chroma server (connecting failed: {exc})"
        ) from exc


def make_client(config: KnowledgeConfig, folder: Path) -> Any:
    """A Chroma HttpClient when `chroma_url` is set, else a PersistentClient in `folder/chroma`."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if config.chroma_url:
        url = urlparse(config.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise InvalidInputError("chroma_url", config.chroma_url, "http(s)://host:port")
        port = url.port or (443 if url.scheme == "https" else 8000)
        _check_reachable(config.chroma_url, url.hostname, port)
        try:
            return chromadb.HttpClient(
                host=url.hostname, port=port, ssl=url.scheme == "https", settings=settings
            )
        except ValueError as exc:  # Chroma's client says only ValueError when the server is wrong
            raise InvalidInputError(
                "chroma_url", config.chroma_url, f"a Chroma server ({exc or 'no answer'})"
            ) from exc
    return chromadb.PersistentClient(path=str(folder / "chroma"), settings=settings)


class IndexStore:
    """Builds, publishes, opens and garbage-collects index versions under one data folder.

    `seed_dir` holds the shipped seed vectors consulted before embedding (None: no seed)."""

    def __init__(self, config: KnowledgeConfig, seed_dir: Path | None = SEED_DIR) -> None:
        self.config = config
        self.root = config.data_dir
        self.seed_dir = seed_dir

    # -- reading -----------------------------------------------------------------------------

    def current_folder(self) -> Path | None:
        """The folder the pointer names; None when no index was ever published."""
        pointer = self.root / POINTER
        if not pointer.exists():
            return None
        try:
            version = json.loads(pointer.read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexCorruptError(f"pointer {pointer} is unreadable ({exc})") from exc
        if not isinstance(version, str) or "/" in version or not version.startswith("v-"):
            raise IndexCorruptError(f"pointer {pointer} names no version folder: {version!r}")
        return self.root / version

    def read_manifest(self, folder: Path) -> Manifest:
        path = folder / MANIFEST
        try:
            manifest = Manifest.model_validate_json(path.read_bytes())
        except (OSError, ValidationError) as exc:
            raise IndexCorruptError(f"manifest {path} is missing or invalid") from exc
        if manifest.format != INDEX_FORMAT:
            raise IndexCorruptError(f"manifest {path} has format {manifest.format}")
        return manifest

    def open(self, embeddings: Embeddings) -> OpenIndex | None:
        """Open and check the current index: None if there is none, IndexCorruptError if broken."""
        folder = self.current_folder()
        if folder is None:
            return None
        manifest = self.read_manifest(folder)
        chunks = self._read_chunks(folder, manifest)
        try:
            client = make_client(self.config, folder)
            collection = client.get_collection(
                manifest.collection,
                embedding_function=ChromaEmbeddingAdapter(embeddings, manifest.embedder_id),
            )
            count = collection.count()
        except InvalidInputError:
            raise
        except Exception as exc:
            raise IndexCorruptError(
                f"Chroma collection {manifest.collection} unusable: {exc}"
            ) from exc
        if count != manifest.chunk_count:
            client.close()
            raise IndexCorruptError(
                f"Chroma collection holds {count} vectors, manifest says {manifest.chunk_count}"
            )
        return OpenIndex(folder, manifest, chunks, collection, client)

    def _read_chunks(self, folder: Path, manifest: Manifest) -> list[Chunk]:
        path = folder / CHUNKS
        try:
            if _file_sha256(path) != manifest.chunks_sha256:
                raise IndexCorruptError(f"{path} does not match its checksum in the manifest")
            lines = path.read_text(encoding="utf-8").splitlines()
            chunks = [Chunk.model_validate_json(line) for line in lines]
        except (OSError, ValidationError) as exc:
            raise IndexCorruptError(f"{path} is missing or unreadable") from exc
        if len(chunks) != manifest.chunk_count:
            raise IndexCorruptError(f"{path} has {len(chunks)} chunks, manifest says more/less")
        return chunks

    # -- writing -----------------------------------------------------------------------------

    def build(
        self,
        chunks: Sequence[Chunk],
        embeddings: Embeddings,
        embedder: str,
        extra_sources: Sequence[str] = (),
        progress: Progress | None = None,
    ) -> Manifest:
        """Embed and store `chunks` in a new version folder, then make it current atomically."""
        started = time.perf_counter()
        digest = content_hash(chunks)
        self.root.mkdir(parents=True, exist_ok=True)
        folder = self.root / f"v-{digest[:12]}-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
        collection_name = self._collection_name(folder)
        client: Any = None
        try:
            chunk_lines = "".join(c.model_dump_json() + "\n" for c in chunks)
            _write_atomic(folder / CHUNKS, chunk_lines)
            client = make_client(self.config, folder)
            adapter = ChromaEmbeddingAdapter(embeddings, embedder)
            collection = client.create_collection(
                collection_name, embedding_function=adapter, metadata={"hnsw:space": "cosine"}
            )
            seed = SeedVectors.find(embedder, self.seed_dir) if self.config.seed_vectors else None
            cache = EmbeddingCache(self.root / CACHE_DIR, embedder, seed)
            try:
                embed = functools.partial(cache.embed, embed=embeddings.embed_documents)
                dimension = _embed_into(collection, chunks, embed, progress)
            finally:
                cache.close()
            log.info(
                "chunk vectors: %d from the shipped seed, %d from the cache, %d computed",
                cache.counts["seed"],
                cache.counts["cache"],
                cache.counts["computed"],
            )
            manifest = Manifest(
                content_hash=digest,
                embedder_id=embedder,
                dimension=dimension,
                chunk_count=len(chunks),
                chunks_sha256=_file_sha256(folder / CHUNKS),
                collection=collection_name,
                extra_sources=list(extra_sources),
                built_at=datetime.now(UTC).isoformat(timespec="seconds"),
                build_seconds=round(time.perf_counter() - started, 3),
            )
            _write_atomic(folder / MANIFEST, manifest.model_dump_json(indent=2))
        except BaseException:
            self._discard(folder, client, collection_name)
            raise
        client.close()
        previous = self._safe_current()
        _write_atomic(self.root / POINTER, json.dumps({"version": folder.name}))
        self._collect_garbage(keep={folder.name, previous.name if previous else ""})
        return manifest

    def _collection_name(self, folder: Path) -> str:
        return f"gpu-advisor-{folder.name}" if self.config.chroma_url else EMBEDDED_COLLECTION

    def _safe_current(self) -> Path | None:
        try:
            return self.current_folder()
        except IndexCorruptError:
            return None

    def _discard(self, folder: Path, client: Any, collection_name: str) -> None:
        if client is not None and self.config.chroma_url:
            with contextlib.suppress(Exception):  # it may never have been created
                client.delete_collection(collection_name)
        if client is not None:
            client.close()
        shutil.rmtree(folder, ignore_errors=True)

    def _collect_garbage(self, keep: set[str]) -> None:
        """Remove version folders (and server collections) except the current and previous one."""
        stale = [p for p in self.root.glob("v-*") if p.is_dir() and p.name not in keep]
        if self.config.chroma_url and stale:
            client = make_client(self.config, self.root)
            for folder in stale:
                with contextlib.suppress(Exception):  # gone, or never created by a failed build
                    client.delete_collection(self._collection_name(folder))
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)


def _embed_into(
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
