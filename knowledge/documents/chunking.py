"""Turn entries and arbitrary text files into chunks: the units embedded, indexed and shown.

- An FAQ is one chunk: its question is the title, the answer the text, and the indexed text adds the
  alternative phrasings so a user's wording meets one of them. (Embedding the question and each
  phrasing as extra vectors of their own was measured: it pulled queries towards FAQs and lowered
  top-1, see benchmarks/README.md.)
- A guide is split at paragraph boundaries into chunks of at most `max_words` words (a paragraph is
  never cut); the title is prefixed to each chunk's indexed text.
- A plain `.md`/`.txt` file is split at its headings (Markdown `#` lines, or in plain text a short
  stand-alone line without final punctuation); its language is detected; it has no topic id.

Chunk ids are stable: `topic#lang#n` (for files without a topic, the file path stands in for it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge.documents.entries import Entry, split_front_matter

# Bump when the chunk text recipe changes: it is part of every chunk hash, so indexes rebuild.
CHUNKER_VERSION = 3
DEFAULT_MAX_WORDS = 60
SOURCE_SUFFIXES = (".md", ".txt")

ChunkKind = Literal["guide", "faq", "section"]


class Chunk(BaseModel):
    """One retrievable passage with the text that is shown and the text that is indexed."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="stable id: topic#lang#n (file path instead of topic for files)")
    topic: str | None = Field(description="topic id; None for chunks of arbitrary files")
    lang: str = Field(description="ISO 639-1 code of the chunk's language")
    kind: ChunkKind
    title: str = Field(description="guide title, FAQ question or section heading")
    text: str = Field(description="passage shown to the user")
    index_text: str = Field(description="text embedded and indexed: title, phrasings and passage")
    terms: str = Field(
        default="", description="the entry's `terms`, one per line (keyword index, not embedded)"
    )
    source: str = Field(description="file the chunk came from")
    n: int = Field(ge=0, description="position of the chunk within its entry or file")
    content_hash: str = Field(description="sha256 of everything above")


def make_chunk(**fields: object) -> Chunk:
    """Build a chunk, computing its content hash from all other fields and the chunker version."""
    payload = json.dumps({**fields, "v": CHUNKER_VERSION}, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return Chunk.model_validate({**fields, "content_hash": digest})


def split_paragraphs(text: str) -> list[str]:
    """Blocks separated by blank lines, stripped, empty ones dropped."""
    return [p.strip() for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()]


def pack_paragraphs(paragraphs: list[str], max_words: int) -> list[str]:
    """Join consecutive paragraphs while the total stays within `max_words`; never cut a paragraph.

    A Markdown heading paragraph starts a new chunk and travels with the paragraph after it.
    """
    groups: list[list[str]] = []
    words = 0
    for para in paragraphs:
        size = len(para.split())
        after_heading = bool(groups) and _is_md_heading(groups[-1][-1])
        too_big = words + size > max_words or _is_md_heading(para)
        starts_new = not groups or (too_big and not after_heading)
        if starts_new:
            groups.append([para])
            words = size
        else:
            groups[-1].append(para)
            words += size
    return ["\n\n".join(group) for group in groups]


def _is_md_heading(paragraph: str) -> bool:
    return paragraph.startswith("#") and "\n" not in paragraph


def chunk_entry(entry: Entry, max_words: int = DEFAULT_MAX_WORDS) -> list[Chunk]:
    """One chunk per FAQ; guides split at paragraph boundaries with the title prefixed."""
    common = {
        "topic": entry.topic,
        "lang": entry.lang,
        "title": entry.title,
        "source": entry.source,
        "terms": "\n".join(entry.terms),
    }
    if entry.kind == "faq":
        index_text = "\n".join([entry.title, *entry.questions, "", entry.body])
        chunk_id = f"{entry.topic}#{entry.lang}#0"
        return [
            make_chunk(
                id=chunk_id,
                kind="faq",
                text=entry.body,
                index_text=index_text,
                n=0,
                **common,
            )
        ]
    parts = pack_paragraphs(split_paragraphs(entry.body), max_words)
    return [
        make_chunk(
            id=f"{entry.topic}#{entry.lang}#{n}",
            kind="guide",
            text=part,
            index_text=f"{entry.title}\n\n{part}",
            n=n,
            **common,
        )
        for n, part in enumerate(parts)
    ]


def chunk_entries(entries: Iterable[Entry], max_words: int = DEFAULT_MAX_WORDS) -> list[Chunk]:
    return [chunk for entry in entries for chunk in chunk_entry(entry, max_words)]


# --- arbitrary files -------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*+•◦▪·]|\d+[.)])\s")
_MAX_HEADING_WORDS = 20
_MAX_QUESTION_WORDS = 30


def is_plain_heading(block: str) -> bool:
    """A plain-text heading: one short line, no bullet, not ending like a sentence ('?' is fine)."""
    line = block.strip()
    if not line or "\n" in line or _BULLET.match(line):
        return False
    limit = _MAX_QUESTION_WORDS if line.endswith("?") else _MAX_HEADING_WORDS
    return len(line.split()) <= limit and line[-1] not in ".:;,!"


def split_sections(text: str, markdown: bool) -> tuple[str | None, list[tuple[str, list[str]]]]:
    """(document title, [(heading, paragraphs)]): blocks grouped under the heading before them."""
    title: str | None = None
    sections: list[tuple[str, list[str]]] = []
    for block in split_paragraphs(text):
        heading = _heading_of(block, markdown)
        if heading is not None:
            if title is None and not sections:
                title = heading
            sections.append((heading, []))
        elif sections:
            sections[-1][1].append(block)
        else:
            sections.append((title or "", [block]))
    return title, [(h, paras) for h, paras in sections if paras]


def _heading_of(block: str, markdown: bool) -> str | None:
    if markdown:
        match = re.match(r"^#{1,6}\s+(.+)$", block.strip())
        return match.group(1).strip() if match and "\n" not in block.strip() else None
    return block.strip() if is_plain_heading(block) else None


def chunk_text_file(
    path: Path,
    source: str,
    detect: Callable[[str], str],
    max_words: int = DEFAULT_MAX_WORDS,
) -> list[Chunk]:
    """Chunk one .md/.txt file by headings; `detect(text) -> language code` labels its language."""
    text = path.read_text(encoding="utf-8", errors="replace")
    markdown = path.suffix.lower() == ".md"
    if markdown and text.startswith("---"):
        with contextlib.suppress(ValueError):  # not front matter after all: index it as it is
            _, text = split_front_matter(text, source)
    lang = detect(text)
    doc_title, sections = split_sections(text, markdown)
    chunks: list[Chunk] = []
    for heading, paragraphs in sections:
        title = heading or doc_title or path.stem
        for part in pack_paragraphs(paragraphs, max_words):
            n = len(chunks)
            chunks.append(
                make_chunk(
                    id=f"{source}#{lang}#{n}",
                    topic=None,
                    lang=lang,
                    kind="section",
                    title=title,
                    text=part,
                    index_text=f"{title}\n\n{part}",
                    source=source,
                    n=n,
                )
            )
    return chunks


def source_files(root: Path) -> list[Path]:
    """The .md/.txt files under `root` (or `root` itself when it is a file), sorted."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SOURCE_SUFFIXES)
