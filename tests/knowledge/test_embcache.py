"""The embedding cache: unchanged texts are not embedded again; a broken cache file is replaced."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from knowledge.embcache import EmbeddingCache


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
