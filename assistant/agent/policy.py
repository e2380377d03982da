"""The offline policy: a chat model that needs no network, no weights and no API key.

It plays the model's part in the agent graph. Each call it reads the conversation, asks the turn
(`assistant.agent.turn`) which tool calls are still needed, and either emits them (one AIMessage
with tool_calls) or, once every result is in, the final answer the turn composed. What to do
comes from the turn's `TurnContext`, which the agent passes in as a bound keyword
(`bind_tools(..., turn=context)`); without one, the policy folds the human messages itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from assistant.agent.outcomes import turn_outcomes
from assistant.agent.routes import next_step
from assistant.agent.turn import TurnContext, fold_messages
from tools.catalog.instances import Catalog

__all__ = ["OfflinePolicy"]


class OfflinePolicy(BaseChatModel):
    """The built-in brain: reads the conversation, calls the tools, composes the answer."""

    catalog: Catalog | None = None
    """Used only when no TurnContext is bound (to match region hints to catalog regions)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return "gpu-advisor-offline-policy"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """The tools are known already; a bound `turn=TurnContext` reaches `_generate`."""
        turn = kwargs.get("turn")
        return self.bind(turn=turn) if turn is not None else self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        ctx: TurnContext = kwargs.get("turn") or fold_messages(messages, self.catalog)
        step = next_step(ctx, turn_outcomes(messages))
        if isinstance(step, AIMessage):
            message = step
        else:
            calls = [
                {"type": "tool_call", "name": c.name, "args": c.args, "id": _call_id(messages, i)}
                for i, c in enumerate(step)
            ]
            message = AIMessage(content="", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=message)])


def _call_id(messages: Sequence[BaseMessage], index: int) -> str:
    """A call id unique within the turn: 'call_<message count>_<index>'."""
    return f"call_{len(messages)}_{index}"
