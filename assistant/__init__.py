"""GPU Advisor's assistant: `Assistant(settings).respond(message, session) -> Turn`.

The names below load on first use, so importing a sub-module (the CLI, settings) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.lazy import on_first_use

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


__getattr__ = on_first_use(__name__, _HOMES)
