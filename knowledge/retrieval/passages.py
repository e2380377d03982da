"""What a search returns: `Passage` (one topic shown through one chunk) and `SearchReport`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PUBLIC_FIELDS = ("topic", "lang", "title", "text", "answer", "source", "score")


class Passage(BaseModel):
    """A retrieved passage; `topic`, `lang`, `title`, `text`, `answer`, `source`, `score` are
    public. Frozen: a kept search's passages are shared by every turn that asks it again."""

    model_config = ConfigDict(frozen=True)

    topic: str | None = Field(description="topic id; None for chunks of ingested files")
    lang: str = Field(description="language of the passage, ISO 639-1")
    title: str = Field(description="guide title, FAQ question or section heading")
    text: str = Field(description="the passage")
    answer: str = Field(
        default="",
        description="the sentences of the passage's entry that best answer the query, in the "
        "entry's order ('…' between ones that are not adjacent); '' when none shares a word with "
        "it (knowledge/retrieval/sentences.py)",
    )
    source: str = Field(description="file the passage came from")
    score: float = Field(description="RRF fusion score of the passage's topic; higher is better")
    chunk_id: str = Field(description="stable chunk id topic#lang#n")
    query_lang: str = Field(description="language of the query (given or detected)")
    lang_fallback: bool = Field(
        description="True when the topic has no passage in the query's language and another "
        "language is returned instead"
    )
    lexical_only: bool = Field(
        default=False,
        description="True when the dense (embedding) search could not run for this query "
        "(Chroma down, slow or unreadable) and the passage was ranked by BM25 keywords alone; "
        "False when every configured system ran (also when BM25 alone is the configuration)",
    )

    def public(self) -> dict[str, object]:
        """The public keys, in order, for JSON output."""
        return {key: getattr(self, key) for key in PUBLIC_FIELDS}


class SearchReport(BaseModel):
    """A search's passages and whether they come from BM25 alone because Chroma failed."""

    model_config = ConfigDict(frozen=True)

    passages: list[Passage]
    lexical_only: bool = Field(
        description="the dense search could not run; every passage was ranked by BM25 alone"
    )
    degraded_reason: str = Field(
        default="",
        description="why the dense search could not run (credentials removed); '' when it ran",
    )
