"""The load benchmark's own checks: each session's job is its own, the cross-talk check catches
a foreign answer or history, and the CPU breakdown files py-spy stacks in the right bucket."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.load import JOB_TURNS, LANGS, MAX_SESSIONS, SCRIPTS, cross_talk, marker, message
from benchmarks.load_profile import OTHER, breakdown


def _chat(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"role": role, "content": [{"type": "text", "text": text}]} for role, text in pairs]


def test_every_session_has_a_model_no_other_session_names() -> None:
    markers = [marker(i) for i in range(MAX_SESSIONS)]
    for i, own in enumerate(markers):
        others = [m for j, m in enumerate(markers) if j != i and (m in own or own in m)]
        assert others == [], f"{own} is contained in or contains {others}"


def test_messages_cycle_languages_with_their_own_decimal_comma() -> None:
    assert [message(i, 0)[0] for i in range(7)] == [*LANGS, LANGS[0]]
    assert message(0, 0)[1] == "LoRA fine-tune of a 1.1B model on 100M tokens"
    assert message(1, 0)[1].startswith("LoRA op een model van 1,3 miljard")
    assert all(len(turns) == 10 for turns in SCRIPTS.values())


def test_an_own_answer_passes() -> None:
    chat = _chat(("user", "job"), ("assistant", "Llama-style decoder, ~1.3B parameters"))
    assert cross_talk(1, ["job"], chat, sessions=50) == []


def test_another_sessions_model_is_cross_talk() -> None:
    chat = _chat(("user", "job"), ("assistant", "~1.3B and ~1.5B parameters"))
    assert cross_talk(1, ["job"], chat, sessions=50) == ["names other sessions' models: ~1.5B"]


def test_a_job_answer_without_its_model_is_cross_talk() -> None:
    chat = _chat(("user", "job"), ("assistant", "a 7B model needs ..."))
    assert cross_talk(1, ["job"], chat, 50) == ["turn 1's answer does not name ~1.3B"]


def test_a_guidance_turn_needs_no_model_but_the_history_must_be_its_own() -> None:
    sent = [f"m{i}" for i in range(JOB_TURNS + 1)]
    chat = _chat(*[("user", m) for m in sent], ("assistant", "NVLink matters when ..."))
    assert cross_talk(1, sent, chat, 50) == []
    assert cross_talk(1, [*sent[:-1], "other"], chat, 50) == [
        "the chat holds 10 user messages, not the 10 sent"
    ]


@pytest.mark.parametrize(
    ("leaf", "bucket"),
    [
        ("turn_evidence (/r/assistant/agent/evidence.py:10)",
         "assistant: grounding check of the answer"),
        ("rank_job (/r/tools/advice.py:5)", "assistant: ranking (tools.advice.rank_job)"),
        ("postprocess_data (gradio/blocks.py:9)",
         "gradio: outputs postprocessed (Chatbot messages)"),
        ("run_asgi (uvicorn/protocols/http/httptools_impl.py:4)",
         "HTTP and SSE transport (uvicorn, starlette, routes)"),
        ("select (selectors.py:1)", OTHER),
    ],
)  # fmt: skip
def test_profile_stacks_fall_in_their_bucket(leaf: str, bucket: str) -> None:
    raw = f"Thread.run (threading.py:1);{leaf} 7\nnot a stack line\n"
    assert breakdown(raw) == {bucket: 7}


@pytest.mark.slow
def test_every_scripted_job_answer_names_its_own_model() -> None:
    """The cross-talk check relies on answers naming the session's model: run one session per
    language through the assistant itself (offline policy, no server)."""
    from assistant.agent.conversation import Assistant, Session
    from assistant.agent.events import Final
    from assistant.settings import Settings

    assistant = Assistant(Settings())
    for index in range(len(LANGS)):
        session, sent = Session(), []
        for turn in range(len(SCRIPTS["en"])):
            lang, text = message(index, turn)
            sent.append(text)
            final = [e for e in assistant.respond(text, session, lang=lang) if isinstance(e, Final)]
            chat = _chat(*[(m.role, m.content) for m in session.history])
            assert cross_talk(index, sent, chat, sessions=50) == [], f"{lang} turn {turn + 1}"
            assert final[0].result.answer, f"{lang} turn {turn + 1} has an answer"
