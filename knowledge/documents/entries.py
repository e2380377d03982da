"""Knowledge-base entries: Markdown files with YAML front matter, parsed and validated strictly.

An entry lives at `knowledge/docs/<lang>/<topic with "/" replaced by "__">.md`:

    ---
    topic: specs/vram
    lang: nl
    title: "VRAM is de harde grens"
    kind: guide            # guide | faq
    questions: [...]       # faq only: 3-5 alternative phrasings of the title question
    terms: [...]           # optional: words people use for the topic, in the entry's language
    ---
    Body (Markdown).

Topic ids starting with `faq/` are FAQs; all others are guides. `terms` (synonyms, inflections,
the everyday and English words people type for the topic) widen the entry's keyword (BM25)
vocabulary only: they are not shown and not embedded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.errors import InvalidInputError
from tools.languages import LANGUAGES, Language

Kind = Literal["guide", "faq"]

BUILTIN_DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"

# Topic ids this project added on top of ../shared/kb/topics.yaml (which stays the source of the
# other 36). Every id in both lists must exist in all six languages.
PROJECT_TOPICS: tuple[str, ...] = (
    "parallel/zero-fsdp",
    "memory/gradient-checkpointing",
    "memory/optimizers-8bit-paged",
    "memory/long-context-gqa",
    "memory/moe",
    "advisor/memory-estimate-method",
    "advisor/ranking-method",
    "provider/spot-checkpoint-interval",
    "provider/egress-costs",
    "faq/lora-vs-qlora",
    "faq/hourly-vs-total-cost",
    "diffusion/finetune-memory",
    "diffusion/dreambooth-lora",
    "vision/vlm-finetune",
    "faq/diffusion-vlm-gpu",
)

TOPIC_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*/[a-z0-9]+(?:-[a-z0-9]+)*$"
MIN_QUESTIONS, MAX_QUESTIONS = 3, 5
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class EntryError(InvalidInputError):
    """A malformed entry file; the message names the file, field, value and what is valid."""

    def __init__(self, path: Path | str, field: str, value: object, valid: str) -> None:
        super().__init__(field, value, valid)
        self.path = Path(path)
        self.args = (f"{path}: {self.args[0]}",)


class Entry(BaseModel):
    """One knowledge-base entry (a guide section or an FAQ) in one language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str = Field(pattern=TOPIC_PATTERN, description="stable id shared by translations")
    lang: Language = Field(description="ISO 639-1 code of the entry's language")
    title: str = Field(min_length=1, description="guide title, or the FAQ question itself")
    kind: Kind
    questions: tuple[str, ...] = Field(default=(), description="FAQ only: alternative phrasings")
    terms: tuple[str, ...] = Field(
        default=(), description="words people use for the topic (keyword search only)"
    )
    body: str = Field(min_length=1, description="Markdown body: guide text or FAQ answer")
    source: str = Field(description="where the entry came from, e.g. knowledge/docs/nl/x.md")


def expected_kind(topic: str) -> Kind:
    """Topic ids starting with `faq/` are FAQs; every other id is a guide."""
    return "faq" if topic.startswith("faq/") else "guide"


def split_front_matter(text: str, path: Path | str) -> tuple[dict[str, object], str]:
    """Return (front matter mapping, body) or raise EntryError saying what is wrong."""
    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        head = text[:40]
        raise EntryError(path, "front matter", head, "a file starting with '---', YAML, '---'")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise EntryError(path, "front matter", str(exc).splitlines()[0], "valid YAML") from exc
    if not isinstance(meta, dict):
        raise EntryError(path, "front matter", meta, "a YAML mapping of topic, lang, title, kind")
    return meta, text[match.end() :].strip()


def parse_entry(text: str, path: Path | str) -> Entry:
    """Parse one entry file's text; `path` is only used in error messages and as `source`."""
    meta, body = split_front_matter(text, path)
    for optional in ("questions", "terms"):
        if optional in meta and meta[optional] is None:
            meta.pop(optional)
    unknown = sorted(set(meta) - {"topic", "lang", "title", "kind", "questions", "terms"})
    if unknown:
        valid = "topic, lang, title, kind, questions, terms"
        raise EntryError(path, "front matter keys", unknown, valid)
    try:
        entry = Entry.model_validate({**meta, "body": body, "source": str(path)})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "entry"
        raise EntryError(path, field, err.get("input"), _valid_hint(field, err["msg"])) from exc
    _check_kind_rules(entry, path)
    return entry


def _valid_hint(field: str, message: str) -> str:
    hints = {
        "lang": f"one of {', '.join(LANGUAGES)}",
        "kind": "guide or faq",
        "topic": "an id like 'specs/vram' (lowercase words and dashes, one '/')",
        "body": "a non-empty Markdown body after the front matter",
    }
    return hints.get(field.split(".")[0], message)


def _check_kind_rules(entry: Entry, path: Path | str) -> None:
    if entry.kind != expected_kind(entry.topic):
        valid = f"{expected_kind(entry.topic)} (ids starting with 'faq/' are faq, others guide)"
        raise EntryError(path, "kind", entry.kind, valid)
    count = len(entry.questions)
    if entry.kind == "faq" and not MIN_QUESTIONS <= count <= MAX_QUESTIONS:
        valid = f"{MIN_QUESTIONS}-{MAX_QUESTIONS} alternative phrasings for a faq"
        raise EntryError(path, "questions", count, valid)
    if entry.kind == "guide" and count:
        raise EntryError(path, "questions", count, "no questions on a guide (faq only)")
    if any(not q.strip() for q in entry.questions):
        raise EntryError(path, "questions", list(entry.questions), "non-empty strings")
    if any(not t.strip() for t in entry.terms):
        raise EntryError(path, "terms", list(entry.terms), "non-empty strings")


def entry_filename(topic: str) -> str:
    """File name of a topic's entry: `specs/vram` -> `specs__vram.md`."""
    return topic.replace("/", "__") + ".md"


def load_entry(path: Path, label: str | None = None) -> Entry:
    """Read and validate one entry file; checks that its folder and file name match lang and topic.

    `label` replaces the docs folder in the entry's `source` (e.g. "knowledge/docs").
    """
    shown = f"{label}/{path.parent.name}/{path.name}" if label else str(path)
    entry = parse_entry(path.read_text(encoding="utf-8"), shown)
    if path.parent.name != entry.lang:
        raise EntryError(shown, "lang", entry.lang, f"'{path.parent.name}' (the entry's folder)")
    if path.name != entry_filename(entry.topic):
        raise EntryError(shown, "topic", entry.topic, f"the topic of {path.name}")
    return entry


def load_entries(docs_dir: Path = BUILTIN_DOCS_DIR, label: str | None = None) -> list[Entry]:
    """Every entry under `docs_dir/<lang>/*.md`, sorted by (topic, lang); raises on any bad file.

    Sources read `<label>/<lang>/<file>`; the label defaults to "knowledge/docs" for the built-in
    folder and to the folder's name otherwise.
    """
    if label is None:
        label = "knowledge/docs" if docs_dir == BUILTIN_DOCS_DIR else docs_dir.name
    if docs_dir.is_dir():
        bad = sorted(p.name for p in docs_dir.iterdir() if p.is_dir() and p.name not in LANGUAGES)
        if bad:
            raise EntryError(docs_dir, "language folder", bad[0], f"one of {', '.join(LANGUAGES)}")
    paths = sorted(docs_dir.glob("*/*.md")) if docs_dir.is_dir() else []
    entries = [load_entry(p, label) for p in paths]
    seen: dict[tuple[str, str], str] = {}
    for entry in entries:
        key = (entry.topic, entry.lang)
        if key in seen:
            raise EntryError(
                entry.source, "topic", entry.topic, f"unique per language ({seen[key]})"
            )
        seen[key] = entry.source
    return sorted(entries, key=lambda e: (e.topic, e.lang))


def missing_translations(entries: Iterable[Entry], topics: Iterable[str]) -> dict[str, list[str]]:
    """{topic: [languages without an entry]} for every topic that is not in all six languages."""
    have: dict[str, set[str]] = {}
    for entry in entries:
        have.setdefault(entry.topic, set()).add(entry.lang)
    gaps: dict[str, list[str]] = {
        t: [lang for lang in LANGUAGES if lang not in have.get(t, set())] for t in topics
    }
    return {topic: langs for topic, langs in sorted(gaps.items()) if langs}


def shared_topic_ids(topics_yaml: Path) -> list[str]:
    """Topic ids in ../shared/kb/topics.yaml (grouped mappings: {group: {id: description}})."""
    data = yaml.safe_load(topics_yaml.read_text(encoding="utf-8")) or {}
    return [topic for group in data.values() for topic in (group or {})]
