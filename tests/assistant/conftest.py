"""Fakes for the assistant tests: hash embeddings, a knowledge base built once, a scripted model.

The knowledge base holds the real entries (knowledge/docs) indexed with deterministic
bag-of-words embeddings, built once per test session in a temporary folder; retrieval then runs
the real hybrid search (BM25 + dense) without any model download.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from knowledge.base import KnowledgeBase
from knowledge.config import KnowledgeConfig


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words vectors: each lower-case word adds +-1 to a hashed dimension."""

    embedder_id = "hash-256"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dim)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            vec[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else np.full(self.dim, self.dim**-0.5)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


@pytest.fixture(scope="session")
def knowledge_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """The built-in entries, indexed once per session with hash embeddings."""
    folder = tmp_path_factory.mktemp("kb") / "index"
    kb = KnowledgeBase(KnowledgeConfig(data_dir=folder), embeddings=HashEmbeddings())
    kb.open()
    yield kb
    kb.close()


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model that replies from a script: AIMessages (with tool_calls or text), strings,
    or exceptions (raised, as an unreachable endpoint would). Records every prompt it got."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def __init__(self, script: Sequence[AIMessage | str | BaseException], **kwargs: Any) -> None:
        super().__init__(messages=iter(list(script)), prompts=[], disable_streaming=True, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        step = next(self.messages)
        if isinstance(step, BaseException):
            raise step
        message = AIMessage(content=step) if isinstance(step, str) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A tool call as a chat model emits it."""
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"
