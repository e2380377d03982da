"""GPU Advisor's assistant: `Assistant(settings).respond(message, session) -> Turn`.

The names below load on first use, so importing a sub-module (the CLI, settings) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.agent.conversation import Assistant, Session, Turn
    from assistant.agent.events import TurnResult, events_to_chat_messages

__all__ = ["Assistant", "Session", "Turn", "TurnResult", "events_to_chat_messages"]

_HOMES = {
    "Assistant": "assistant.agent.conversation",
    "Session": "assistant.agent.conversation",
    "Turn": "assistant.agent.conversation",
    "TurnResult": "assistant.agent.events",
    "events_to_chat_messages": "assistant.agent.events",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'assistant' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
