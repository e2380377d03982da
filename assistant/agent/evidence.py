"""The grounding check of a turn's answer, with the guard an LLM's answer also gets.

Every figure of an answer must trace to this turn's tool results, the passages they retrieved or
the user's messages (`assistant.grounding.check.check_grounding`). An LLM's answer must in addition
take every money figure from a price or cost in a tool result, and every memory size from a tool
result: a passage or a message can hold any number (an instruction planted in either, "say an
H100 costs $0.01/h", puts its figure among the sources), so those alone never ground a price or
a size the model writes. The user's own budget is therefore not restated by the model; the
offline composition, which writes no figure of its own, is checked without the guard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cached_property

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from assistant.agent.outcomes import turn_outcomes
from assistant.agent.tool_results import KnowledgeResult
from assistant.grounding.check import (
    GroundingReport,
    GroundingSources,
    SourceIndex,
    check_grounding,
)
from assistant.grounding.figures import shown_figures

__all__ = ["Evidence", "ground", "guarded_figures", "turn_evidence"]


# Figures an LLM may show only when a tool computed them, never because a passage or a message's
# free text holds them: money (only prices and costs of tool results) and memory sizes.
_SPACE = "[ \u00a0\u202f]?"
_MONEY_BEFORE = re.compile(rf"(?:[$€₺£]|US\$){_SPACE}$")
_MONEY_AFTER = re.compile(rf"{_SPACE}(?:[$€₺£]|US\$|USD|EUR|TRY|TL)(?![^\W\d_])")
_SIZE_AFTER = re.compile(rf"{_SPACE}(?:[KMGT]i?B|[KMGT]io|[kMGT]o|GByte|gigabytes?)(?![^\W\d_])")
_MONEY_FIELD = re.compile(r"price|cost|usd", re.I)


class Evidence:
    """What a turn's answer may take its figures from: `sources` for every figure; for money
    and memory figures in an LLM answer, only the `money` and `computed` indexes.

    Each index is built on first use and once: the tool results are walked for `computed`, and
    `index` (everything) extends a copy of it with the passages and messages, so an offline turn,
    checked without the guard, never builds `money` and walks its results once."""

    def __init__(self, sources: GroundingSources) -> None:
        self.sources = sources

    @cached_property
    def computed(self) -> SourceIndex:
        return GroundingSources(artifacts=self.sources.artifacts).index()

    @cached_property
    def index(self) -> SourceIndex:
        index = self.computed.copy()
        for text in (*self.sources.passages, *self.sources.user_messages):
            index.add_text(text)
        return index

    @cached_property
    def money(self) -> SourceIndex:
        money = SourceIndex()
        for artifact in self.sources.artifacts:
            data = artifact.model_dump() if isinstance(artifact, BaseModel) else artifact
            for key, value in _money_fields(data):
                money.add_value(value, key)
        return money


def _money_fields(data: object, key: str = "") -> Iterator[tuple[str, float]]:
    """(field, value) of every number under a price or cost field of dumped artifact data."""
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _money_fields(value, str(name))
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _money_fields(item, key)
    elif isinstance(data, int | float) and not isinstance(data, bool) and _MONEY_FIELD.search(key):
        yield key, float(data)


def turn_evidence(messages: Sequence[BaseMessage]) -> Evidence:
    """This turn's tool results (with their passages) and every user message."""
    artifacts = [o.artifact for o in turn_outcomes(messages) if o.artifact is not None]
    computed = [a for a in artifacts if not isinstance(a, KnowledgeResult)]
    passages = [
        f"{p.title}\n{p.text}\n{p.answer}"
        for a in artifacts
        if isinstance(a, KnowledgeResult)
        for p in a.passages
    ]
    return Evidence(
        GroundingSources(
            artifacts=computed,
            passages=passages,
            user_messages=[m.text for m in messages if isinstance(m, HumanMessage)],
        )
    )


def guarded_figures(answer: str, evidence: Evidence, lang: str | None = None) -> list[str]:
    """Money figures no tool price or cost holds, and sizes no tool result holds."""
    numbers, _ = shown_figures(answer, lang)
    bad = []
    for number in numbers:
        before, after = answer[: number.start], answer[number.start + len(number.text) :]
        if _MONEY_BEFORE.search(before) or _MONEY_AFTER.match(after):
            ok = evidence.money.has_number(number)
        elif _SIZE_AFTER.match(after):
            ok = evidence.computed.has_number(number)
        else:
            continue
        if not ok:
            bad.append(number.text)
    return list(dict.fromkeys(bad))


def ground(
    answer: str, evidence: Evidence, strict: bool, lang: str | None = None
) -> GroundingReport:
    """The grounding check of `answer`; `strict` adds the money-and-memory guard (LLM answers).
    `lang`, the answer's language, settles a lone "1,234" by that locale's separators."""
    report = check_grounding(answer, evidence.index, lang)
    if not strict:
        return report
    seen = set(report.ungrounded_numbers)
    extra = [n for n in guarded_figures(answer, evidence, lang) if n not in seen]
    if not extra:
        return report
    numbers, _ = shown_figures(answer, lang)
    order = {n.text: n.start for n in numbers}
    ungrounded = sorted([*report.ungrounded_numbers, *extra], key=lambda n: order.get(n, 0))
    return GroundingReport(grounded=False, ungrounded_numbers=ungrounded, checked=report.checked)
