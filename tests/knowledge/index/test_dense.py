"""The dense search never stalls a search: a Chroma collection that hangs or fails is given up
within its read timeout, BM25 ranks alone and says so, a retry pause spares later searches the
wait, and the dense search comes back once Chroma answers again.

The collection is replaced by a scripted one at the seam (`OpenIndex.collection`); real hung and
stopped servers are in tests/reliability/test_chroma_faults.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowledge.base import KnowledgeBase
from knowledge.config import KnowledgeConfig
from knowledge.errors import ChromaTimeoutError, ChromaUnreachableError, StoreUnavailableError
from tests.knowledge.conftest import HashEmbeddings

READ_TIMEOUT_S = 0.5


class ScriptedCollection:
    """Stands in for a live collection: `mode` 'ok' answers as the real one, 'hang' blocks until
    released, 'refuse' raises what httpx raises for a stopped server."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.mode = "ok"
        self.calls = 0
        self.release = threading.Event()

    def query(self, **kwargs: Any) -> Any:
        self.calls += 1
        if self.mode == "hang":
            self.release.wait(30)
        if self.mode == "refuse":
            raise httpx.ConnectError("[Errno 111] Connection refused")
        return self.real.query(**kwargs)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def kb(tmp_path: Path, mini_docs: Path) -> Iterator[KnowledgeBase]:
    config = KnowledgeConfig(data_dir=tmp_path / "index", chroma_read_timeout_s=READ_TIMEOUT_S)
    base = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    base.open()
    yield base
    base.close()


@pytest.fixture
def collection(kb: KnowledgeBase) -> Iterator[ScriptedCollection]:
    index = kb.open()
    scripted = ScriptedCollection(index.collection)
    index.collection = scripted
    yield scripted
    scripted.release.set()
    index.collection = scripted.real


def test_a_hanging_collection_is_given_up_and_bm25_answers(
    kb: KnowledgeBase, collection: ScriptedCollection
) -> None:
    healthy = kb.search_report("Can I train on spot instances?", lang="en")
    assert not healthy.lexical_only and healthy.degraded_reason == ""
    collection.mode = "hang"
    assert kb.search_report("Can I train on spot instances?", lang="en") == healthy, (
        "a search kept from before answers as it did, without Chroma"
    )
    started = time.monotonic()
    report = kb.search_report("Can I train on spot instances, safely?", lang="en")
    waited = time.monotonic() - started
    assert waited < READ_TIMEOUT_S + 1.5, f"gave up after {waited:.1f} s"
    assert report.lexical_only and all(p.lexical_only for p in report.passages)
    assert report.degraded_reason.endswith(f"did not answer within {READ_TIMEOUT_S:g} s")
    assert report.passages[0].topic == "faq/training-spot", "BM25 still finds the answer"
    assert [p.topic for p in healthy.passages][:1] == ["faq/training-spot"]


def test_after_a_failure_searches_skip_chroma_until_the_pause_ends(
    kb: KnowledgeBase, collection: ScriptedCollection
) -> None:
    clock = FakeClock()
    kb.dense.clock, kb.dense.retry_s = clock, 30.0
    collection.mode = "hang"
    kb.search("spot", lang="en")
    calls = collection.calls
    started = time.monotonic()
    again = kb.search_report("spot", lang="en")
    assert time.monotonic() - started < 0.3, "no second wait during the pause"
    assert collection.calls == calls and again.lexical_only, "Chroma not asked again"
    collection.mode = "ok"
    clock.now += 31
    back = kb.search_report("spot", lang="en")
    assert collection.calls == calls + 1 and not back.lexical_only, "asked again, answered"


def test_a_refused_connection_on_a_server_is_named_unreachable(
    tmp_path: Path, kb: KnowledgeBase, collection: ScriptedCollection
) -> None:
    kb.config = kb.config.model_copy(update={"chroma_url": "http://bob:pw@127.0.0.1:9"})
    kb.dense.config = kb.config
    collection.mode = "refuse"
    report = kb.search_report("spot", lang="en")
    assert report.lexical_only
    assert report.degraded_reason == (
        "Chroma server http://***@127.0.0.1:9 is unreachable: connection refused "
        "(is the server running, on this port?)"
    )


def test_a_dense_only_configuration_falls_back_to_bm25_too(tmp_path: Path, mini_docs: Path) -> None:
    config = KnowledgeConfig(
        data_dir=tmp_path / "dense", retrieval="dense", chroma_read_timeout_s=READ_TIMEOUT_S
    )
    base = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    index = base.open()
    scripted = ScriptedCollection(index.collection)
    scripted.mode = "refuse"
    index.collection = scripted
    try:
        report = base.search_report("Can I train on spot instances?", lang="en")
    finally:
        index.collection = scripted.real
        base.close()
    assert report.lexical_only and report.passages[0].topic == "faq/training-spot"


def test_an_index_opened_without_its_store_reconnects_later(kb: KnowledgeBase) -> None:
    index = kb.open()
    index.collection = index.client = None  # as `IndexStore.open` leaves it when Chroma fails
    index.store_error = ChromaUnreachableError("Chroma server X is unreachable: refused")
    clock = FakeClock()
    kb.dense.clock = clock
    kb.dense.start(index)
    assert kb.search_report("spot", lang="en").lexical_only, "paused right after the failure"
    clock.now += kb.dense.retry_s + 1
    report = kb.search_report("spot", lang="en")
    assert not report.lexical_only and index.collection is not None, "reconnected"
    assert index.store_error is None


def test_store_errors_are_one_family() -> None:
    assert issubclass(ChromaTimeoutError, StoreUnavailableError)
    assert issubclass(ChromaUnreachableError, StoreUnavailableError)


def test_a_search_asked_again_is_kept_until_the_index_changes(
    kb: KnowledgeBase, collection: ScriptedCollection
) -> None:
    """The chat's caveat searches repeat: a search that ran every system is answered again
    without Chroma or BM25; a degraded one is not kept, and a reopened index keeps nothing."""
    first = kb.search_report("spot", lang="en", k=2)
    calls = collection.calls
    assert kb.search_report("spot", lang="en", k=2) is first and collection.calls == calls
    assert kb.search_report("spot", lang="en", k=3) is not first and collection.calls == calls + 1
    assert kb.search_report("spot", lang="nl", k=2) is not first, "the language is in the key"
    with pytest.raises(ValueError):
        first.passages[0].score = 0.0  # type: ignore[misc]  # shared, so frozen

    clock = FakeClock()
    kb.dense.clock, kb.dense.retry_s = clock, 30.0
    collection.mode = "hang"
    assert kb.search_report("memory", lang="en").lexical_only
    collection.mode, clock.now = "ok", clock.now + 31
    assert not kb.search_report("memory", lang="en").lexical_only, "a degraded search is redone"

    kb.close()
    reopened = kb.open()
    collection.real, reopened.collection = reopened.collection, collection
    calls = collection.calls
    assert kb.search_report("spot", lang="en", k=2) == first and collection.calls == calls + 1
