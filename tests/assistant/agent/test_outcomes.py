"""The tool calls of a turn and their results."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from assistant.agent.outcomes import turn_outcomes


def test_outcomes_start_at_the_last_user_message() -> None:
    old = [
        HumanMessage("first"),
        AIMessage(
            "",
            tool_calls=[
                {"type": "tool_call", "name": "lookup_gpu", "args": {"name": "A"}, "id": "a"}
            ],
        ),
        ToolMessage("{}", tool_call_id="a"),
        AIMessage("answer"),
    ]
    new = [
        HumanMessage("second"),
        AIMessage(
            "",
            tool_calls=[
                {"type": "tool_call", "name": "lookup_gpu", "args": {"name": "B"}, "id": "b"}
            ],
        ),
        ToolMessage("{}", tool_call_id="b", artifact=1),
    ]
    outcomes = turn_outcomes([*old, *new])
    assert [(o.name, o.args, o.artifact) for o in outcomes] == [("lookup_gpu", {"name": "B"}, 1)]
