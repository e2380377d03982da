"""The on-disk index: versioned build folders, a manifest, an atomic pointer, the Chroma collection.

Layout under `KnowledgeConfig.data_dir`:

    current.json            pointer {"version": "v-..."}; replaced atomically (os.replace)
    v-<hash>-<nonce>/       one complete build
        chunks.jsonl        every chunk (shown text, indexed text, metadata)
        chroma/             the embedded Chroma store (absent when a Chroma server is used)
        manifest.json       written last: content hash, embedder id, counts, checksums
    embedding-cache/        vectors per embedder by text hash: rebuilds embed changed texts only

Vectors of the built-in entries also ship with the package (`knowledge/data/`, see
`knowledge.index.embcache`), so a first build with a shipped embedder embeds nothing.

A build goes into a new folder and only becomes current when the pointer is swapped, so a failed
or interrupted build leaves the previous index in use. Opening checks the pointer, the manifest, the
chunk file checksum and the collection size, and raises `IndexCorruptError` saying what is wrong.

When the files are fine but Chroma cannot be used (a server that is down, slow or not Chroma),
opening still succeeds with the chunks and no collection: `OpenIndex.store_error` says why, and
the knowledge base searches with BM25 alone. An embedded store in a folder this process cannot
write (a read-only mount, another user's files) is opened from a private temporary copy, since
Chroma's embedded client writes to its database even to read it; the index stays usable and is
not mistaken for a corrupt one. Building needs write access and says so (`NotWritableError`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field, ValidationError

from knowledge.config import KnowledgeConfig
from knowledge.documents.chunking import Chunk
from knowledge.errors import IndexCorruptError, StoreUnavailableError
from knowledge.index.chroma import bounded_call, make_client, server_failure
from knowledge.index.collection import ChromaEmbeddingAdapter, Progress, embed_into
from knowledge.index.embcache import SEED_DIR, EmbeddingCache, SeedVectors
from knowledge.index.scratch import read_only_copy
from tools.errors import (
    InvalidInputError,
    NotWritableError,
    needs_write_access,
    require_writable,
)
from tools.redaction import redact, url_secrets

__all__ = [
    "IndexCorruptError",
    "IndexStore",
    "Manifest",
    "OpenIndex",
    "StoreUnavailableError",
    "content_hash",
    "make_client",
]

INDEX_FORMAT = 3
POINTER = "current.json"
MANIFEST = "manifest.json"
CHUNKS = "chunks.jsonl"
CACHE_DIR = "embedding-cache"
EMBEDDED_COLLECTION = "gpu-advisor-kb"
BUILDING = "building the knowledge index"
NEARLY_FULL_BYTES = 2**20  # free space under which a failed build is blamed on a full disk

log = logging.getLogger("knowledge")


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
    """A verified index: its manifest, chunks (in stored order) and live Chroma collection.

    `collection` and `client` are None when the store cannot be used now; `store_error` then
    says why. `scratch` is the private copy a read-only embedded store was opened from."""

    folder: Path
    manifest: Manifest
    chunks: list[Chunk]
    collection: Any
    client: Any
    store_error: StoreUnavailableError | None = None
    scratch: tempfile.TemporaryDirectory[str] | None = None

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None


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
        """Open and check the current index: None if there is none, IndexCorruptError if broken;
        an index whose store cannot be used now opens without a collection (`store_error`)."""
        folder = self.current_folder()
        if folder is None:
            return None
        manifest = self.read_manifest(folder)
        chunks = self._read_chunks(folder, manifest)
        try:
            return self.connect(folder, manifest, chunks, embeddings)
        except StoreUnavailableError as exc:
            log.warning("knowledge index in %s: %s; searching with BM25 alone", self.root, exc)
            return OpenIndex(folder, manifest, chunks, None, None, store_error=exc)

    def connect(
        self, folder: Path, manifest: Manifest, chunks: list[Chunk], embeddings: Embeddings
    ) -> OpenIndex:
        """The index with its live Chroma collection (from a private copy when the embedded
        store cannot be written); StoreUnavailableError when Chroma cannot be used now."""
        scratch = None if self.config.chroma_url else read_only_copy(folder / "chroma")
        adapter = ChromaEmbeddingAdapter(embeddings, manifest.embedder_id)
        try:
            where = Path(scratch.name) if scratch is not None else folder
            client, collection, count = self._open_collection(where, manifest.collection, adapter)
        except BaseException:
            if scratch is not None:
                scratch.cleanup()
            raise
        index = OpenIndex(folder, manifest, chunks, collection, client, scratch=scratch)
        if count != manifest.chunk_count:
            index.close()
            raise IndexCorruptError(
                f"Chroma collection holds {count} vectors, manifest says {manifest.chunk_count}"
            )
        return index

    def _open_collection(self, where: Path, name: str, adapter: Any) -> tuple[Any, Any, int]:
        """(client, collection, vector count), every Chroma call bounded by the read timeout."""
        import chromadb  # noqa: F401  (imported before the deadline starts: it takes a second)

        server = make_client(self.config, where) if self.config.chroma_url else None
        opened: list[Any] = [server] if server is not None else []

        def run() -> tuple[Any, int]:
            if not opened:
                opened.append(make_client(self.config, where))
            collection = opened[0].get_collection(name, embedding_function=adapter)
            return collection, int(collection.count())

        what = f"the embedded Chroma store in {where / 'chroma'}"
        try:
            collection, count = bounded_call(run, self.config.chroma_read_timeout_s, what)
        except Exception as exc:
            for client in opened:
                client.close()
            if isinstance(exc, InvalidInputError | StoreUnavailableError):
                raise
            raise self._open_failure(exc, name) from exc
        return opened[0], collection, count

    def _open_failure(self, exc: Exception, name: str) -> Exception:
        """What a failure to open collection `name` means: a server that lacks it or failed,
        or an embedded store that is broken."""
        if self.config.chroma_url:
            from chromadb.errors import NotFoundError

            if isinstance(exc, NotFoundError):
                return IndexCorruptError(f"the Chroma server holds no collection {name}")
            return server_failure(exc, self.config)
        detail = redact(str(exc), url_secrets(self.config.chroma_url))
        return IndexCorruptError(f"Chroma collection {name} unusable: {detail}")

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
        """Embed and store `chunks` in a new version folder, then make it current atomically.
        NotWritableError (naming the folder) when the data folder is read-only or full."""
        started = time.perf_counter()
        digest = content_hash(chunks)
        require_writable(self.root, BUILDING)
        with needs_write_access(self.root, BUILDING):
            folder = self.root / f"v-{digest[:12]}-{uuid.uuid4().hex[:8]}"
            folder.mkdir()
            collection_name = self._collection_name(folder)
            client: Any = None
            try:
                _write_atomic(folder / CHUNKS, "".join(c.model_dump_json() + "\n" for c in chunks))
                client = make_client(self.config, folder)
                adapter = ChromaEmbeddingAdapter(embeddings, embedder)
                collection = client.create_collection(
                    collection_name, embedding_function=adapter, metadata={"hnsw:space": "cosine"}
                )
                dimension = self._embed(collection, chunks, embeddings, embedder, progress)
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
            except BaseException as exc:
                full = isinstance(exc, Exception) and _nearly_full(self.root)
                self._discard(folder, client, collection_name)
                if full:  # Chroma reports a full disk as an InternalError, not an OSError
                    raise NotWritableError(self.root, "no space left on device", BUILDING) from exc
                raise
            client.close()
            previous = self._safe_current()
            _write_atomic(self.root / POINTER, json.dumps({"version": folder.name}))
        self._collect_garbage(keep={folder.name, previous.name if previous else ""})
        return manifest

    def _embed(
        self,
        collection: Any,
        chunks: Sequence[Chunk],
        embeddings: Embeddings,
        embedder: str,
        progress: Progress | None,
    ) -> int:
        """Embed `chunks` into `collection` through the seed and the cache; the dimension."""
        seed = SeedVectors.find(embedder, self.seed_dir) if self.config.seed_vectors else None
        cache = EmbeddingCache(self.root / CACHE_DIR, embedder, seed)
        try:
            embed = functools.partial(cache.embed, embed=embeddings.embed_documents)
            dimension = embed_into(collection, chunks, embed, progress)
        finally:
            cache.close()
        log.info(
            "chunk vectors: %d from the shipped seed, %d from the cache, %d computed",
            cache.counts["seed"],
            cache.counts["cache"],
            cache.counts["computed"],
        )
        return dimension

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


def _nearly_full(folder: Path) -> bool:
    """Whether the file system holding `folder` has under `NEARLY_FULL_BYTES` free."""
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL_BYTES
    except OSError:
        return False
