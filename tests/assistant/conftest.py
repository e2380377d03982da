"""Fixtures of the assistant tests: a knowledge base built once, the built-in catalog (the fakes
are in tests/fakes).

The knowledge base holds the real entries (knowledge/docs) indexed with deterministic
bag-of-words embeddings, built once per test session in a temporary folder; retrieval then runs
the real hybrid search (BM25 + dense) without any model download.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.base import KnowledgeBase
from knowledge.config import KnowledgeConfig
from tests.fakes.chat import ScriptedChatModel, tool_call
from tests.fakes.embeddings import HashEmbeddings

__all__ = ["ScriptedChatModel", "tool_call"]
from tools.catalog import Catalog, builtin_catalog


@pytest.fixture(scope="session")
def knowledge_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """The built-in entries, indexed once per session with hash embeddings."""
    folder = tmp_path_factory.mktemp("kb") / "index"
    kb = KnowledgeBase(KnowledgeConfig(data_dir=folder), embeddings=HashEmbeddings(dim=256))
    kb.open()
    yield kb
    kb.close()


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The built-in catalog (modules that need another define their own `catalog`)."""
    return builtin_catalog()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"
