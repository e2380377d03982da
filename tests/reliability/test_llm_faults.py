"""An LLM endpoint that fails: error statuses, a 200 that is no reply, silence, a reply that never
ends. A local OpenAI-compatible server (`ChatEndpoint`) plays each; the real ChatOpenAI client
talks to it. Every case falls back to the offline brain within its bound, with the one-line
notice, exactly one log line naming the cause, and the API key in no answer and no log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from assistant.agent.conversation import Assistant, Session
from assistant.agent.graph import build_agent, make_chat_model
from assistant.agent.toolbox import build_tools
from assistant.answers.compose import compose_fallback_notice
from assistant.cli import main
from assistant.settings import Settings
from knowledge.retrieval import Passage
from tests.reliability.faults import MAX_WAIT_S, ChatEndpoint, Stopwatch
from tools.catalog import builtin_catalog
from tools.catalog.instances import Catalog

pytest.importorskip("langchain_openai", reason="the optional extra gpu-advisor[llm]")
pytestmark = pytest.mark.reliability

QUESTION = "I want to fine-tune Llama 3.1 8B with QLoRA on 200M tokens"
SHAPED_KEY = "sk-live-Abcdefghijklmnop0123456789"
PLAIN_KEY = "corp-gateway-credential-7f3a"  # no known key shape: only exact-value redaction
BOUNDS = {"llm_connect_timeout_s": 1.0, "llm_first_byte_timeout_s": 1.0, "llm_total_timeout_s": 2.0}


class NoKnowledge:
    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        return []


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return builtin_catalog()


@pytest.fixture(scope="module")
def offline_answer(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> str:
    settings = Settings(data_dir=tmp_path_factory.mktemp("offline"))
    assistant = Assistant(settings, knowledge=NoKnowledge(), catalog=catalog)
    return assistant.respond(QUESTION, Session()).result.answer


def llm_settings(tmp_path: Path, endpoint: ChatEndpoint, key: str, **bounds: Any) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        llm="openai:stub-model",
        llm_base_url=endpoint.base_url,
        llm_api_key=SecretStr(key),
        **{**BOUNDS, **bounds},
    )


def advisor(settings: Settings, catalog: Catalog) -> Assistant:
    """The assistant as the app builds it, with the agent's log lines told the secrets (the
    call-site change asked of conversation.py: `build_agent(..., secrets=settings.secrets())`)."""
    assistant = Assistant(settings, knowledge=NoKnowledge(), catalog=catalog)
    assistant.graph = build_agent(
        build_tools(assistant.resources),
        assistant.policy,
        assistant.chat_model,
        secrets=settings.secrets(),
    )
    return assistant


ECHO_401 = '{"error": {"message": "Incorrect API key provided: %s", "type": "invalid_request"}}'
# each case: the endpoint's behaviour, the fragments its log line must hold (the status and the
# endpoint's own message: openai 2 quotes the error body whole, openai 3 only its message), and
# the time bound in seconds
CASES: dict[str, tuple[dict[str, Any], tuple[str, ...], float]] = {
    "500": ({"behaviour": "status", "status": 500}, ("Error code: 500", "internal error"), 2.0),
    "503": (
        {"behaviour": "status", "status": 503, "body": "Unavailable"},
        ("503", "Unavailable"),
        2.0,
    ),
    "429": ({"behaviour": "status", "status": 429}, ("Error code: 429",), 2.0),
    "401-echo": (
        {"behaviour": "status", "status": 401},
        ("Error code: 401", "Incorrect API key provided: ***"),
        2.0,
    ),
    "html-200": ({"behaviour": "garbage"}, ("reply of type text/html",), 2.0),
    "silent": ({"behaviour": "silent"}, ("Timeout",), 1.0 + 2.0),
    "trickle": (
        {"behaviour": "trickle", "trickle_every_s": 0.2},
        ("longer than 2 s",),
        2.0 + 2.0,
    ),
}


@pytest.fixture(params=list(CASES), ids=list(CASES))
def failing(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[ChatEndpoint, tuple[str, ...], float]]:
    behaviour, cause, bound = CASES[request.param]
    if request.param == "401-echo":
        behaviour = {**behaviour, "body": ECHO_401 % PLAIN_KEY}
    with ChatEndpoint(**behaviour) as endpoint:
        yield endpoint, cause, bound


def test_every_failure_falls_back_offline_within_its_bound(
    failing: tuple[ChatEndpoint, tuple[str, ...], float],
    tmp_path: Path,
    catalog: Catalog,
    offline_answer: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint, cause, bound = failing
    settings = llm_settings(tmp_path, endpoint, PLAIN_KEY)
    assistant = advisor(settings, catalog)
    caplog.set_level(logging.DEBUG)
    watch = Stopwatch()
    result = assistant.respond(QUESTION, Session()).result
    watch.assert_within(bound + 1.5, f"falling back from {cause[0]}")
    notice = compose_fallback_notice("en")
    assert (result.brain, result.error_id, result.notices) == ("fallback", None, [notice])
    assert result.answer == f"{notice}\n\n{offline_answer}"
    lines = [r.getMessage() for r in caplog.records if r.name == "assistant.agent.graph"]
    assert len(lines) == 1 and lines[0].startswith("model endpoint failed ("), lines
    assert all(part in lines[0] for part in cause), (cause, lines[0])
    assert lines[0].endswith("); answering offline")
    assert endpoint.headers_seen[0]["authorization"] == f"Bearer {PLAIN_KEY}", "the key was used"
    assert len(endpoint.requests) == 1, "no retry doubles the wait"
    assert PLAIN_KEY not in caplog.text and PLAIN_KEY not in result.model_dump_json()


def test_a_healthy_endpoint_answers_through_the_checks(tmp_path: Path, catalog: Catalog) -> None:
    with ChatEndpoint(answer="Spot capacity suits checkpointed jobs.") as endpoint:
        assistant = advisor(llm_settings(tmp_path, endpoint, SHAPED_KEY), catalog)
        result = assistant.respond("Is spot capacity fine for training?", Session()).result
    assert (result.brain, result.answer) == ("llm", "Spot capacity suits checkpointed jobs.")
    assert endpoint.requests[0]["stream"] is True, "streamed, so the first-byte bound holds"


def test_a_shaped_key_echoed_in_a_401_is_redacted_even_without_secrets(
    tmp_path: Path, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    with ChatEndpoint(behaviour="status", status=401, body=ECHO_401 % SHAPED_KEY) as endpoint:
        settings = llm_settings(tmp_path, endpoint, SHAPED_KEY)
        assistant = Assistant(settings, knowledge=NoKnowledge(), catalog=catalog)
        caplog.set_level(logging.DEBUG)
        result = assistant.respond(QUESTION, Session()).result
    assert result.brain == "fallback"
    assert "Incorrect API key provided: ***" in caplog.text and SHAPED_KEY not in caplog.text


def test_cli_ask_with_a_401_echo_keeps_the_key_out_of_its_output_and_logs(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The CLI redacts every log record while it runs (`install_log_redaction` with the
    settings' secrets), so even a key of no known shape is removed from the agent's line."""
    caplog.set_level(logging.WARNING)
    with ChatEndpoint(behaviour="status", status=401, body=ECHO_401 % PLAIN_KEY) as endpoint:
        monkeypatch.setenv("GPU_ADVISOR_LLM", "openai:stub-model")
        monkeypatch.setenv("GPU_ADVISOR_LLM_BASE_URL", endpoint.base_url)
        monkeypatch.setenv("GPU_ADVISOR_LLM_API_KEY", PLAIN_KEY)
        monkeypatch.setattr(Assistant, "_open_knowledge", lambda self: NoKnowledge())
        assert main(["ask", QUESTION]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(compose_fallback_notice("en"))
    (line,) = [r.getMessage() for r in caplog.records if r.name == "assistant.agent.graph"]
    assert "Incorrect API key provided: ***" in line
    assert PLAIN_KEY not in out + err + caplog.text


@pytest.mark.slow  # waits out the default first-byte timeout (10 s) once
def test_default_timeouts_fall_back_from_a_silent_endpoint_under_the_bound(
    tmp_path: Path, catalog: Catalog
) -> None:
    with ChatEndpoint(behaviour="silent") as endpoint:
        settings = Settings(
            data_dir=tmp_path / "data",
            llm="openai:stub-model",
            llm_base_url=endpoint.base_url,
            llm_api_key=SecretStr(SHAPED_KEY),
        )
        model = make_chat_model(settings)
        assistant = Assistant(settings, chat_model=model, knowledge=NoKnowledge(), catalog=catalog)
        watch = Stopwatch()
        result = assistant.respond(QUESTION, Session()).result
        elapsed = watch.assert_within(MAX_WAIT_S, "the default LLM timeouts")
    assert result.brain == "fallback" and elapsed >= settings.llm_first_byte_timeout_s
