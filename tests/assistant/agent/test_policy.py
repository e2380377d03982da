"""The offline policy as a chat model: bound to the turn, or folding the conversation itself."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableBinding

from assistant.agent.policy import OfflinePolicy
from tests.assistant.agent.test_turn import ctx_for
from tools.catalog.instances import Catalog


def test_bind_tools_returns_the_policy_or_a_binding_with_the_turn(catalog: Catalog) -> None:
    policy = OfflinePolicy()
    assert policy.bind_tools([]) is policy
    ctx = ctx_for("Llama 3.1 8B QLoRA", "en", catalog)
    bound = policy.bind_tools([], tool_choice=None, turn=ctx)
    assert isinstance(bound, RunnableBinding) and bound.kwargs == {"turn": ctx}


def test_without_a_context_the_policy_folds_the_conversation(catalog: Catalog) -> None:
    policy = OfflinePolicy(catalog=catalog)
    reply = policy.invoke(
        [
            HumanMessage(
                "Ich möchte Llama 3.1 8B mit QLoRA auf 200 Millionen Tokens feinabstimmen"
            ),
            AIMessage("..."),
            HumanMessage("nur Spot"),
        ]
    )
    assert isinstance(reply, AIMessage)
    names = [call["name"] for call in reply.tool_calls]
    assert names == ["estimate_memory", "rank_instances"]
    assert reply.tool_calls[1]["args"]["spot"] == "required", "the last message amends the job"
    assert reply.tool_calls[1]["args"]["tokens"] == 200_000_000.0, "earlier messages still count"
