"""Answers in the user's language, written from tool artifacts and the message catalogs.

- `compose_job_answer`: memory summary, the best instances (fit, hours, cost, why), caveats tied
  to the plan, nothing-fits reasons, assumed defaults, notices and citations;
- `compose_guidance_answer`: the best knowledge-base passage, "see also" titles, citations;
- `compose_clarification`: one question for the slot that is missing;
- `compose_tool_error`, `compose_apology`, `compose_too_long`: one short sentence each;
- `compose_fallback_notice`, `compose_grounding_notice`: one-line notices.

No figure is computed here: each is a field of an artifact or the job state, formatted by
`assistant.answers.i18n` for the locale. Tools' own English strings (ranking reasons, error texts)
appear only in English answers; other languages get the same content rebuilt from structured fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from assistant.answers.job import (
    caveats_section,
    defaults_line,
    memory_section,
    nothing_fits_section,
    notices_section,
    options_section,
    plan_input,
)
from assistant.answers.parts import Answer, Citation, PassageLike, Text, cite
from tools.advice import JobNotice, ResolvedJob
from tools.errors import AdvisorError, InvalidInputError, UnknownNameError
from tools.job import JobSpec
from tools.memory import MemoryEstimate
from tools.ranking import RankResult

__all__ = [
    "Answer",
    "Citation",
    "compose_apology",
    "compose_clarification",
    "compose_fallback_notice",
    "compose_grounding_notice",
    "compose_guidance_answer",
    "compose_job_answer",
    "compose_too_long",
    "compose_tool_error",
]

SEE_ALSO = 3
_WORKLOAD_FIELDS = ("tokens", "samples", "epochs", "workload")
_TOOL_TEXT_LANG = "en"  # tools write English; their strings are shown only in English answers


def compose_job_answer(
    lang: str,
    state: JobSpec | None,
    plan: ResolvedJob | None,
    estimate: MemoryEstimate | None,
    ranking: RankResult | None,
    passages: Sequence[PassageLike] = (),
    notices: Sequence[JobNotice] | None = None,
) -> Answer:
    """The answer to a job question. `notices` default to the plan's; the defaults shown are
    the plan's substantive ones (`ResolvedJob.shown_assumptions`)."""
    t = Text(lang)
    blocks: list[str] = []
    if estimate is not None:
        blocks.append(memory_section(t, estimate, plan_input(plan), ranking))
    if ranking is not None and ranking.ranked:
        blocks += [options_section(t, ranking), caveats_section(t, ranking)]
    elif ranking is not None:
        blocks.append(nothing_fits_section(t, ranking))
    if plan is not None:
        blocks.append(defaults_line(t, plan.shown_assumptions("rank")))
    chosen = plan.notices if notices is None and plan is not None else (notices or [])
    blocks.append(notices_section(t, chosen, state))
    citations = cite(passages)
    blocks.append(_sources(t, citations))
    return t.answer(blocks, citations)


def _sources(t: Text, citations: Sequence[Citation]) -> str:
    if not citations:
        return ""
    items = [t.msg("citations.item", title=c.title, language=t.language(c.lang)) for c in citations]
    lines = "\n".join(f"- {item}" for item in items)
    return f"**{t.msg('citations.heading')}**\n{lines}"


def compose_guidance_answer(lang: str, passages: Sequence[PassageLike]) -> Answer:
    """The best passage's text (saying so when it is in another language), then "see also"."""
    t = Text(lang)
    if not passages:
        return t.answer([t.msg("guidance.nothing")])
    best, others = passages[0], _other_topics(passages)
    blocks = [_passage_block(t, best)]
    if others:
        titles = t.listing([p.title for p in others])
        blocks.append(t.msg("guidance.see_also", titles=titles))
    citations = cite([best, *others])
    blocks.append(_sources(t, citations))
    return t.answer(blocks, citations)


def _passage_block(t: Text, passage: PassageLike) -> str:
    lines = []
    if passage.lang_fallback or passage.lang != t.lang:
        wanted, shown = t.language(t.lang), t.language(passage.lang)
        lines.append(f"_{t.msg('guidance.fallback', wanted=wanted, shown=shown)}_")
    lines.append(f"**{passage.title}**\n\n{(passage.answer or passage.text).strip()}")
    return "\n\n".join(lines)


def _other_topics(passages: Sequence[PassageLike]) -> list[PassageLike]:
    seen = {passages[0].topic or passages[0].title}
    others = []
    for p in passages[1:]:
        key = p.topic or p.title
        if key not in seen:
            seen.add(key)
            others.append(p)
    return others[:SEE_ALSO]


def compose_clarification(lang: str, missing: str, passages: Sequence[PassageLike] = ()) -> Answer:
    """One question for the `missing` field; with passages (a mixed question), their guidance
    first."""
    t = Text(lang)
    if missing in ("model", "method"):
        question = t.msg(f"clarify.{missing}")
    elif missing in _WORKLOAD_FIELDS:
        question = t.msg("clarify.workload")
    else:
        question = t.msg("clarify.generic", field=t.label("field", missing))
    if not passages:
        return t.answer([question])
    guidance = compose_guidance_answer(lang, passages)
    return t.answer([guidance.text, question], guidance.citations)


def compose_tool_error(
    lang: str, tool_name: str, error: str | Mapping[str, Any] | AdvisorError
) -> Answer:
    """One sentence saying which step failed and, from the error's fields, why. `error` is the
    exception, its JSON payload (type, message, field/value/valid or kind/name/suggestions) as
    a mapping or a string, or plain text."""
    t = Text(lang)
    action = t.label("error.action", tool_name, t.msg("error.action.other"))
    payload = _error_payload(error)
    if payload.get("kind") is not None and payload.get("name") is not None:
        kind = t.label("error.kind", str(payload["kind"]).lower(), t.msg("error.kind.other"))
        suggestions = [str(s) for s in payload.get("suggestions") or []]
        if suggestions:
            text = t.msg(
                "error.unknown_name", action=action, kind=kind, name=payload["name"],
                suggestions=t.listing(suggestions),
            )  # fmt: skip
        else:
            text = t.msg("error.unknown_name_plain", action=action, kind=kind, name=payload["name"])
    elif payload.get("field") is not None and "value" in payload:
        field = t.label("field", str(payload["field"]))
        text = t.msg("error.invalid_input", action=action, value=payload["value"], field=field)
    elif t.lang == _TOOL_TEXT_LANG and payload.get("message"):
        text = t.msg("error.tool", action=action, detail=str(payload["message"]))
    else:
        text = t.msg("error.tool_plain", action=action)
    return t.answer([text])


def _error_payload(error: str | Mapping[str, Any] | AdvisorError) -> Mapping[str, Any]:
    if isinstance(error, UnknownNameError):
        return {"kind": error.kind, "name": error.name, "suggestions": error.suggestions}
    if isinstance(error, InvalidInputError):
        return {"field": error.field, "value": error.value, "message": str(error)}
    if isinstance(error, Exception):
        return {"message": str(error)}
    if isinstance(error, str):
        try:
            parsed = json.loads(error)
        except ValueError:
            return {"message": error}
        inner = parsed.get("error", parsed) if isinstance(parsed, dict) else None
        return inner if isinstance(inner, dict) else {"message": error}
    return error


def compose_apology(lang: str, error_id: str) -> Answer:
    """A brief apology naming the error id (the traceback is in the log)."""
    t = Text(lang)
    return t.answer([t.msg("error.apology", error_id=f"`{error_id}`")])


def compose_too_long(lang: str, limit: int) -> Answer:
    """A polite refusal of a message over `limit` characters."""
    t = Text(lang)
    return t.answer([t.msg("error.too_long", limit=t.count(limit))])


def compose_fallback_notice(lang: str) -> str:
    """One line: the language model was unreachable, the offline advisor answered."""
    return f"_{Text(lang).msg('notice.fallback')}_"


def compose_grounding_notice(lang: str) -> str:
    """One line: the model's answer was replaced because its figures were not from the tools."""
    return f"_{Text(lang).msg('notice.grounding_replaced')}_"
