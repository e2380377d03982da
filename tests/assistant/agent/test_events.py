"""events_to_chat_messages: the pure conversion the app streams from, tested without a UI."""

from __future__ import annotations

import json

import pytest

from assistant.agent.events import (
    AnswerChunk,
    Citation,
    Final,
    Notice,
    ToolEnd,
    ToolStart,
    TurnResult,
    events_to_chat_messages,
    summarize_result,
)
from assistant.agent.tool_results import InstanceList, KnowledgeResult
from knowledge.retrieval import Passage
from tools.catalog import builtin_catalog
from tools.gpus import lookup_gpu
from tools.memory import EstimateInput, MemoryEstimate, estimate
from tools.ranking import rank
from tools.ranking.models import RankRequest, RankResult, Workload
from tools.units import to_gib

ARGS = {"model": "llama 3.1 8b", "method": "qlora"}


@pytest.fixture(scope="module")
def memory() -> MemoryEstimate:
    return estimate(EstimateInput(model="llama 3.1 8b", method="qlora"))


@pytest.fixture(scope="module")
def ranking() -> RankResult:
    job = EstimateInput(model="llama 3.1 8b", method="qlora")
    return rank(RankRequest(job=job, workload=Workload(tokens=1e8)), builtin_catalog())


PASSAGE = Passage(
    topic="faq/training-spot",
    lang="de",
    title="Ist Spot sicher?",
    text="Ja, mit Checkpoints.",
    source="de/faq__training-spot.md",
    score=0.4,
    chunk_id="faq/training-spot#de#0",
    query_lang="de",
    lang_fallback=False,
)


def _result(answer: str, citations: list[Citation]) -> TurnResult:
    return TurnResult(
        language="de",
        answer=answer,
        tool_calls=[],
        citations=citations,
        state={},
        grounded=True,
        ungrounded_numbers=[],
        brain="offline",
    )


def test_pending_tool_call_is_a_collapsible_message() -> None:
    events = [ToolStart(call_id="c1", name="estimate_memory", args=ARGS)]
    assert events_to_chat_messages(events) == [
        {
            "role": "assistant",
            "content": json.dumps(ARGS, sort_keys=True),
            "metadata": {"title": "estimate_memory", "id": "c1", "status": "pending"},
        }
    ]


def test_finished_call_shows_duration_inputs_and_short_result(memory: MemoryEstimate) -> None:
    end = ToolEnd(
        call_id="c1",
        name="estimate_memory",
        args=ARGS,
        status="success",
        content="{}",
        artifact=memory,
        duration_s=0.01234,
    )
    (message,) = events_to_chat_messages(
        [ToolStart(call_id="c1", name="estimate_memory", args=ARGS), end]
    )
    assert message["metadata"] == {
        "title": "estimate_memory",
        "id": "c1",
        "status": "done",
        "duration": 0.012,
    }
    total = f"{to_gib(memory.per_gpu.total):.1f} GiB/GPU"
    assert message["content"].startswith(json.dumps(ARGS, sort_keys=True) + "\n→ " + total)


def test_failed_call_shows_the_error_message() -> None:
    content = json.dumps({"error": {"type": "UnknownNameError", "message": "unknown GPU 'X'"}})
    events = [
        ToolStart(call_id="c2", name="lookup_gpu", args={"name": "X"}),
        ToolEnd(
            call_id="c2",
            name="lookup_gpu",
            args={"name": "X"},
            status="error",
            content=content,
            duration_s=0.001,
        ),
    ]
    (message,) = events_to_chat_messages(events)
    assert message["content"] == '{"name": "X"}\n→ unknown GPU \'X\''
    assert message["metadata"]["status"] == "done"
    assert message["metadata"]["log"] == "error"


def test_answer_streams_then_final_replaces_it_and_citations_expand() -> None:
    search = KnowledgeResult(query="spot?", lang="de", passages=[PASSAGE])
    events: list[object] = [
        ToolStart(call_id="s", name="search_knowledge", args={"query": "spot?"}),
        ToolEnd(
            call_id="s",
            name="search_knowledge",
            args={"query": "spot?"},
            status="success",
            content="{}",
            artifact=search,
            duration_s=0.002,
        ),
        Notice(kind="fallback", text="Offline."),
        AnswerChunk(text="Ja, "),
        AnswerChunk(text="mit Checkpoints."),
    ]
    streaming = events_to_chat_messages(events)
    assert streaming[-1] == {"role": "assistant", "content": "Offline.\nJa, mit Checkpoints."}
    cite = Citation(topic="faq/training-spot", lang="de", title="Ist Spot sicher?")
    events.append(Final(result=_result("Offline.\n\nJa, mit Checkpoints.", [cite])))
    done = events_to_chat_messages(events)
    assert [m["content"] for m in done[1:]] == [
        "Offline.\n\nJa, mit Checkpoints.",
        "Ja, mit Checkpoints.",
    ], "the final answer, then the cited passage's text"
    assert done[2]["metadata"] == {"title": "Ist Spot sicher? (de)", "status": "done"}


def test_messages_follow_event_order_for_parallel_calls(memory: MemoryEstimate) -> None:
    events = [
        ToolStart(call_id="a", name="estimate_memory", args=ARGS),
        ToolStart(call_id="b", name="lookup_gpu", args={"name": "H100"}),
        ToolEnd(
            call_id="b",
            name="lookup_gpu",
            args={"name": "H100"},
            status="success",
            content="{}",
            artifact=lookup_gpu("H100"),
            duration_s=0.1,
        ),
    ]
    messages = events_to_chat_messages(events)
    assert [(m["metadata"]["title"], m["metadata"]["status"]) for m in messages] == [
        ("estimate_memory", "pending"),
        ("lookup_gpu", "done"),
    ]


def test_summaries_quote_the_artifacts(ranking: RankResult) -> None:
    best = ranking.ranked[0]
    assert summarize_result(ranking) == (
        f"{ranking.feasible}/{ranking.considered} fit; #1 {best.instance_id} "
        f"({best.gpu_count}x {best.gpu}, {best.pricing}): ${best.price_per_hour:,.2f}/h, "
        f"{best.hours:,.1f} h, ${best.total_cost:,.2f}"
    )
    assert summarize_result(lookup_gpu("H100")) == "NVIDIA H100 SXM5 80GB: 80 GiB"
    assert summarize_result(InstanceList(instances=[], matched=0)) == "0 instances"
    assert summarize_result(KnowledgeResult(query="q", lang=None, passages=[])) == "no passages"
