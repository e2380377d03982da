"""Hybrid ranking: reciprocal rank fusion of dense and BM25 rankings, grouped by topic.

Every system (dense, BM25) ranks chunks. A topic's rank in a system is the rank of its best chunk,
in any language, so a topic is found whichever translation matches best. Topics are ordered by
RRF: sum over systems of weight / (rrf_k + rank). Each topic is then shown through one chunk: the
best-ranked chunk in the user's language when the topic has that language, otherwise its best
English chunk (the fallback language, also for query languages the knowledge base lacks), otherwise
the best chunk in any language; the last two are flagged with `lang_fallback`. Chunks without a
topic form a group of their own.

When the dense system cannot run (Chroma down, slow or unreadable), the ranking is BM25's alone
and every passage says so (`lexical_only`); `SearchReport` carries the same flag with the reason,
also when nothing was found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from knowledge.documents.chunking import Chunk
from knowledge.retrieval.passages import Passage

FALLBACK_LANG = "en"


class FusionParams(BaseModel):
    """Weights of reciprocal rank fusion (Cormack et al. 2009 use rrf_k = 60)."""

    rrf_k: float = Field(default=60.0, gt=0, description="RRF constant added to every rank")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"dense": 1.0, "dense_lang": 0.0, "bm25": 1.0},
        description="weight per ranking system (dense: all languages; dense_lang: the query's "
        "language only; bm25); a system missing here or at 0 is not used",
    )
    dense_candidates: int = Field(default=200, gt=0, description="chunks fetched from Chroma")


def group_key(chunk: Chunk) -> str:
    return chunk.topic or chunk.id


def group_ranks(order: Sequence[int], chunks: Sequence[Chunk]) -> dict[str, int]:
    """Rank (from 1) of each group: that of its first chunk in `order` (indices, best first)."""
    ranks: dict[str, int] = {}
    for index in order:
        ranks.setdefault(group_key(chunks[index]), len(ranks) + 1)
    return ranks


def fuse(
    rankings: Mapping[str, Sequence[int]],
    chunks: Sequence[Chunk],
    params: FusionParams,
) -> tuple[list[tuple[str, float]], dict[int, float]]:
    """(groups with RRF scores best first, RRF score of every ranked chunk)."""
    group_scores: dict[str, float] = {}
    chunk_scores: dict[int, float] = {}
    for system, order in rankings.items():
        weight = params.weights.get(system, 0.0)
        if weight <= 0:
            continue
        for group, rank in group_ranks(order, chunks).items():
            group_scores[group] = group_scores.get(group, 0.0) + weight / (params.rrf_k + rank)
        for rank, index in enumerate(order, start=1):
            chunk_scores[index] = chunk_scores.get(index, 0.0) + weight / (params.rrf_k + rank)
    ordered = sorted(group_scores.items(), key=lambda item: (-item[1], item[0]))
    return ordered, chunk_scores


def pick_passages(
    groups: Sequence[tuple[str, float]],
    chunk_scores: Mapping[int, float],
    chunks: Sequence[Chunk],
    query_lang: str,
    k: int,
    fallback_lang: str = FALLBACK_LANG,
    lexical_only: bool = False,
) -> list[Passage]:
    """Show each of the top `k` groups by its best chunk in `query_lang`, else in `fallback_lang`,
    else in any language; `lexical_only` flags every passage as ranked by BM25 alone."""
    members: dict[str, list[int]] = {}
    for index, chunk in enumerate(chunks):
        members.setdefault(group_key(chunk), []).append(index)
    passages = []
    for group, score in groups[:k]:
        indices = members[group]
        same_lang = [i for i in indices if chunks[i].lang == query_lang]
        fallback = [i for i in indices if chunks[i].lang == fallback_lang]
        pool = same_lang or fallback or indices
        best = max(pool, key=lambda i: (chunk_scores.get(i, 0.0), -chunks[i].n))
        chunk = chunks[best]
        passages.append(
            Passage(
                topic=chunk.topic,
                lang=chunk.lang,
                title=chunk.title,
                text=chunk.text,
                source=chunk.source,
                score=round(score, 6),
                chunk_id=chunk.id,
                query_lang=query_lang,
                lang_fallback=not same_lang,
                lexical_only=lexical_only,
            )
        )
    return passages
