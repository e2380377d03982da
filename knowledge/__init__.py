"""The multilingual knowledge base: entries in knowledge/docs/<lang>/, a Chroma index, hybrid search

    import knowledge
    passages = knowledge.search("hoeveel VRAM heb ik nodig om te fine-tunen?", k=3)

`search` is a convenience over one process-wide `KnowledgeBase` per configuration; build a
`knowledge.base.KnowledgeBase(config)` yourself to control its lifetime. Heavy libraries (Chroma,
bm25s, the embedding model) load on first use, not on import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.config import KnowledgeConfig
from knowledge.retrieval.passages import Passage

if TYPE_CHECKING:
    from knowledge.base import KnowledgeBase
    from tools.enums import Method

__all__ = ["KnowledgeConfig", "Passage", "knowledge_base", "search"]

_BASES: dict[str, KnowledgeBase] = {}


def knowledge_base(config: KnowledgeConfig | None = None) -> KnowledgeBase:
    """The process-wide `KnowledgeBase` for `config` (default: `KnowledgeConfig.default()`)."""
    from knowledge.base import KnowledgeBase

    config = config or KnowledgeConfig.default()
    key = config.model_dump_json()
    if key not in _BASES:
        _BASES[key] = KnowledgeBase(config)
    return _BASES[key]


def search(
    query: str,
    lang: str | None = None,
    k: int = 5,
    *,
    job: Method | None = None,
    config: KnowledgeConfig | None = None,
) -> list[Passage]:
    """The `k` best passages for `query`, one per topic, in `lang` (detected when None); `job`,
    the conversation's job method, picks between twin training and fine-tuning entries."""
    return knowledge_base(config).search(query, lang=lang, k=k, job=job)
