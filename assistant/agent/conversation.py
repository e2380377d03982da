"""The Python API the CLI and the app use: `Assistant(settings).respond(message, session) -> Turn`.

A `Session` is one conversation: its messages, the job state the messages built up, and the last
answer language; it is plain JSON (`Session.load` / `save`), so the CLI's `--session FILE` and the
app's per-browser state hold it the same way. An `Assistant` is shared by every session: it owns
the tools, the catalog and the knowledge base (both opened on first use, once) and the agent
graph.

`respond` returns a `Turn`, an iterable of events (`assistant.agent.events`): a start and an end for
each tool call, notices, chunks of the checked answer, and a `Final` with the `TurnResult`. The
session is updated when the turn completes. A message over `MAX_MESSAGE_CHARS` is refused
politely; a bug is logged with its traceback and an error id, the user gets a short apology with
that id, and the session keeps working.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, Field, model_validator

from assistant.agent.events import (
    AnswerChunk,
    Brain,
    Citation,
    Event,
    Final,
    Notice,
    NoticeKind,
    ToolCallRecord,
    ToolEnd,
    ToolStart,
    TurnResult,
)
from assistant.agent.graph import build_agent, make_chat_model
from assistant.agent.policy import OfflinePolicy
from assistant.agent.tool_results import KnowledgeResult
from assistant.agent.toolbox import KnowledgeSearch, ToolResources, build_tools
from assistant.agent.turn import TurnContext, plan_turn
from assistant.answers import compose
from assistant.languages import choose_language, writer_language
from assistant.settings import Settings
from tools.catalog.instances import Catalog
from tools.catalog.store import load_catalog_leniently
from tools.files import write_atomic
from tools.job import JobSpec

__all__ = ["MAX_MESSAGE_CHARS", "Assistant", "HistoryItem", "Session", "Turn"]

log = logging.getLogger("assistant")

MAX_MESSAGE_CHARS = 4000
HISTORY_FOR_MODEL = 20  # earlier messages an LLM sees (the job state carries the rest)
SESSION_VERSION = 2
# Job fields renamed since version 1 of the session file.
_V1_FIELDS = {"dataset_tokens": "tokens", "dataset_samples": "samples", "region": "regions"}


class HistoryItem(BaseModel):
    """One message of the conversation."""

    role: Literal["user", "assistant"]
    content: str
    lang: str


class Session(BaseModel):
    """One conversation: messages, the job state they built up, the last answer language."""

    version: int = SESSION_VERSION
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    language: str | None = Field(default=None, description="language of the last answer")
    writes: str | None = Field(
        default=None,
        description="language the person writes in, as detected, also one not answered in",
    )
    state: JobSpec = Field(default_factory=JobSpec)
    history: list[HistoryItem] = Field(default_factory=list)
    last_intent: str | None = Field(
        default=None,
        description="intent of the last message that was not an amendment (the question an"
        " elliptic follow-up repeats)",
    )

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Sessions saved by version 1 name three job fields differently; read them as today's
        (nothing a user said is lost)."""
        if isinstance(data, dict) and data.get("version", 1) < SESSION_VERSION:
            state = dict(data.get("state") or {})
            for old, new in _V1_FIELDS.items():
                if old in state:
                    state[new] = state.pop(old)
            if isinstance(state.get("regions"), str):
                state["regions"] = [state["regions"]]
            data = {**data, "state": state, "version": SESSION_VERSION}
        return data

    @classmethod
    def load(cls, path: Path) -> Session:
        """The session saved at `path`, or a new one when the file does not exist."""
        if not path.exists():
            return cls()
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def save(self, path: Path) -> None:
        """Write the session to `path` atomically."""
        write_atomic(path, self.model_dump_json(indent=2))

    def model_messages(self) -> list[BaseMessage]:
        """The recent conversation as chat messages, for the model."""
        recent = self.history[-HISTORY_FOR_MODEL:]
        return [
            HumanMessage(item.content) if item.role == "user" else AIMessage(item.content)
            for item in recent
        ]


class Turn:
    """The events of one turn, produced as they are iterated; `result` runs it to the end."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._source = events
        self.events: list[Event] = []
        self._result: TurnResult | None = None

    def __iter__(self) -> Iterator[Event]:
        yield from self.events
        for event in self._source:
            self.events.append(event)
            if isinstance(event, Final):
                self._result = event.result
            yield event

    @property
    def result(self) -> TurnResult:
        """The turn's result (iterates whatever is left)."""
        for _ in self:
            pass
        assert self._result is not None, "a turn always ends with a Final event"
        return self._result


class Assistant:
    """The advisor: tools, catalog, knowledge base and the agent graph, shared by all sessions.

    `chat_model` overrides the LLM Settings name (tests pass fakes); `knowledge` and `catalog`
    override what Settings would open."""

    def __init__(
        self,
        settings: Settings,
        *,
        chat_model: BaseChatModel | None = None,
        knowledge: KnowledgeSearch | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        self.settings = settings
        self.catalog_refusals: list[str] = []  # catalog files the app could not use, and why
        self.resources = ToolResources(
            (lambda: catalog) if catalog is not None else self._open_catalog,
            (lambda: knowledge) if knowledge is not None else self._open_knowledge,
        )
        self.chat_model = chat_model if chat_model is not None else make_chat_model(settings)
        self.policy = OfflinePolicy()
        self.graph = build_agent(
            build_tools(self.resources), self.policy, self.chat_model, secrets=settings.secrets()
        )

    def _open_catalog(self) -> Catalog:
        """The catalog, started with what can be read: a refused extra file or saved import is
        logged (file, row, what is valid) and kept in `catalog_refusals`; the rest is used."""
        catalog, refused = load_catalog_leniently(
            self.settings.data_dir, self.settings.catalog_paths
        )
        for line in refused:
            log.warning("catalog file not used: %s", line)
        self.catalog_refusals = refused
        return catalog

    def _open_knowledge(self) -> KnowledgeSearch:
        from knowledge.base import KnowledgeBase  # deferred: Chroma and the embedder

        kb = KnowledgeBase(self.settings.knowledge_config())
        kb.open()
        return kb

    def warm_up(self) -> None:
        """Open the catalog and the knowledge base now instead of on the first turn."""
        self.resources.catalog()
        self.resources.knowledge()

    def respond(
        self,
        message: str,
        session: Session,
        *,
        lang: str | None = None,
        catalog: Catalog | None = None,
    ) -> Turn:
        """One turn: the answer to `message` in `session` (language `lang`, else detected),
        ranked from `catalog` (a tab's own quotes over the shared catalog), else the shared
        catalog."""
        return Turn(self._run(message, session, lang, catalog))

    def _support(self, text: str, lang: str) -> float | None:
        """How well the knowledge base covers `text`: a routing hint, None where it has none."""
        try:
            measure = getattr(self.resources.knowledge(), "support", None)
            return float(measure(text, lang)) if measure is not None else None
        except Exception:  # a hint never fails the turn; a search reports its own failure
            log.warning("knowledge support unavailable; routing without it", exc_info=True)
            return None

    # -- the turn ---------------------------------------------------------------------------

    def _run(
        self, message: str, session: Session, override: str | None, own: Catalog | None
    ) -> Iterator[Event]:
        lang = choose_language(
            message[:MAX_MESSAGE_CHARS], override, session.language, session.writes
        )
        if len(message) > MAX_MESSAGE_CHARS:
            answer = compose.compose_too_long(lang, MAX_MESSAGE_CHARS)
            yield from _answer_events(_plain_result(lang, answer.text, session.state, "offline"))
            return
        collected: list[Event] = []
        try:
            catalog = own if own is not None else self.resources.catalog()
            ctx = plan_turn(
                session.state, message, lang, catalog, session.last_intent, self._support
            )
            for event in self._graph_events(ctx, session, message):
                collected.append(event)
                yield event
        except Exception:
            error_id = uuid.uuid4().hex[:8]
            log.exception("turn failed; error id %s", error_id)
            text = compose.compose_apology(lang, error_id).text
            result = _plain_result(lang, text, session.state, "offline", error_id=error_id)
            result.tool_calls = _records(collected)
            yield from _answer_events(result)
            _remember(session, message, result, session.state)
            return
        final = collected[-1]
        assert isinstance(final, Final)
        _remember(session, message, final.result, ctx.state)

    def _graph_events(self, ctx: TurnContext, session: Session, message: str) -> Iterator[Event]:
        inputs = {"messages": [*session.model_messages(), HumanMessage(message)]}
        run = _RunLog()
        for update in self.graph.stream(inputs, context=ctx, stream_mode="updates"):
            for change in update.values():
                if isinstance(change, dict):
                    yield from run.feed(change)
        if run.last is None or run.last.tool_calls:
            raise RuntimeError("the agent stopped without an answer")
        yield from _answer_events(
            _result(ctx, run.state, run.last, run.ordered_ends()), run.notice_kinds()
        )


class _RunLog:
    """What the graph's updates have said so far: tool calls, their results, the state fields."""

    def __init__(self) -> None:
        self.started: dict[str, tuple[ToolStart, float]] = {}
        self.ends: list[ToolEnd] = []
        self.state: dict[str, Any] = {}
        self.last: AIMessage | None = None

    def feed(self, change: dict[str, Any]) -> Iterator[Event]:
        self.state.update({k: v for k, v in change.items() if k != "messages"})
        for msg in change.get("messages", []):
            if isinstance(msg, AIMessage):
                self.last = msg
                for call in msg.tool_calls:
                    start = ToolStart(
                        call_id=call["id"] or "", name=call["name"], args=call["args"]
                    )
                    self.started[start.call_id] = (start, time.perf_counter())
                    yield start
            elif isinstance(msg, ToolMessage) and msg.tool_call_id in self.started:
                start, t0 = self.started[msg.tool_call_id]
                end = ToolEnd(
                    call_id=start.call_id,
                    name=start.name,
                    args=start.args,
                    status=msg.status,
                    content=msg.text,
                    artifact=msg.artifact,
                    duration_s=time.perf_counter() - t0,
                )
                self.ends.append(end)
                yield end

    def ordered_ends(self) -> list[ToolEnd]:
        """Finished calls in the order they were made (parallel calls finish in any order)."""
        order = {call_id: i for i, call_id in enumerate(self.started)}
        return sorted(self.ends, key=lambda end: order[end.call_id])

    def notice_kinds(self) -> list[NoticeKind]:
        return [n["kind"] for n in self.state.get("notices", [])]


# --------------------------------------------------------------------------- results


def _records(events: list[Event]) -> list[ToolCallRecord]:
    return [
        ToolCallRecord(
            name=e.name,
            args=e.args,
            result=_json(e.content),
            status=e.status,
            duration_s=e.duration_s,
        )
        for e in events
        if isinstance(e, ToolEnd)
    ]


def _json(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content


def _citations(last: AIMessage, ends: list[ToolEnd], brain: Brain) -> list[Citation]:
    composed = last.response_metadata.get("advisor_answer")
    if brain != "llm" and isinstance(composed, dict):
        return [Citation.model_validate(c) for c in composed.get("citations", [])]
    seen: dict[tuple[str | None, str], Citation] = {}
    for end in ends:
        if isinstance(end.artifact, KnowledgeResult):
            for p in end.artifact.passages:
                seen.setdefault(
                    (p.topic, p.lang), Citation(topic=p.topic, lang=p.lang, title=p.title)
                )
    return list(seen.values())


def _result(
    ctx: TurnContext, state: dict[str, Any], last: AIMessage, ends: list[ToolEnd]
) -> TurnResult:
    brain: Brain = state.get("brain", "offline")
    notices = [n["text"] for n in state.get("notices", [])]
    grounding = state.get("replaced") or state.get("grounding") or {}
    grounded = bool(grounding.get("grounded", False)) and "replaced" not in state
    return TurnResult(
        language=ctx.lang,
        answer="\n\n".join([*notices, last.text]),
        tool_calls=_records(list(ends)),
        citations=_citations(last, ends, brain),
        state=ctx.state.model_dump(mode="json", exclude_none=True),
        grounded=grounded,
        ungrounded_numbers=list(grounding.get("ungrounded_numbers", [])),
        notices=notices,
        brain=brain,
        intent=ctx.intent,
    )


def _plain_result(
    lang: str, text: str, state: JobSpec, brain: Brain, error_id: str | None = None
) -> TurnResult:
    return TurnResult(
        language=lang,
        answer=text,
        tool_calls=[],
        citations=[],
        state=state.model_dump(mode="json", exclude_none=True),
        grounded=True,
        ungrounded_numbers=[],
        brain=brain,
        error_id=error_id,
    )


def _answer_events(result: TurnResult, kinds: list[NoticeKind] | None = None) -> Iterator[Event]:
    """Notices, then the answer in paragraph chunks, then the Final event."""
    body = result.answer
    for notice, kind in zip(result.notices, kinds or [], strict=True):
        yield Notice(kind=kind, text=notice)
        body = body.removeprefix(notice).lstrip("\n")
    for piece in re.split(r"(?<=\n\n)", body):
        if piece:
            yield AnswerChunk(text=piece)
    yield Final(result=result)


def _remember(session: Session, message: str, result: TurnResult, state: JobSpec) -> None:
    session.history.append(HistoryItem(role="user", content=message, lang=result.language))
    session.history.append(
        HistoryItem(role="assistant", content=result.answer, lang=result.language)
    )
    session.state = state
    session.language = result.language
    session.writes = writer_language(message[:MAX_MESSAGE_CHARS], session.writes)
    if result.intent != "amend":  # an amendment changes the job, the question stays open
        session.last_intent = result.intent
