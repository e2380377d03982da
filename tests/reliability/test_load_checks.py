"""The load benchmark's own checks: each session's job is its own, the cross-talk check catches
a foreign answer or history, and the CPU breakdown files py-spy stacks in the right bucket."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from benchmarks.load import (
    GUIDANCE_TURNS,
    LANGS,
    MAX_SESSIONS,
    SCRIPTS,
    cross_talk,
    marker,
    message,
    misses_own_model,
    names_model,
)
from benchmarks.load_profile import OTHER, breakdown

pytestmark = pytest.mark.reliability


def _chat(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"role": role, "content": [{"type": "text", "text": text}]} for role, text in pairs]


def test_every_session_has_a_model_no_other_session_names() -> None:
    for i in range(MAX_SESSIONS):
        text = f"a model of {marker(i)} parameters"
        others = [j for j in range(MAX_SESSIONS) if j != i and names_model(j, text)]
        assert names_model(i, text), text
        assert others == [], f"{text} also names the models of sessions {others}"


@pytest.mark.parametrize(
    ("text", "named"),
    [("~1.5B parameters", True), ("un modèle d’environ 1.5B paramètres", True),
     ("1,5 B", True), ("(1.5B)", True), ("~11.5B", False), ("1.55B", False), ("0.1.5B", False),
     ("1.5 billion", False), ("15B", False)],
)  # fmt: skip
def test_a_size_is_named_as_languages_write_it_never_inside_another(text: str, named: bool) -> None:
    assert names_model(2, text) is named  # session 2's model: 1.5B


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


def test_a_job_answer_without_its_model_is_missed_not_cross_talk() -> None:
    chat = _chat(("user", "job"), ("assistant", "a 7B model needs ..."))
    assert misses_own_model(1, ["job"], chat) == "turn 1's answer does not name ~1.3B"
    assert cross_talk(1, ["job"], chat, 50) == []
    own = _chat(("user", "job"), ("assistant", "a model of ~1.3B needs ..."))
    assert misses_own_model(1, ["job"], own) == ""


def test_a_guidance_turn_needs_no_model_but_the_history_must_be_its_own() -> None:
    sent = [f"m{i}" for i in range(max(GUIDANCE_TURNS))]
    chat = _chat(*[("user", m) for m in sent], ("assistant", "NVLink matters when ..."))
    assert cross_talk(1, sent, chat, 50) == []
    assert misses_own_model(1, sent, chat) == ""
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


@cache
def _scripted_runs() -> tuple[tuple[tuple[list[str], list[dict[str, Any]], str], ...], ...]:
    """One session per language through the assistant itself (offline policy, no server): per
    session, per turn, the messages sent so far, the chat after the turn and the answer."""
    from assistant.agent.conversation import Assistant, Session
    from assistant.agent.events import Final
    from assistant.settings import Settings

    assistant = Assistant(Settings())
    runs = []
    for index in range(len(LANGS)):
        session, sent, turns = Session(), [], []
        for turn in range(len(SCRIPTS["en"])):
            lang, text = message(index, turn)
            sent.append(text)
            final = [e for e in assistant.respond(text, session, lang=lang) if isinstance(e, Final)]
            chat = _chat(*[(m.role, m.content) for m in session.history])
            turns.append((list(sent), chat, final[0].result.answer))
        runs.append(tuple(turns))
    return tuple(runs)


@pytest.mark.slow
@pytest.mark.parametrize("turn", range(len(SCRIPTS["en"])))
def test_every_scripted_answer_is_its_sessions_own(turn: int) -> None:
    """The load run's checks rely on this: each job answer names the session's model, no answer
    names another's, and every turn has an answer."""
    problems = {}
    for index, turns in enumerate(_scripted_runs()):
        sent, chat, answer = turns[turn]
        found = [*cross_talk(index, sent, chat, sessions=50), misses_own_model(index, sent, chat)]
        if not answer:
            found.append("no answer")
        if any(found):
            problems[LANGS[index]] = [p for p in found if p]
    assert problems == {}, f"turn {turn + 1}: {problems}"
