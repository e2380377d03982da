"""A scripted chat model for agent-loop tests: replies, tool calls or failures, in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model that replies from a script: AIMessages (with tool_calls or text), strings,
    or exceptions (raised, as an unreachable endpoint would). Records every prompt it got."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def __init__(self, script: Sequence[AIMessage | str | BaseException], **kwargs: Any) -> None:
        super().__init__(messages=iter(list(script)), prompts=[], disable_streaming=True, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        step = next(self.messages)
        if isinstance(step, BaseException):
            raise step
        message = AIMessage(content=step) if isinstance(step, str) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A tool call as a chat model emits it."""
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}
