"""Ranking: BM25 per language (`lexical`, `text`, `compounds`), reciprocal rank fusion by topic
(`fusion`) and what a search returns (`passages`).

    from knowledge.retrieval import Passage
"""

from knowledge.retrieval.fusion import FusionParams, fuse, group_ranks, pick_passages
from knowledge.retrieval.passages import PUBLIC_FIELDS, Passage, SearchReport

__all__ = [
    "PUBLIC_FIELDS",
    "FusionParams",
    "Passage",
    "SearchReport",
    "fuse",
    "group_ranks",
    "pick_passages",
]
