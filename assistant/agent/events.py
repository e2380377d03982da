"""What a turn emits while it runs, and the pure conversion of those events into chat messages.

`Assistant.respond` yields, in order: a `ToolStart` and a `ToolEnd` (with the typed artifact) for
every tool call, `Notice`s (fallback to the offline policy, an answer replaced after failing the
grounding check), `AnswerChunk`s of the checked answer, then one `Final` with the `TurnResult`.

`events_to_chat_messages(events)` turns the events seen so far into chat messages (plain dicts
with `role`, `content` and optional `metadata`, the shape `gr.ChatMessage` takes): one collapsible
message per tool call (metadata title = the tool name, status pending -> done, duration in
seconds, content = the inputs and a short result), then the answer, then one collapsible message
per citation holding the passage it cites. It imports no UI library, so it is tested directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.tool_results import InstanceList, KnowledgeResult, ModelInfo
from assistant.answers.parts import Citation
from knowledge.retrieval import Passage
from tools.gpus import GPUSpec
from tools.memory import MemoryEstimate
from tools.ranking.models import RankResult
from tools.units import to_gib

__all__ = [
    "AnswerChunk",
    "Citation",
    "Event",
    "Final",
    "Notice",
    "ToolCallRecord",
    "ToolEnd",
    "ToolStart",
    "TurnResult",
    "events_to_chat_messages",
    "summarize_result",
]

Brain = Literal["offline", "llm", "fallback"]
NoticeKind = Literal["fallback", "grounding_replaced", "refused", "error"]


class ToolStart(BaseModel):
    """The model asked for a tool call; it is running now."""

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    name: str
    args: dict[str, Any] = Field(description="the arguments exactly as the model gave them")


class ToolEnd(BaseModel):
    """A tool call finished: its JSON content for the model and its typed artifact."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    name: str
    args: dict[str, Any]
    status: Literal["success", "error"]
    content: str = Field(description="the JSON the model read (an error object on failure)")
    artifact: Any = Field(default=None, description="the typed result; None on failure")
    duration_s: float = Field(ge=0, description="seconds from the call to its result")


class AnswerChunk(BaseModel):
    """A piece of the checked answer, in order; the pieces join into `TurnResult.answer`."""

    type: Literal["answer_chunk"] = "answer_chunk"
    text: str


class Notice(BaseModel):
    """A one-line remark about how the turn went (shown above the answer)."""

    type: Literal["notice"] = "notice"
    kind: NoticeKind
    text: str


class ToolCallRecord(BaseModel):
    """One tool call of the turn as the JSON output lists it."""

    name: str
    args: dict[str, Any]
    result: Any = Field(description="the JSON the tool returned to the model")
    status: Literal["success", "error"]
    duration_s: float


class TurnResult(BaseModel):
    """Everything a turn produced."""

    language: str = Field(description="ISO 639-1 code of the answer")
    answer: str
    tool_calls: list[ToolCallRecord]
    citations: list[Citation]
    state: dict[str, Any] = Field(description="the job as understood after this turn")
    grounded: bool = Field(description="every number in the answer traces to a source")
    ungrounded_numbers: list[str]
    notices: list[str] = Field(default_factory=list)
    brain: Brain = Field(description="who wrote the answer: offline policy, LLM, or fallback")
    error_id: str | None = Field(default=None, description="set when the turn hit a bug")
    intent: str | None = Field(
        default=None,
        description="what the message was routed as: job, fit_check, compare, why_not, amend,"
        " guidance, out_of_scope or small_talk (None: the turn did not route it)",
    )


class Final(BaseModel):
    """The last event of a turn."""

    type: Literal["final"] = "final"
    result: TurnResult


Event = Annotated[ToolStart | ToolEnd | AnswerChunk | Notice | Final, Field(discriminator="type")]


# --------------------------------------------------------------------------- short results


def _gib(n_bytes: float) -> str:
    return f"{to_gib(n_bytes):.1f} GiB"


def summarize_result(artifact: object) -> str:
    """One language-neutral line of figures for a tool's artifact (the UI's collapsed view)."""
    if isinstance(artifact, MemoryEstimate):
        part = artifact.per_gpu
        return (
            f"{_gib(part.total)}/GPU = weights {_gib(part.weights)} + gradients "
            f"{_gib(part.gradients)} + optimizer {_gib(part.optimizer)} + activations "
            f"{_gib(part.activations)} + overhead {_gib(part.overhead)}"
        )
    if isinstance(artifact, RankResult):
        head = f"{artifact.feasible}/{artifact.considered} fit"
        if not artifact.ranked:
            return head
        best = artifact.ranked[0]
        return (
            f"{head}; #1 {best.instance_id} ({best.gpu_count}x {best.gpu}, {best.pricing}): "
            f"${best.price_per_hour:,.2f}/h, {best.hours:,.1f} h, ${best.total_cost:,.2f}"
        )
    if isinstance(artifact, KnowledgeResult):
        return "; ".join(f"{p.title} ({p.lang})" for p in artifact.passages) or "no passages"
    if isinstance(artifact, ModelInfo):
        return f"{artifact.arch.name}: {artifact.total_params / 1e9:,.2f}B parameters"
    if isinstance(artifact, GPUSpec):
        return f"{artifact.name}: {artifact.vram_gib:g} GiB"
    if isinstance(artifact, InstanceList):
        return f"{artifact.matched} instances"
    return ""


def _error_line(content: str) -> str:
    try:
        error = json.loads(content)["error"]
        return str(error.get("message", content))
    except (ValueError, KeyError, TypeError):
        return content


# --------------------------------------------------------------------------- chat messages


def _tool_message(start: ToolStart, end: ToolEnd | None) -> dict[str, Any]:
    inputs = json.dumps(start.args, ensure_ascii=False, sort_keys=True)
    metadata: dict[str, Any] = {"title": start.name, "id": start.call_id, "status": "pending"}
    content = inputs
    if end is not None:
        metadata.update(status="done", duration=round(end.duration_s, 3))
        result = summarize_result(end.artifact) if end.status == "success" else None
        content = f"{inputs}\n→ {result if result is not None else _error_line(end.content)}"
        if end.status == "error":
            metadata["log"] = "error"
    return {"role": "assistant", "content": content, "metadata": metadata}


def _cited_passages(events: Sequence[object], citations: Iterable[Citation]) -> list[Passage]:
    found: dict[tuple[str | None, str], Passage] = {}
    for event in events:
        if isinstance(event, ToolEnd) and isinstance(event.artifact, KnowledgeResult):
            for passage in event.artifact.passages:
                found.setdefault((passage.topic, passage.lang), passage)
    return [found[key] for c in citations if (key := (c.topic, c.lang)) in found]


def events_to_chat_messages(events: Sequence[object]) -> list[dict[str, Any]]:
    """The chat messages for the events seen so far; call again as more arrive."""
    ends = {e.call_id: e for e in events if isinstance(e, ToolEnd)}
    messages: list[dict[str, Any]] = []
    notices: list[str] = []
    chunks: list[str] = []
    final: TurnResult | None = None
    for event in events:
        if isinstance(event, ToolStart):
            messages.append(_tool_message(event, ends.get(event.call_id)))
        elif isinstance(event, Notice):
            notices.append(event.text)
        elif isinstance(event, AnswerChunk):
            chunks.append(event.text)
        elif isinstance(event, Final):
            final = event.result
    answer = final.answer if final is not None else "\n".join([*notices, "".join(chunks)]).strip()
    if answer:
        messages.append({"role": "assistant", "content": answer})
    for passage in _cited_passages(events, final.citations if final else []):
        messages.append(
            {
                "role": "assistant",
                "content": passage.text,
                "metadata": {"title": f"{passage.title} ({passage.lang})", "status": "done"},
            }
        )
    return messages
