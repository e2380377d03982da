"""The embedding cache: unchanged texts are not embedded again; a broken cache file is replaced;
the shipped seed is read first, exactly, and only for its own embedder."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.index.embcache import (
    EmbeddingCache,
    SeedError,
    SeedVectors,
    text_key,
    vectors_agree,
    write_seed,
)


class CountingEmbed:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), 0.5, -1.0] for t in texts]


def test_only_new_texts_are_embedded_and_order_is_kept(tmp_path: Path) -> None:
    embed = CountingEmbed()
    cache = EmbeddingCache(tmp_path, "emb-a")
    first = cache.embed(["ab", "abcd"], embed)
    second = cache.embed(["abcd", "xyz", "ab"], embed)
    assert embed.calls == [["ab", "abcd"], ["xyz"]], "cached texts are not embedded again"
    assert first == [[2.0, 0.5, -1.0], [4.0, 0.5, -1.0]], "vectors as computed"
    assert second == [[4.0, 0.5, -1.0], [3.0, 0.5, -1.0], [2.0, 0.5, -1.0]], "input order"
    cache.close()


def test_cache_persists_per_embedder(tmp_path: Path) -> None:
    embed = CountingEmbed()
    EmbeddingCache(tmp_path, "emb-a").embed(["ab"], embed)
    EmbeddingCache(tmp_path, "emb-a").embed(["ab"], embed)
    EmbeddingCache(tmp_path, "emb-b").embed(["ab"], embed)
    assert embed.calls == [["ab"], ["ab"]], "reused across opens; separate per embedder"


def test_broken_cache_file_is_replaced_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = EmbeddingCache(tmp_path, "emb-a")
    cache.close()
    cache.path.write_bytes(b"garbage, not sqlite" * 50)
    embed = CountingEmbed()
    with caplog.at_level(logging.WARNING, logger="knowledge"):
        fresh = EmbeddingCache(tmp_path, "emb-a")
        assert fresh.embed(["ab"], embed) == [[2.0, 0.5, -1.0]]
    assert "unreadable" in caplog.text and embed.calls == [["ab"]], "rebuilt and embedded afresh"
    fresh.close()


# -- the shipped seed ------------------------------------------------------------------------


def _vectors(*texts: str, dim: int = 4) -> dict[str, np.ndarray]:
    """Distinct float32 vectors for `texts`, keyed like the cache keys them."""
    return {text_key(t): np.arange(dim, dtype=np.float32) / (i + 3) for i, t in enumerate(texts)}


def test_seed_round_trips_exact_vectors_in_key_order(tmp_path: Path) -> None:
    vectors = _vectors("alpha", "beta", "gamma")
    path = tmp_path / "embeddings-x.npz"
    write_seed(path, "emb-a", vectors)
    seed = SeedVectors.read(path)
    assert (seed.embedder, seed.dimension, len(seed)) == ("emb-a", 4, 3), "id, dim, count"
    assert seed.keys() == sorted(vectors), "rows stored in ascending key order"
    for key, vector in vectors.items():
        stored = seed.vector(key)
        assert stored is not None and stored.dtype == np.float32, "float32 as written"
        assert stored.tobytes() == vector.tobytes(), "bit-identical vector"
    assert seed.vector(text_key("delta")) is None, "unknown text"
    with np.load(path, allow_pickle=False) as npz:
        assert sorted(npz.files) == ["dimension", "embedder_id", "keys", "vectors"], "members"


def test_seed_file_bytes_depend_only_on_its_content(tmp_path: Path) -> None:
    vectors = _vectors("alpha", "beta", "gamma")
    write_seed(tmp_path / "a.npz", "emb-a", vectors)
    write_seed(tmp_path / "b.npz", "emb-a", dict(reversed(vectors.items())))
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes(), (
        "same vectors in another order give the same bytes (sorted keys, fixed timestamps)"
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.text(max_size=30), min_size=1, max_size=8, unique=True),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_seed_round_trip_property(texts: list[str], dim: int, rng_seed: int) -> None:
    rng = np.random.default_rng(rng_seed)
    vectors = {text_key(t): rng.standard_normal(dim).astype(np.float32) for t in texts}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.npz"
        write_seed(path, "emb", vectors)
        seed = SeedVectors.read(path)
    assert seed.keys() == sorted(vectors), "every key, ascending"
    assert all(seed.vector(k).tobytes() == v.tobytes() for k, v in vectors.items()), "exact"


def test_find_matches_the_embedder_id_exactly(tmp_path: Path) -> None:
    write_seed(tmp_path / "embeddings-a.npz", "emb-a-1.0", _vectors("alpha"))
    write_seed(tmp_path / "embeddings-b.npz", "emb-b-1.0", _vectors("beta"))
    found = SeedVectors.find("emb-b-1.0", tmp_path)
    assert found is not None and found.keys() == [text_key("beta")], "the file of that id"
    assert SeedVectors.find("emb-a-1.1", tmp_path) is None, "another version is not used"
    assert SeedVectors.find("emb-a-1.0", tmp_path / "absent") is None, "no seed folder"
    assert SeedVectors.find("emb-a-1.0", None) is None, "seed disabled"


def test_broken_seed_file_is_skipped_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "embeddings-bad.npz").write_bytes(b"PK\x03\x04 not really a zip")
    write_seed(tmp_path / "embeddings-good.npz", "emb-a", _vectors("alpha"))
    with caplog.at_level(logging.WARNING, logger="knowledge"):
        found = SeedVectors.find("emb-a", tmp_path)
    assert found is not None and len(found) == 1, "the good file is still found"
    assert "ignoring seed embedding file" in caplog.text and "embeddings-bad.npz" in caplog.text
    with pytest.raises(SeedError, match=r"embeddings-bad\.npz is unreadable"):
        SeedVectors.read(tmp_path / "embeddings-bad.npz")


def test_seed_rejects_inconsistent_arrays() -> None:
    keys = np.zeros((2, 32), dtype=np.uint8)
    with pytest.raises(SeedError, match=r"vectors \(3, 4\) do not match 2 keys"):
        SeedVectors("emb", keys, np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(SeedError, match="keys must be uint8"):
        SeedVectors("emb", np.zeros((2, 16), dtype=np.uint8), np.zeros((2, 4), dtype=np.float32))
    with pytest.raises(SeedError, match="keys repeat"):
        SeedVectors("emb", keys, np.zeros((2, 4), dtype=np.float32))


class ReproducingEmbed(CountingEmbed):
    """Computes the seed's own vectors for seeded texts (as the machine that wrote it did)."""

    def __init__(self, seeded: dict[str, np.ndarray], texts: list[str]) -> None:
        super().__init__()
        self.table = {t: seeded[text_key(t)].tolist() for t in texts if text_key(t) in seeded}

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.table.get(t, [float(len(t)), 0.5, -1.0]) for t in texts]


def test_seeded_texts_are_neither_embedded_nor_cached(tmp_path: Path) -> None:
    vectors = _vectors("ab", "abcd")
    write_seed(tmp_path / "embeddings-a.npz", "emb-a", vectors)
    seed = SeedVectors.find("emb-a", tmp_path)
    embed = ReproducingEmbed(vectors, ["ab", "abcd"])
    cache = EmbeddingCache(tmp_path / "cache", "emb-a", seed)
    got = cache.embed(["abcd", "xyz", "ab"], embed)
    assert embed.calls == [["abcd", "ab"], ["xyz"]], "two seeded probes, then the missing text"
    third = [0.0, 0.3333333432674408, 0.6666666865348816, 1.0]  # float32 1/3 and 2/3
    assert got == [[0.0, 0.25, 0.5, 0.75], [3.0, 0.5, -1.0], third], (
        "seed vectors (float32 values) and the computed one, in input order"
    )
    assert cache.counts == {"seed": 2, "cache": 0, "computed": 1}, "sources counted"
    rows = cache._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    assert rows == 1, "seed vectors are not copied into the cache"
    cache.embed(["ab"], embed)
    assert len(embed.calls) == 2, "the seed is checked once"
    cache.close()


def test_a_seed_this_machine_does_not_reproduce_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_seed(tmp_path / "embeddings-a.npz", "emb-a", _vectors("ab", "abcd"))
    seed = SeedVectors.find("emb-a", tmp_path)
    embed = CountingEmbed()  # another kernel: its vectors point elsewhere
    cache = EmbeddingCache(tmp_path / "cache", "emb-a", seed)
    with caplog.at_level(logging.WARNING, logger="knowledge"):
        got = cache.embed(["abcd", "ab"], embed)
    assert got == [[4.0, 0.5, -1.0], [2.0, 0.5, -1.0]], "every vector computed here"
    assert cache.counts == {"seed_rejected": 1, "seed": 0, "cache": 0, "computed": 2}
    assert "differ from what this machine computes" in caplog.text
    cache.close()


def test_vectors_agree_within_kernel_noise_only() -> None:
    rng = np.random.default_rng(7)
    base = rng.standard_normal((3, 384)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    noisy = base + rng.uniform(-0.0014, 0.0014, base.shape).astype(np.float32)  # AMD EPYC, on all
    assert vectors_agree(noisy, base), "last-bit kernel differences keep the seed"
    assert not vectors_agree(np.roll(base, 1, axis=1), base), "another model's vectors do not"
    assert not vectors_agree(base[:, :100], base), "nor vectors of another dimension"


def test_seed_of_another_embedder_is_ignored(tmp_path: Path) -> None:
    write_seed(tmp_path / "embeddings-a.npz", "emb-a", _vectors("ab"))
    seed = SeedVectors.find("emb-a", tmp_path)
    embed = CountingEmbed()
    cache = EmbeddingCache(tmp_path / "cache", "emb-b", seed)
    assert cache.embed(["ab"], embed) == [[2.0, 0.5, -1.0]], "computed, not taken from emb-a"
    cache.close()
