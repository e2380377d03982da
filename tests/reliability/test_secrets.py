"""Credentials in GPU_ADVISOR_CHROMA_URL and GPU_ADVISOR_LLM_BASE_URL, and the LLM key, never
reach what the project prints, shows or logs: `kb stats` (text and JSON), CLI errors, a chat
turn's answer and tool results (what the web chat shows), and log records, also on failures
whose messages would otherwise carry them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from assistant.agent.conversation import Assistant, Session
from assistant.cli import main
from assistant.settings import Settings
from knowledge.base import KnowledgeBase
from knowledge.embeddings import EMBEDDERS
from knowledge.retrieval import Passage
from tests.fakes.chroma import free_port
from tests.knowledge.conftest import HashEmbeddings
from tests.reliability.faults import ChatEndpoint
from tools.catalog import builtin_catalog
from tools.redaction import install_log_redaction

pytestmark = pytest.mark.reliability

PASSWORD = "n0t-in-any-output"
TOKEN = "q5tr1ng-t0ken-value"


class NoKnowledge:
    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        return []


@pytest.fixture
def chroma_url(monkeypatch: pytest.MonkeyPatch) -> str:
    """A Chroma URL with a password and a query-string token; nothing listens there."""
    url = f"http://advisor:{PASSWORD}@127.0.0.1:{free_port()}/?token={TOKEN}"
    monkeypatch.setitem(EMBEDDERS, "hash-test", HashEmbeddings)
    monkeypatch.setenv("GPU_ADVISOR_EMBEDDER", "hash-test")
    monkeypatch.setenv("GPU_ADVISOR_CHROMA_URL", url)
    monkeypatch.setenv("GPU_ADVISOR_CHROMA_CONNECT_TIMEOUT_S", "1")
    return url


def shown(url: str) -> str:
    return url.replace(f"advisor:{PASSWORD}", "***").replace(TOKEN, "***")


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text and TOKEN not in text, text


def test_kb_stats_shows_the_server_without_its_credentials(
    chroma_url: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert main(["kb", "stats"]) == 0
    text = capsys.readouterr().out
    assert main(["kb", "stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["store"] == shown(chroma_url).split("/?")[0] + "/?token=***"
    assert f"store: {data['store']}" in text
    assert_clean(text, json.dumps(data), caplog.text)


def test_cli_errors_name_the_server_without_its_credentials(
    chroma_url: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert main(["kb", "search", "spot"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(
        f"error: Chroma server {shown(chroma_url)} is unreachable"
    )
    assert_clean(err, caplog.text)


def test_a_chat_turn_with_the_store_down_shows_no_credentials(
    chroma_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = Settings()
    assert settings.chroma_url == chroma_url
    knowledge = KnowledgeBase(settings.knowledge_config(), embeddings=HashEmbeddings())
    assistant = Assistant(settings, knowledge=knowledge, catalog=builtin_catalog())
    result = assistant.respond("Are spot instances safe for training?", Session()).result
    (search,) = [c for c in result.tool_calls if c.name == "search_knowledge"]
    assert search.status == "error" and "is unreachable" in json.dumps(search.result)
    assert_clean(result.model_dump_json(), caplog.text)


@pytest.mark.parametrize("installed", [False, True], ids=["agent-line", "every-record"])
def test_llm_base_url_credentials_and_key_stay_out_of_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, installed: bool
) -> None:
    """The agent's own fallback line is clean by itself; third-party lines (httpx logs the full
    request URL at INFO) are clean once the process installs `install_log_redaction`, as the
    CLI does and the app must."""
    pytest.importorskip("langchain_openai", reason="the optional extra gpu-advisor[llm]")
    caplog.set_level(logging.DEBUG)
    with ChatEndpoint(behaviour="status", status=502, body="bad gateway") as endpoint:
        base = endpoint.base_url.replace("http://", f"http://gw:{PASSWORD}@") + f"?api-key={TOKEN}"
        settings = Settings(
            data_dir=tmp_path,
            llm="openai:stub",
            llm_base_url=base,
            llm_api_key=SecretStr("sk-proj-ZyXwVuTsRqPoNmLkJiH987"),
            llm_first_byte_timeout_s=2,
        )
        assistant = Assistant(settings, knowledge=NoKnowledge(), catalog=builtin_catalog())
        uninstall = install_log_redaction(settings.secrets()) if installed else None
        try:
            result = assistant.respond("Are spot instances safe for training?", Session()).result
        finally:
            if uninstall is not None:
                uninstall()
    assert result.brain == "fallback"
    (line,) = [r.getMessage() for r in caplog.records if r.name == "assistant.agent.graph"]
    assert "for url 'http://***@127.0.0.1:" in line and "api-key=***" in line
    assert_clean(result.model_dump_json(), line)
    if installed:
        assert_clean(caplog.text)
        assert "ZyXwVuTsRqPoNmLkJiH987" not in caplog.text
    else:
        assert PASSWORD in caplog.text, "httpx's own line leaks without the record factory"


def test_settings_know_their_secrets_and_never_print_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-provider-key-000")
    settings = Settings(
        chroma_url=f"http://advisor:{PASSWORD}@h:1",
        llm_api_key=SecretStr("key-one-1111"),
        auth_password=SecretStr("web-pass-2222"),
    )
    assert set(settings.secrets()) >= {
        PASSWORD,
        "key-one-1111",
        "web-pass-2222",
        "sk-env-provider-key-000",
    }
    assert "key-one-1111" not in repr(settings) and "web-pass-2222" not in repr(settings)
