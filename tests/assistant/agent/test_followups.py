"""Follow-ups as people type them (issue 25, pattern 3): bare values, verbs of permission and two
changes in one message amend the job in six languages; a question inside a conversation about two
options is answered as a question and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.agent.conversation import Assistant, Session
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog

SDXL = "stabilityai/stable-diffusion-xl-base-1.0"


@pytest.fixture(scope="module")
def advisor(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    settings = make_settings(tmp_path_factory.mktemp("data"))
    return Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog())


@pytest.mark.parametrize(
    ("lang", "first", "follow_up", "changed"),
    [
        ("fr", "QLoRA sur Llama 3.1 8B, 100 millions de tokens", "8k de contexte",
         {"seq_len": 8192}),
        ("fr", "QLoRA sur Llama 3.1 8B, 100 millions de tokens",
         "passe à un contexte de 8k et autorise le spot", {"seq_len": 8192, "spot": "allowed"}),
        ("tr", "Llama 3.1 8B ile QLoRA, 100 milyon token", "bağlamı 8k yap ve spot'a izin ver",
         {"seq_len": 8192, "spot": "allowed"}),
        ("de", "LoRA auf Llama 3.1 8B mit 100 Millionen Tokens", "erlaube spot",
         {"spot": "allowed"}),
        ("es", "LoRA con Llama 3.1 8B y 100 millones de tokens", "permite spot y contexto de 4k",
         {"seq_len": 4096, "spot": "allowed"}),
        ("nl", "LoRA op Llama 3.1 8B met 100 miljoen tokens", "sta spot toe", {"spot": "allowed"}),
        ("en", "fine-tune SDXL with LoRA on 30 pics", "at 1024 res", {"resolution": 1024}),
    ],
)  # fmt: skip
def test_a_follow_up_amends_what_it_names(
    advisor: Assistant, lang: str, first: str, follow_up: str, changed: dict[str, Any]
) -> None:
    session = Session()
    assert advisor.respond(first, session, lang=lang).result.intent == "job"
    before = session.state
    result = advisor.respond(follow_up, session, lang=lang).result
    assert result.intent == "amend", result.answer
    assert {k: getattr(session.state, k) for k in changed} == changed
    others = set(type(before).model_fields) - set(changed)
    assert {k: getattr(session.state, k) for k in others} == {
        k: getattr(before, k) for k in others
    }, "nothing else changes"
    assert result.grounded


def test_a_question_about_two_options_changes_nothing(advisor: Assistant) -> None:
    session = Session()
    first = advisor.respond("QLoRA con Llama 3.1 8B, 100 millones de tokens", session, lang="es")
    assert first.result.intent == "job" and session.state.method == "qlora"
    before = session.state
    result = advisor.respond("vale, ¿y qué diferencia hay entre fp16 y bf16?", session).result
    assert result.intent == "guidance" and result.language == "es"
    assert session.state == before


def test_a_language_job_after_an_image_job_leaves_the_image_fields_out(
    advisor: Assistant,
) -> None:
    """The fuzz test found it: "SDXL at 1024 res", then a Llama job, was refused as "1024 is not
    a valid resolution"; the estimator clears image fields for a language model, and so do the
    tool calls."""
    session = Session()
    assert advisor.respond("SDXL LoRA at 1024 res", session, lang="en").result.intent == "job"
    result = advisor.respond("LoRA on Llama 3.1 8B, 100M tokens", session, lang="en").result
    assert "GiB per GPU" in result.answer, result.answer
    (call, *_) = [c for c in result.tool_calls if c.name == "estimate_memory"]
    assert "resolution" not in call.args and call.args["model"] == "meta-llama/Llama-3.1-8B"
    assert session.state.resolution == 1024, "kept for a return to the image model"


@pytest.mark.parametrize(
    "first", ["FLUX.1-dev LoRA fine-tune, 1024px, 30 images", "LoRA on Llama 3.1 70B, 100M tokens"]
)
def test_why_not_names_the_rule_that_left_the_gpu_out(advisor: Assistant, first: str) -> None:
    """Issue 25, pattern 4: "would a 4090 work for that?" was told "not a GPU you asked for": the
    side ranking for one GPU leaves every other GPU out by that rule, which outnumbered the
    memory rule that left the asked-for GPU out."""
    session = Session()
    assert advisor.respond(first, session, lang="en").result.intent == "job"
    result = advisor.respond("why not an A10G?", session, lang="en").result
    assert result.intent == "why_not"
    assert result.answer.startswith("Every A10G offer was left out: not enough GPU memory"), (
        result.answer
    )


def test_compare_why_not_and_fit_answers_state_their_defaults(advisor: Assistant) -> None:
    """Issue 25, pattern 5: comparison and why-not answers used 100M tokens and 2,048-token
    sequences without a word; a fit answer states what its check assumed."""
    session = Session()
    assert advisor.respond("LoRA on Llama 3.1 8B", session, lang="en").result.intent == "job"
    for question in ("compare an A10G and an L40S for that", "why not an A10G?",
                     "would it fit on my 24 GB card?"):  # fmt: skip
        result = advisor.respond(question, session, lang="en").result
        line = result.answer.rsplit("**Assumed:**", 1)[-1]
        assert "**Assumed:**" in result.answer and "sequence length: 2,048" in line, result.answer
        assert result.grounded, result.ungrounded_numbers
        if result.intent != "fit_check":
            assert "training tokens: 100,000,000" in line, line
