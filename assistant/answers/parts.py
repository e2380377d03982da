"""Pieces shared by the answer composers: the `Answer` model, citations, and a `Text` helper
that writes catalog messages and locale-formatted figures for one language."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Protocol

from pydantic import BaseModel, Field, computed_field

from assistant.answers import i18n
from assistant.answers.literal import as_text
from assistant.grounding.figures import shown_figures
from assistant.languages import resolve_lang
from tools.languages import Language

ESTIMATED_PREFIX = "estimated-"  # tools.architectures.param_guess ids of guessed dimensions

__all__ = ["Answer", "Citation", "PassageLike", "Text", "cite", "figures_in"]


class Citation(BaseModel):
    """A knowledge-base passage an answer relies on."""

    topic: str | None = Field(description="topic id, e.g. 'provider/spot-checkpoint-interval'")
    lang: str = Field(description="language of the passage, ISO 639-1")
    title: str = Field(description="the passage's title")


class Answer(BaseModel):
    """A composed answer: Markdown text, its citations, and every figure it shows.

    `numbers_shown` is read from `text` when asked for or dumped (the parse is cached by text):
    a composer that wraps an answer in another (a line of changes before it) would otherwise
    parse the inner text for nothing, about 1 ms for a 2 kB answer."""

    lang: Language
    text: str = Field(description="the answer, Markdown")
    citations: list[Citation] = Field(default_factory=list)

    @computed_field(description="every figure in `text`, as written (first reading)")  # type: ignore[prop-decorator]
    @property
    def numbers_shown(self) -> list[float]:
        return figures_in(self.text, self.lang)


class PassageLike(Protocol):
    """What the composers read from a retrieved passage (knowledge.retrieval.Passage)."""

    @property
    def topic(self) -> str | None: ...
    @property
    def lang(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def answer(self) -> str: ...
    @property
    def lang_fallback(self) -> bool: ...


def figures_in(text: str, lang: str | None = None) -> list[float]:
    """Every number `text` shows, as written (the first reading of each; dates excluded);
    `lang`, the text's language, settles a lone "1,234" as the grounding check reads it (and
    shares that reading: the answer is parsed once a turn)."""
    numbers, _ = shown_figures(text, lang)
    return [n.readings[0][0].value for n in numbers]


def cite(passages: Iterable[PassageLike]) -> list[Citation]:
    """One citation per (topic, language), in order."""
    seen: dict[tuple[str | None, str, str], Citation] = {}
    for p in passages:
        key = (p.topic, p.lang, p.title if p.topic is None else "")
        seen.setdefault(key, Citation(topic=p.topic, lang=p.lang, title=p.title))
    return list(seen.values())


class Text:
    """Messages and figures in one language: `t.msg(key, ...)`, `t.money(...)`, ..."""

    def __init__(self, lang: str) -> None:
        self.lang: Language = resolve_lang(lang)

    def msg(self, key: str, /, **values: object) -> str:
        return i18n.message(self.lang, key, **values)

    def plural(self, key: str, count: float, /, **values: object) -> str:
        return i18n.plural(self.lang, key, count, **values)

    def label(self, group: str, name: str, fallback: str | None = None) -> str:
        """The catalog's word for `name` in `group` ('method', 'lora' -> 'LoRA'), else
        `fallback` (default: the name itself)."""
        key = f"{group}.{name}"
        if i18n.has_message(self.lang, key):
            return self.msg(key)
        return name if fallback is None else fallback

    def join(self, items: Sequence[str]) -> str:
        """Clauses joined with the language's separator ('; ', French ' ; ')."""
        return self.msg("punct.separator").join(items)

    def listing(self, items: Sequence[str]) -> str:
        """'a, b and c' the language's way."""
        return i18n.format_list(list(items), self.lang)

    def money(self, amount: float, currency: str = "USD") -> str:
        return i18n.format_money(amount, currency, self.lang)

    def gib(self, n_bytes: float) -> str:
        return i18n.format_gib(n_bytes, self.lang)

    def hours(self, hours: float) -> str:
        return i18n.format_hours(hours, self.lang)

    def duration(self, hours: float) -> str:
        return i18n.format_duration(hours, self.lang)

    def percent(self, fraction: float) -> str:
        return i18n.format_percent(fraction, self.lang)

    def count(self, value: float) -> str:
        return i18n.format_count(value, self.lang)

    def number(self, value: float, digits: int = 1) -> str:
        return i18n.format_number(value, self.lang, digits)

    def date(self, day: date) -> str:
        return i18n.format_date(day, self.lang)

    def model(self, name: str, model_id: str = "") -> str:
        """A model's name, shown as text (a name from an uploaded file may hold markup); one
        estimated from a bare count ('estimated-8B') in words of the language ('~8B
        parameters, dimensions estimated')."""
        if model_id.startswith(ESTIMATED_PREFIX):
            return self.msg("model.estimated", size=model_id[len(ESTIMATED_PREFIX) :])
        return as_text(name)

    def language(self, code: str) -> str:
        return i18n.language_name(code, self.lang)

    def answer(self, blocks: Iterable[str], citations: Sequence[Citation] = ()) -> Answer:
        """The blocks (empty ones dropped) as paragraphs, with the figures they show."""
        text = "\n\n".join(b.strip() for b in blocks if b and b.strip())
        return Answer(lang=self.lang, text=text, citations=list(citations))
