"""The chat column's view: sources shown once, the message a form edit adds, examples, and the
hints for a message that cannot be sent."""

from __future__ import annotations

from assistant.agent.events import AnswerChunk, Citation, Final, ToolEnd, ToolStart, TurnResult
from assistant.agent.tool_results import KnowledgeResult
from assistant.web.chat_view import (
    SOURCES_ID,
    chat_examples,
    chat_messages,
    form_update_message,
    message_problem,
    without_sources,
)
from assistant.web.panel import compute_panel
from assistant.web.ui_strings import example_prompts
from knowledge.retrieval import Passage
from tests.fakes.catalogs import web_catalog
from tools.job import JobSpec

ANSWER = "Use checkpoints.\n\n**Kaynaklar**\n- Spot (Türkçe)\n- Egress (Türkçe)"


def _passage(topic: str, title: str) -> Passage:
    return Passage(
        topic=topic,
        lang="tr",
        title=title,
        text=f"{title} metni.",
        source=f"{topic}.md",
        score=0.5,
        chunk_id=f"{topic}#tr#0",
        query_lang="tr",
        lang_fallback=False,
    )


def _turn() -> list[object]:
    passages = [_passage("spot", "Spot"), _passage("egress", "Egress")]
    result = TurnResult(
        language="tr",
        answer=ANSWER,
        tool_calls=[],
        state={},
        grounded=True,
        ungrounded_numbers=[],
        brain="offline",
        citations=[
            Citation(topic="spot", lang="tr", title="Spot"),
            Citation(topic="egress", lang="tr", title="Egress"),
        ],
    )
    return [
        ToolStart(call_id="k", name="search_knowledge", args={"query": "spot"}),
        ToolEnd(
            call_id="k",
            name="search_knowledge",
            args={"query": "spot"},
            status="success",
            content="{}",
            artifact=KnowledgeResult(query="spot", lang="tr", passages=passages),
            duration_s=0.01,
        ),
        AnswerChunk(text=ANSWER),
        Final(result=result),
    ]


def test_sources_are_listed_once_under_one_collapsible_message() -> None:
    messages = chat_messages(_turn(), "en")
    assert [m.get("metadata", {}).get("title") for m in messages] == [
        "search_knowledge",
        None,
        "Kaynaklar (2)",
        "Spot (tr)",
        "Egress (tr)",
    ], "the tool call, the answer, then the sources (in the answer's language)"
    assert messages[1]["content"] == "Use checkpoints.", "the answer's own list is dropped"
    assert messages[2]["metadata"]["id"] == SOURCES_ID and messages[2]["content"] == ""
    assert [m["metadata"]["parent_id"] for m in messages[3:]] == [SOURCES_ID, SOURCES_ID]
    assert messages[3]["content"] == "Spot metni.", "each passage folded inside"


def test_a_turn_without_sources_is_left_as_it_is() -> None:
    events = [AnswerChunk(text="Hello")]
    assert chat_messages(events, "en") == [{"role": "assistant", "content": "Hello"}]
    assert without_sources("No list here.", "en") == "No list here."


def test_a_form_edit_says_what_changed_and_answers_for_the_new_job() -> None:
    before = JobSpec(model="meta-llama/Llama-3.1-8B", method="lora", tokens=1e8)
    after = before.model_copy(update={"method": "qlora", "tokens": None})
    text = form_update_message(before, compute_panel(after, web_catalog()), "en")
    assert text is not None
    head, _, body = text.partition("\n\n")
    assert head == "_Updated from the form: method QLoRA and training tokens left open._"
    assert body.startswith("**Memory**\nLlama 3.1 8B (QLoRA, bf16 mixed precision) needs about")
    assert "**Recommended instances**" in body and "**Sources**" not in body
    assert form_update_message(before, compute_panel(before, web_catalog()), "en") is None
    cleared = form_update_message(
        before, compute_panel(JobSpec(method="lora", tokens=1e8), web_catalog()), "de"
    )
    assert cleared == "Über das Formular geändert: Modell offen gelassen."


def test_first_screen_examples_are_in_the_interface_language() -> None:
    assert chat_examples("nl") == [{"text": p} for p in example_prompts("nl")]


def test_an_empty_or_over_long_message_gets_a_hint_with_the_limit() -> None:
    assert message_problem("   ", 4000, "fr") == (
        "Écrivez d'abord un message, ou choisissez un des exemples."
    )
    assert message_problem("x" * 20_000, 4000, "en") == (
        "Your message has 20,000 characters; the limit is 4,000. Shorten it and send it again: "
        "nothing was sent."
    )
    assert message_problem("x" * 4000, 4000, "en") is None, "the limit itself is allowed"
