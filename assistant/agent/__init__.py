"""The agent: one LangChain graph over the advisor's tools, with an offline brain or an LLM.

`conversation` is the Python API (`Assistant`, `Session`, `Turn`), `graph` the agent graph and
its middleware, `policy` the offline brain, `toolbox` and `tool_args` the LangChain tools and
their argument schemas, `events` what a turn emits, and `evidence` what an answer may cite.
"""

from assistant.agent.conversation import MAX_MESSAGE_CHARS, Assistant, Session, Turn
from assistant.agent.events import TurnResult, events_to_chat_messages
from assistant.agent.toolbox import TOOL_NAMES, ToolResources, build_tools

__all__ = [
    "MAX_MESSAGE_CHARS",
    "TOOL_NAMES",
    "Assistant",
    "Session",
    "ToolResources",
    "Turn",
    "TurnResult",
    "build_tools",
    "events_to_chat_messages",
]
