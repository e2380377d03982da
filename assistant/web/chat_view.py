"""What the chat column shows: a turn's messages with one list of sources, the message a form
edit adds, the first screen's examples, and the hints for a message that cannot be sent.

`chat_messages` takes the messages `assistant.agent.events.events_to_chat_messages` makes (tool
calls, the answer, one collapsible message per cited passage) and shows the sources once: the
answer's own "Sources" list is dropped and the cited passages are grouped under one collapsible
"Sources (n)" message, each passage folded inside it. No UI library is imported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assistant.agent.events import Final, events_to_chat_messages
from assistant.answers.compose import compose_job_answer
from assistant.answers.i18n import message
from assistant.answers.job import field_value
from assistant.answers.parts import Text
from assistant.web import cells
from assistant.web.form import changed_fields
from assistant.web.panel import PanelData
from assistant.web.ui_strings import example_prompts, ui_format
from tools.job import JobSpec

__all__ = [
    "SOURCES_ID",
    "chat_examples",
    "chat_messages",
    "form_update_message",
    "message_problem",
    "without_sources",
]

SOURCES_ID = "sources"


def without_sources(answer: str, lang: str) -> str:
    """`answer` without its closing "Sources" list (the chat shows the sources once, below)."""
    marker = f"**{message(lang, 'citations.heading')}**\n"
    head, found, _ = answer.rpartition(marker)
    return head.rstrip() if found else answer


def chat_messages(events: Sequence[object], ui_lang: str) -> list[dict[str, Any]]:
    """The chat messages for a turn's events so far: tool calls, the answer (without its sources
    list), then the cited passages under one "Sources (n)" message (in the answer's language;
    `ui_lang` until the turn has one)."""
    messages = events_to_chat_messages(events)
    final = next((e for e in reversed(events) if isinstance(e, Final)), None)
    lang = final.result.language if final is not None else ui_lang
    plain = [i for i, m in enumerate(messages) if not m.get("metadata")]
    if not plain:
        return messages
    answer_at = plain[-1]
    cited = messages[answer_at + 1 :]
    if not cited:
        return messages
    answer = dict(messages[answer_at])
    answer["content"] = without_sources(str(answer["content"]), lang)
    title = ui_format(lang, "sources_title", count=cells.count(len(cited), lang))
    group = {
        "role": "assistant",
        "content": "",
        "metadata": {"title": title, "id": SOURCES_ID, "status": "done"},
    }
    children = [{**m, "metadata": {**m["metadata"], "parent_id": SOURCES_ID}} for m in cited]
    return [*messages[:answer_at], answer, group, *children]


def form_update_message(before: JobSpec, data: PanelData, lang: str) -> str | None:
    """What the chat says after a form edit, in `lang`: which fields changed, then the answer
    the chat would give for the job now (memory, best options, assumptions), from the panel's
    own results, so the chat and the panel tell the same story. None when nothing changed."""
    after = data.state
    if after is None:
        return None
    changes = changed_fields(before, after)
    if not changes:
        return None
    t = Text(lang)
    words = []
    for name, value in changes:
        label = t.label("field", name)
        if value is None:
            words.append(ui_format(lang, "form_cleared", field=label))
        else:
            shown = (
                t.model(after.model_label() or "")
                if name == "model"
                else field_value(t, name, value)
            )
            words.append(f"{label} {shown}")
    heading = ui_format(lang, "form_updated", changes=t.listing(words))
    if data.estimate is None and data.ranking is None:
        return heading
    answer = compose_job_answer(lang, after, data.plan, data.estimate, data.ranking)
    return f"_{heading}_\n\n{without_sources(answer.text, lang)}"


def chat_examples(lang: str) -> list[dict[str, str]]:
    """The first screen's example requests in the interface language, as chat examples."""
    return [{"text": prompt} for prompt in example_prompts(lang)]


def message_problem(text: str, limit: int, lang: str) -> str | None:
    """Why a message cannot be sent, in `lang` (empty, or over `limit` characters), or None."""
    if not text.strip():
        return ui_format(lang, "empty_message")
    if len(text) > limit:
        return ui_format(
            lang, "too_long", count=cells.count(len(text), lang), limit=cells.count(limit, lang)
        )
    return None
