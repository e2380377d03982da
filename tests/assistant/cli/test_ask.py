"""`gpu-advisor ask` and `gpu-advisor chat` through the real dispatcher."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.conversation import Assistant, Session
from assistant.answers.i18n import message as i18n_message
from assistant.cli import main
from assistant.cli.ask import JSON_KEYS

JOB = "I want to fine-tune Llama 3.1 8B with QLoRA on 200M tokens"


@pytest.fixture(autouse=True)
def _test_knowledge(monkeypatch: pytest.MonkeyPatch, knowledge_base: Any) -> None:
    """The CLI's assistant searches the session's hash-embedding index, not a real build."""
    monkeypatch.setattr(Assistant, "_open_knowledge", lambda self: knowledge_base)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["ask", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ask_json_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, JOB)
    assert tuple(data) == JSON_KEYS
    assert data["language"] == "en" and data["grounded"] is True
    assert data["ungrounded_numbers"] == [] and data["brain"] == "offline"
    assert [c["name"] for c in data["tool_calls"]] == ["estimate_memory", "rank_instances"]
    assert set(data["tool_calls"][0]) == {"name", "args", "result"}
    assert data["tool_calls"][0]["args"]["model"] == "meta-llama/Llama-3.1-8B"
    assert data["tool_calls"][0]["result"]["model_id"] == "meta-llama/Llama-3.1-8B"
    assert data["state"]["method"] == "qlora"


def test_session_file_makes_one_conversation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    run_json(capsys, JOB, "--session", str(path))
    second = run_json(capsys, "only spot", "--session", str(path))
    assert second["state"]["spot"] == "required"
    assert second["state"]["model"] == "meta-llama/Llama-3.1-8B", "the first call's job persists"
    assert second["tool_calls"][1]["args"]["spot"] == "required"
    assert len(Session.load(path).history) == 4


def test_lang_override_and_citations(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "is spot safe for my 70B QLoRA run?", "--lang", "nl")
    assert data["language"] == "nl"
    assert i18n_message("nl", "options.heading") in data["answer"]
    assert data["citations"], "a mixed question cites the knowledge base"
    assert all(set(c) == {"topic", "lang", "title"} for c in data["citations"])
    assert [c["name"] for c in data["tool_calls"]] == [
        "estimate_memory",
        "rank_instances",
        "search_knowledge",
    ]


def test_plain_output_is_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "Ich", "möchte", "ein", "Modell", "feintunen", "--lang", "de"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == i18n_message("de", "clarify.model")


def test_bad_lang_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", JOB, "--lang", "it"]) == 2
    assert "lang: got 'it'; valid: one of en, nl, fr, tr, de, es" in capsys.readouterr().err


def test_unknown_llm_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", JOB, "--llm", "nosuch:model"]) == 2
    assert "llm: got 'nosuch:model'" in capsys.readouterr().err


def test_secret_never_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_LLM_API_KEY", "sk-do-not-print")
    data = run_json(capsys, JOB, "--llm", "offline")
    assert "sk-do-not-print" not in json.dumps(data)


def test_chat_repl_keeps_the_conversation(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "repl.json"
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{JOB}\nonly spot\n/quit\n"))
    assert main(["chat", "--session", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.count(i18n_message("en", "options.heading")) == 2
    assert "estimate_memory" in captured.err, "tool progress goes to stderr"
    saved = Session.load(path)
    assert saved.state.spot == "required" and len(saved.history) == 4
