"""Assistant.respond: the event stream, sessions on disk, refusals, bugs, language choice."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.conversation import MAX_MESSAGE_CHARS, Assistant, Session
from assistant.agent.events import AnswerChunk, Final, Notice, ToolEnd, ToolStart
from assistant.answers.compose import compose_too_long
from assistant.answers.i18n import message as i18n_message
from assistant.settings import Settings
from knowledge.retrieval import Passage
from tests.fakes.app import TinyKnowledge, make_settings
from tools.catalog import builtin_catalog
from tools.catalog.instances import Catalog
from tools.memory import MemoryEstimate
from tools.ranking.models import RankResult

JOB_EN = "I want to fine-tune Llama 3.1 8B with QLoRA on 200M tokens"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return builtin_catalog()


@pytest.fixture
def assistant(tmp_path: Path, catalog: Catalog, knowledge_base: Any) -> Assistant:
    return Assistant(
        Settings(data_dir=tmp_path / "data"), knowledge=knowledge_base, catalog=catalog
    )


def test_events_come_in_order_and_join_into_the_answer(assistant: Assistant) -> None:
    session = Session()
    events = list(assistant.respond(JOB_EN, session))
    starts = [e for e in events if isinstance(e, ToolStart)]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.name for e in starts] == ["estimate_memory", "rank_instances"]
    assert {e.call_id for e in ends} == {e.call_id for e in starts}, "every call finishes"
    assert all(
        events.index(s) < events.index(e) for s in starts for e in ends if e.call_id == s.call_id
    )
    by_name = {e.name: e for e in ends}
    assert isinstance(by_name["estimate_memory"].artifact, MemoryEstimate)
    assert isinstance(by_name["rank_instances"].artifact, RankResult)
    final = events[-1]
    assert isinstance(final, Final)
    chunks = "".join(e.text for e in events if isinstance(e, AnswerChunk))
    assert chunks == final.result.answer
    assert final.result.language == "en" and final.result.grounded
    assert [c.name for c in final.result.tool_calls] == ["estimate_memory", "rank_instances"]
    assert final.result.tool_calls[0].result["model_id"] == "meta-llama/Llama-3.1-8B"


def test_the_session_remembers_the_job(assistant: Assistant) -> None:
    session = Session()
    assert assistant.respond(JOB_EN, session).result.grounded
    assert session.state.model == "meta-llama/Llama-3.1-8B" and session.state.method == "qlora"
    assert [(h.role, h.lang) for h in session.history] == [("user", "en"), ("assistant", "en")]
    result = assistant.respond("and with full fine-tuning?", session).result
    assert result.state["method"] == "full"
    assert result.state["model"] == "meta-llama/Llama-3.1-8B", "earlier slots persist"
    assert result.tool_calls[0].args["method"] == "full"


def test_an_elliptic_follow_up_repeats_the_fit_check_and_survives_a_file(
    assistant: Assistant, tmp_path: Path
) -> None:
    session = Session()
    first = assistant.respond("Can I fine-tune Llama 3.1 8B with LoRA on an RTX 4090?", session)
    assert first.result.intent == "fit_check" and session.last_intent == "fit_check"
    path = tmp_path / "session.json"
    session.save(path)
    again = Session.load(path)
    assert again.last_intent == "fit_check"
    result = assistant.respond("and on an A100 40GB?", again).result
    assert result.intent == "fit_check", "the follow-up asks the same question of another GPU"
    assert result.state["model"] == "meta-llama/Llama-3.1-8B" and result.state.get("gpus") is None
    changed = assistant.respond("and with full fine-tuning?", again).result
    assert changed.intent == "amend" and again.last_intent == "fit_check", "the question stays"
    assert assistant.respond("and on an H100?", again).result.intent == "fit_check"


def test_sessions_survive_a_round_trip_through_a_file(assistant: Assistant, tmp_path: Path) -> None:
    path = tmp_path / "conv" / "session.json"
    session = Session.load(path)
    assert assistant.respond(JOB_EN, session).result.grounded
    session.save(path)
    again = Session.load(path)
    assert again == session, "load(save(s)) == s"
    result = assistant.respond("only spot", again).result
    assert result.state["spot"] == "required" and result.state["method"] == "qlora"


def test_missing_session_file_starts_a_new_conversation(tmp_path: Path) -> None:
    session = Session.load(tmp_path / "nope.json")
    assert session.history == [] and session.state.filled() == {} and session.language is None


def test_over_long_messages_are_refused_politely(assistant: Assistant) -> None:
    session = Session()
    result = assistant.respond("a" * (MAX_MESSAGE_CHARS + 1), session, lang="fr").result
    assert result.answer == compose_too_long("fr", MAX_MESSAGE_CHARS).text
    assert result.tool_calls == [] and session.history == [], "nothing is run or remembered"
    assert assistant.respond("b" * MAX_MESSAGE_CHARS, session).result.answer != result.answer


class ExplodingKnowledge:
    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        raise RuntimeError("index exploded")


def test_a_bug_gives_an_apology_with_an_id_and_the_session_survives(
    tmp_path: Path, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    broken = Assistant(Settings(data_dir=tmp_path), knowledge=ExplodingKnowledge(), catalog=catalog)
    session = Session()
    caplog.set_level(logging.ERROR, logger="assistant")
    result = broken.respond(
        "Wie oft sollte ich auf Spot-Instanzen Checkpoints speichern?", session
    ).result
    assert result.error_id is not None and len(result.error_id) == 8
    assert result.answer == i18n_message("de", "error.apology", error_id=f"`{result.error_id}`")
    (record,) = [r for r in caplog.records if result.error_id in r.getMessage()]
    assert record.exc_info is not None and "index exploded" in str(record.exc_info[1])
    assert len(session.history) == 2, "the exchange is kept"
    follow_up = broken.respond(JOB_EN, session).result
    assert follow_up.error_id is None and follow_up.grounded, "the next turn works"


def test_knowledge_base_is_not_opened_for_a_job_turn(tmp_path: Path, catalog: Catalog) -> None:
    data = tmp_path / "data"
    assistant = Assistant(Settings(data_dir=data), catalog=catalog)
    result = assistant.respond(JOB_EN, Session()).result
    assert result.grounded
    assert not (data / "index").exists(), "the index is opened lazily, on the first search"


def test_language_override_and_switch_mid_conversation(assistant: Assistant) -> None:
    session = Session()
    first = assistant.respond(JOB_EN, session, lang="tr").result
    assert first.language == "tr"
    assert i18n_message("tr", "options.heading") in first.answer
    second = assistant.respond(
        "Je veux affiner Llama 3.1 8B avec QLoRA sur 200 millions de tokens", session
    ).result
    assert second.language == "fr"
    assert i18n_message("fr", "options.heading") in second.answer
    third = assistant.respond("nur Spot", session).result
    assert third.language == "fr", "a two-word message keeps the conversation's language"


def test_turn_result_consumes_the_rest(assistant: Assistant) -> None:
    turn = assistant.respond(JOB_EN, Session())
    first = next(iter(turn))
    assert isinstance(first, ToolStart)
    result = turn.result
    assert result.answer and isinstance(turn.events[-1], Final)
    assert not any(isinstance(e, Notice) for e in turn.events)


@pytest.mark.parametrize(
    ("lang", "text", "model_id"),
    [
        ("nl", "Stable Diffusion XL finetunen met dreambooth, welke GPU huur ik?",
         "stabilityai/stable-diffusion-xl-base-1.0"),
        ("fr", "Affiner LLaVA 1.5 7B : quelle GPU louer ?", "llava-hf/llava-1.5-7b-hf"),
        ("de", "FLUX.1-dev mit LoRA feintunen, 1024px", "black-forest-labs/FLUX.1-dev"),
    ],
)  # fmt: skip
def test_an_image_model_job_gets_its_estimate_and_its_ranking(
    assistant: Assistant, lang: str, text: str, model_id: str
) -> None:
    """Diffusion and vision-language jobs: estimate_memory and rank_instances (the tools the
    CLI's numbers come from), the same model in both, its first pick in the answer; grounded
    like every answer."""
    result = assistant.respond(text, Session()).result
    assert [c.name for c in result.tool_calls] == ["estimate_memory", "rank_instances"]
    estimate, ranking = (call.result for call in result.tool_calls)
    assert estimate["model_id"] == model_id and ranking["job"]["model"] == model_id
    assert ranking["job"]["images"] > 0, "sized in images (or image-text samples)"
    instance_type = ranking["ranked"][0]["instance_id"].split("/", 1)[1]
    assert instance_type in result.answer, "the answer names the first pick"
    single = [row for row in ranking["ranked"] if row["gpu_count"] == 1]
    total = estimate["per_gpu_gib"]["total"]
    assert single and all(row["need_per_gpu_gib"] == total for row in single), (
        "one GPU: the ranking's need is the estimate's"
    )
    assert result.grounded and result.language == lang


@pytest.mark.parametrize(
    ("lang", "text", "model_id", "verdict"),
    [
        ("fr", "Est-ce que je peux affiner LLaVA 1.5 7B sur une seule RTX 4090 ?",
         "llava-hf/llava-1.5-7b-hf", "**Oui, ça tient.**"),
        ("en", "does FLUX.1-dev LoRA fit on my 3090?", "black-forest-labs/FLUX.1-dev",
         "**No, it does not fit.**"),
        ("tr", "SDXL LoRA, 4090'ımda eğitebilir miyim?", "stabilityai/stable-diffusion-xl-base-1.0",
         "**Evet, sığıyor.**"),
    ],
)  # fmt: skip
def test_an_image_model_fit_question_gets_its_verdict(
    assistant: Assistant, lang: str, text: str, model_id: str, verdict: str
) -> None:
    """Issue 25, pattern 4: check_fit knew no diffusion or vision-language model ("nearest:
    google-t5/t5-base"), and "can I ... on a single RTX 4090?" got a ranking without a verdict."""
    result = assistant.respond(text, Session()).result
    assert [c.name for c in result.tool_calls] == ["check_fit"], result.answer
    assert result.tool_calls[0].result["model_id"] == model_id
    assert result.answer.startswith(verdict) and result.language == lang
    assert result.grounded


def test_a_bad_catalog_file_leaves_the_rest_and_says_which_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused file in GPU_ADVISOR_CATALOG_PATHS no longer stops the app (issue 26, defect
    5): the built-in catalog and the good file are used, the log names the file and row."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "provider: aws\ndefaults: {source: t, as_of: 2026-11-01, interconnect: pcie}\n"
        "instances:\n  - {instance_type: a, gpu: L4, gpu_count: 1, price_per_hour: -1}\n"
    )
    good = tmp_path / "good.yaml"
    good.write_text(
        "provider: aws\ndefaults: {source: t, as_of: 2026-11-01, interconnect: pcie}\n"
        "instances:\n  - {instance_type: mine, gpu: L4, gpu_count: 1, price_per_hour: 0.5}\n"
    )
    settings = make_settings(tmp_path / "data").model_copy(update={"catalog_paths": [bad, good]})
    assistant = Assistant(settings, knowledge=TinyKnowledge())
    with caplog.at_level("WARNING", logger="assistant"):
        catalog = assistant.resources.catalog()
    assert catalog.get("aws/mine").price_per_hour == 0.5, "the good file is used"
    assert len(list(catalog)) > 100, "and the built-in catalog"
    assert len(assistant.catalog_refusals) == 1
    refusal = assistant.catalog_refusals[0]
    assert refusal.startswith(f"{bad}: ") and "bad.yaml row 1: field price_per_hour" in refusal
    assert any("catalog file not used" in r.message for r in caplog.records)
