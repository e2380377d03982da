"""A Chroma server that is down, paused, not Chroma at all, or stops mid-session.

Each case ends within a time bound (never more than `MAX_WAIT_S` on the server) with either a
one-line error naming the real cause (unreachable / timeout / not a Chroma server / invalid URL),
or, when an index was built, a search answered by BM25 alone that says so. Credentials written in
the URL appear in no error, no stats and no log line. The quick cases need no Chroma server; the
slow ones run a real `chroma run` behind a `FaultProxy`."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.agent.conversation import Assistant, Session
from assistant.cli import main
from assistant.settings import Settings
from knowledge.base import KnowledgeBase
from knowledge.config import KnowledgeConfig
from knowledge.embeddings import EMBEDDERS
from knowledge.errors import ChromaServerError, ChromaTimeoutError, ChromaUnreachableError
from tests.fakes.chroma import chroma_server, free_port
from tests.knowledge.conftest import HashEmbeddings
from tests.reliability.faults import (
    MAX_WAIT_S,
    FaultProxy,
    PageServer,
    SilentServer,
    Stopwatch,
)
from tools.catalog import builtin_catalog
from tools.errors import InvalidInputError

pytestmark = pytest.mark.reliability

PASSWORD = "Tr0ub4dor-and-3"
BOUND_S = 1.0  # connect and read timeouts of the quick cases, seconds


def config_for(url: str | None, data_dir: Path, timeout_s: float = BOUND_S) -> KnowledgeConfig:
    return KnowledgeConfig(
        data_dir=data_dir,
        chroma_url=url,
        chroma_connect_timeout_s=timeout_s,
        chroma_read_timeout_s=timeout_s,
    )


def with_password(url: str) -> str:
    return url.replace("http://", f"http://advisor:{PASSWORD}@")


def test_a_refused_connection_says_unreachable(tmp_path: Path, mini_docs: Path) -> None:
    url = with_password(f"http://127.0.0.1:{free_port()}")
    kb = KnowledgeBase(
        config_for(url, tmp_path / "i"), docs_dir=mini_docs, embeddings=HashEmbeddings()
    )
    watch = Stopwatch()
    with pytest.raises(ChromaUnreachableError) as caught:
        kb.build()
    watch.assert_within(3, "a refused connection")
    assert str(caught.value) == (
        f"Chroma server {url.replace('advisor:' + PASSWORD, '***')} is unreachable: "
        "connection refused (is the server running, on this port?)"
    )


def test_a_silent_server_is_a_timeout_not_a_hang(tmp_path: Path, mini_docs: Path) -> None:
    with SilentServer() as silent:
        config = config_for(with_password(silent.url), tmp_path / "i")
        kb = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings())
        watch = Stopwatch()
        with pytest.raises(ChromaTimeoutError) as caught:
            kb.open()
        watch.assert_within(2 * BOUND_S + 1.5, "a silent server")
        assert silent.accepted >= 1, "the connection was accepted"
    assert str(caught.value) == (
        f"Chroma server http://***@127.0.0.1:{silent.port} accepted the connection but did not "
        f"answer within {BOUND_S:g} s"
    )


@pytest.mark.parametrize(
    ("status", "body", "detail"),
    [
        (404, b"<html>not found</html>", "HTTP 404 on /api/v2/heartbeat"),
        (200, b"<html>welcome</html>", "/api/v2/heartbeat returned no heartbeat (text/html)"),
    ],
)
def test_a_web_server_is_not_taken_for_chroma(
    tmp_path: Path, mini_docs: Path, status: int, body: bytes, detail: str
) -> None:
    with PageServer(status, body) as page:
        kb = KnowledgeBase(
            config_for(page.url, tmp_path / "i"), docs_dir=mini_docs, embeddings=HashEmbeddings()
        )
        with pytest.raises(ChromaServerError) as caught:
            kb.build()
    assert str(caught.value) == f"{page.url} answered, but not as a Chroma server: {detail}"


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://h:1", f"http://u:{PASSWORD}@h:99999"])
def test_an_invalid_url_is_invalid_and_hides_its_password(
    tmp_path: Path, mini_docs: Path, url: str
) -> None:
    kb = KnowledgeBase(
        config_for(url, tmp_path / "i"), docs_dir=mini_docs, embeddings=HashEmbeddings()
    )
    with pytest.raises(
        InvalidInputError, match=r"^chroma_url: got '.*'; valid: http\(s\)://host:port"
    ):
        kb.build()
    try:
        kb.build()
    except InvalidInputError as exc:
        assert PASSWORD not in str(exc)


@pytest.fixture
def built_index(tmp_path: Path, mini_docs: Path) -> Path:
    """An index built in `tmp_path/index` (embedded), its files then used with a server URL."""
    kb = KnowledgeBase(
        config_for(None, tmp_path / "index"), docs_dir=mini_docs, embeddings=HashEmbeddings()
    )
    kb.build()
    kb.close()
    return tmp_path / "index"


def test_server_down_at_start_searches_the_built_index_with_bm25(
    built_index: Path, mini_docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with SilentServer() as silent:
        config = config_for(with_password(silent.url), built_index)
        kb = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings())
        watch = Stopwatch()
        report = kb.search_report("Can I train on spot instances?", lang="en")
        watch.assert_within(2 * BOUND_S + 1.5, "opening and searching past a silent server")
        stats = kb.stats()
        kb.close()
    assert report.lexical_only and report.passages[0].topic == "faq/training-spot"
    assert report.degraded_reason == (
        f"Chroma server http://***@127.0.0.1:{silent.port} accepted the connection but did not "
        f"answer within {BOUND_S:g} s"
    )
    assert (stats.status, stats.store) == ("degraded", f"http://***@127.0.0.1:{silent.port}")
    assert stats.detail == report.degraded_reason + "; searches use BM25 alone"
    assert PASSWORD not in stats.model_dump_json() and PASSWORD not in caplog.text


@pytest.fixture
def hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EMBEDDERS, "hash-test", HashEmbeddings)
    monkeypatch.setenv("GPU_ADVISOR_EMBEDDER", "hash-test")


def test_cli_with_a_silent_server_prints_one_line_within_the_bound(
    hash_embedder: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with SilentServer() as silent:
        monkeypatch.setenv("GPU_ADVISOR_CHROMA_URL", with_password(silent.url))
        monkeypatch.setenv("GPU_ADVISOR_CHROMA_READ_TIMEOUT_S", str(BOUND_S))
        watch = Stopwatch()
        code = main(["kb", "search", "spot"])
        watch.assert_within(2 * BOUND_S + 2, "kb search against a silent server")
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines()[-1] == (
        f"error: Chroma server http://***@127.0.0.1:{silent.port} accepted the connection but "
        f"did not answer within {BOUND_S:g} s"
    )
    assert PASSWORD not in err


@pytest.fixture
def proxied(tmp_path: Path, mini_docs: Path) -> Iterator[tuple[KnowledgeBase, FaultProxy]]:
    """A knowledge base built on a real Chroma server reached through a `FaultProxy`."""
    with chroma_server(str(tmp_path / "srv")) as port, FaultProxy(port) as proxy:
        kb = KnowledgeBase(
            config_for(proxy.url, tmp_path / "index"),
            docs_dir=mini_docs,
            embeddings=HashEmbeddings(),
        )
        kb.open()
        kb.dense.retry_s = 0.5
        yield kb, proxy
        proxy.set_mode("forward")
        kb.close()


@pytest.mark.slow  # a real `chroma run`: about 2 s to start
def test_a_server_that_pauses_then_stops_then_returns(
    proxied: tuple[KnowledgeBase, FaultProxy],
) -> None:
    kb, proxy = proxied
    asked = "Can I train on spot instances?"
    healthy = kb.search_report(asked, lang="en")
    assert not healthy.lexical_only, "healthy: hybrid"
    proxy.set_mode("silent")
    # a question answered by every system is kept: asked again, the server is not asked at all
    watch = Stopwatch()
    assert kb.search_report(asked, lang="en") is healthy
    watch.assert_within(0.5, "a kept search while the server is paused")
    new = "Are spot instances safe for a long training run?"
    paused = kb.search_report(new, lang="en")
    watch.assert_within(BOUND_S + 1.5, "a new search while the server is paused")
    assert paused.lexical_only and paused.passages[0].topic == "faq/training-spot"
    assert paused.degraded_reason.endswith(f"did not answer within {BOUND_S:g} s")
    proxy.set_mode("refuse")
    time.sleep(0.6)  # past the retry pause
    stopped = kb.search_report(new, lang="en")
    assert stopped.lexical_only and "is unreachable" in stopped.degraded_reason, "not kept"
    proxy.set_mode("forward")
    time.sleep(0.6)
    assert not kb.search_report(new, lang="en").lexical_only, "back to hybrid"


@pytest.mark.slow  # a real `chroma run` and a whole conversation turn
def test_a_chat_turn_while_the_server_is_stopped_still_gives_guidance(
    proxied: tuple[KnowledgeBase, FaultProxy], tmp_path: Path
) -> None:
    kb, proxy = proxied
    proxy.set_mode("refuse")
    assistant = Assistant(
        Settings(data_dir=tmp_path / "data"), knowledge=kb, catalog=builtin_catalog()
    )
    watch = Stopwatch()
    result = assistant.respond("Are spot instances safe for training?", Session()).result
    watch.assert_within(MAX_WAIT_S, "a chat turn with Chroma stopped")
    assert result.error_id is None, result.answer
    assert [c.topic for c in result.citations][:1] == ["faq/training-spot"], "guidance cited"
    (search,) = [c for c in result.tool_calls if c.name == "search_knowledge"]
    assert search.status == "success"


@pytest.mark.slow  # waits out the default read timeout once (10 s)
def test_default_timeouts_keep_a_silent_server_under_the_bound(
    built_index: Path, mini_docs: Path
) -> None:
    with SilentServer() as silent:
        defaults = KnowledgeConfig(data_dir=built_index, chroma_url=silent.url)
        kb = KnowledgeBase(defaults, docs_dir=mini_docs, embeddings=HashEmbeddings())
        watch = Stopwatch()
        report = kb.search_report("spot", lang="en")
        elapsed = watch.assert_within(MAX_WAIT_S, "the default timeouts")
        kb.close()
    assert report.lexical_only and elapsed >= defaults.chroma_read_timeout_s, "waited it out"
