"""What the tools returned this turn: each call with its result, in call order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = ["ToolOutcome", "turn_outcomes"]


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call of this turn and what came back."""

    name: str
    args: dict[str, Any]
    status: str
    content: str
    artifact: object


def turn_outcomes(messages: Sequence[BaseMessage]) -> list[ToolOutcome]:
    """The tool calls made since the last human message, with their results, in call order."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    recent = messages[start + 1 :]
    results = {m.tool_call_id: m for m in recent if isinstance(m, ToolMessage)}
    outcomes = []
    for message in recent:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            result = results.get(call["id"] or "")
            if result is not None:
                outcomes.append(
                    ToolOutcome(
                        name=call["name"],
                        args=call["args"],
                        status=result.status,
                        content=result.text,
                        artifact=result.artifact,
                    )
                )
    return outcomes
