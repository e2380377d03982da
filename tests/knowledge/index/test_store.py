"""The versioned on-disk index: build, verify, atomic publish, corruption, Chroma server."""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from knowledge.config import KnowledgeConfig
from knowledge.documents.chunking import chunk_entries
from knowledge.documents.entries import load_entries
from knowledge.errors import ChromaUnreachableError
from knowledge.index.embcache import SEED_PROBES, text_key, write_seed
from knowledge.index.store import (
    CHUNKS,
    MANIFEST,
    POINTER,
    IndexCorruptError,
    IndexStore,
    content_hash,
)
from tests.fakes.chroma import chroma_server as real_chroma_server
from tests.fakes.chroma import free_port
from tests.fakes.embeddings import HashEmbeddings
from tools.errors import InvalidInputError

EMB = HashEmbeddings()


@pytest.fixture
def chunks(mini_docs: Path):
    return chunk_entries(load_entries(mini_docs))


def _current(store: IndexStore) -> Path:
    folder = store.current_folder()
    assert folder is not None, "an index was published"
    return folder


def _build(store: IndexStore, chunks, embeddings=EMB):
    return store.build(chunks, embeddings, embeddings.embedder_id)


def test_build_then_open_round_trips_chunks_and_manifest(
    kb_config: KnowledgeConfig, chunks
) -> None:
    store = IndexStore(kb_config)
    seen: list[tuple[int, int]] = []
    manifest = store.build(chunks, EMB, EMB.embedder_id, progress=lambda d, t: seen.append((d, t)))
    assert (manifest.chunk_count, manifest.dimension) == (len(chunks), 64), "counts and dim"
    assert manifest.content_hash == content_hash(chunks) and manifest.embedder_id == "hash-64"
    assert seen[0] == (0, len(chunks)) and seen[-1] == (len(chunks), len(chunks)), "progress"
    opened = store.open(EMB)
    assert opened is not None
    assert opened.chunks == chunks, "chunks.jsonl round-trips every field"
    assert opened.collection.count() == len(chunks), "one vector per chunk"
    opened.close()


def test_open_without_an_index_returns_none(kb_config: KnowledgeConfig) -> None:
    assert IndexStore(kb_config).open(EMB) is None, "nothing built yet"


def test_build_takes_seed_vectors_and_embeds_only_the_rest(
    kb_config: KnowledgeConfig, chunks, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seed_dir = tmp_path / "seed"
    # The seed's vectors point the way this machine's do (it reproduces them, so they are used)
    # but are twice as long, so a stored vector shows where it came from.
    own = {
        c.index_text: np.asarray(EMB.embed_query(c.index_text), dtype=np.float32) for c in chunks
    }
    seeded = {text_key(c.index_text): 2 * own[c.index_text] for c in chunks[1:]}
    write_seed(seed_dir / "embeddings-hash.npz", EMB.embedder_id, seeded)
    embeddings = HashEmbeddings(fail_after=1 + SEED_PROBES)  # the probes, then one text
    store = IndexStore(kb_config, seed_dir=seed_dir)
    with caplog.at_level(logging.INFO, logger="knowledge"):
        manifest = store.build(chunks, embeddings, embeddings.embedder_id)
    assert embeddings.embedded == 1 + SEED_PROBES, "the seed's probes and the one missing chunk"
    assert manifest.chunk_count == len(chunks)
    assert f"{len(chunks) - 1} from the shipped seed, 0 from the cache, 1 computed" in caplog.text
    opened = store.open(EMB)
    assert opened is not None
    got = opened.collection.get(ids=[c.id for c in chunks], include=["embeddings"])
    stored = dict(zip(got["ids"], got["embeddings"], strict=True))
    for chunk in chunks[1:]:
        assert np.allclose(stored[chunk.id], 2 * own[chunk.index_text]), f"{chunk.id}: seeded"
    assert np.allclose(stored[chunks[0].id], EMB.embed_documents([chunks[0].index_text])[0])
    opened.close()


def test_failed_build_leaves_the_previous_index_current(kb_config: KnowledgeConfig, chunks) -> None:
    store = IndexStore(kb_config)
    first = _build(store, chunks[:2])
    folder = _current(store)
    failing = HashEmbeddings(fail_after=1)
    with pytest.raises(RuntimeError, match="simulated embedding failure"):
        store.build(chunks, failing, failing.embedder_id)
    assert _current(store) == folder, "pointer not moved by the failed build"
    assert sorted(p.name for p in kb_config.data_dir.glob("v-*")) == [folder.name], "no debris"
    opened = store.open(EMB)
    assert opened is not None and opened.manifest == first, "old index still opens"
    opened.close()


def test_rebuild_keeps_current_and_previous_versions_only(
    kb_config: KnowledgeConfig, chunks
) -> None:
    store = IndexStore(kb_config)
    folders = []
    for size in (1, 2, 3):
        _build(store, chunks[:size])
        folders.append(_current(store))
    assert sorted(p.name for p in kb_config.data_dir.glob("v-*")) == sorted(
        f.name for f in folders[1:]
    ), "oldest version collected"
    pointer = json.loads((kb_config.data_dir / POINTER).read_text())
    assert pointer == {"version": folders[-1].name}, "pointer names the newest build"


def _corrupt_pointer(folder: Path) -> None:
    (folder.parent / POINTER).write_text("{not json")


def _drop_manifest(folder: Path) -> None:
    (folder / MANIFEST).unlink()


def _edit_chunks(folder: Path) -> None:
    with (folder / CHUNKS).open("a") as handle:
        handle.write("\n")


def _garble_chroma(folder: Path) -> None:
    shutil.rmtree(folder / "chroma")
    (folder / "chroma").mkdir()
    (folder / "chroma" / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (_corrupt_pointer, r"pointer .*current\.json is unreadable"),
        (_drop_manifest, r"manifest .*manifest\.json is missing or invalid"),
        (_edit_chunks, r"chunks\.jsonl does not match its checksum"),
        (_garble_chroma, r"Chroma collection gpu-advisor-kb unusable"),
    ],
)
def test_damaged_index_is_reported_with_the_part_that_is_broken(
    kb_config: KnowledgeConfig, chunks, damage, match: str
) -> None:
    store = IndexStore(kb_config)
    _build(store, chunks)
    damage(_current(store))
    with pytest.raises(IndexCorruptError, match=match):
        store.open(EMB)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    """A real `chroma run` on loopback (tests.fakes.chroma); yields its URL."""
    with real_chroma_server(tmp_path / "srv") as port:
        yield f"http://127.0.0.1:{port}"


def test_unreachable_chroma_server_fails_fast_with_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    config = KnowledgeConfig(data_dir=tmp_path / "index", chroma_url=url)
    started = time.monotonic()
    with pytest.raises(
        ChromaUnreachableError,
        match=r"^Chroma server http://127\.0\.0\.1:\d+ is unreachable: connection refused ",
    ):
        IndexStore(config).build([], EMB, EMB.embedder_id)
    assert time.monotonic() - started < 5, "no waiting on a closed port"
    assert not list((tmp_path / "index").glob("v-*")), "the failed build left no folder"


@pytest.mark.parametrize("url", ["ftp://host:1", "localhost:8000", "http://host:99999"])
def test_malformed_chroma_url_is_rejected(tmp_path: Path, url: str) -> None:
    config = KnowledgeConfig(data_dir=tmp_path / "index", chroma_url=url)
    with pytest.raises(InvalidInputError, match=r"chroma_url: .*valid: http\(s\)://host:port"):
        IndexStore(config).build([], EMB, EMB.embedder_id)


@pytest.mark.slow
def test_http_client_against_a_real_chroma_server(
    tmp_path: Path, chroma_server: str, chunks
) -> None:
    config = KnowledgeConfig(data_dir=tmp_path / "index", chroma_url=chroma_server)
    store = IndexStore(config)
    _build(store, chunks[:2])
    second = _build(store, chunks)
    assert not (_current(store) / "chroma").exists(), "no embedded store with a server"
    opened = store.open(EMB)
    assert opened is not None and opened.collection.count() == second.chunk_count, "on server"
    hit = opened.collection.query(
        query_embeddings=[EMB.embed_query(chunks[0].index_text)], n_results=1
    )
    assert hit["ids"][0] == [chunks[0].id], "nearest neighbour of a chunk's own text is itself"
    names = sorted(c.name for c in opened.client.list_collections())
    assert second.collection in names and len(names) == 2, "current + previous collections kept"
    opened.close()
