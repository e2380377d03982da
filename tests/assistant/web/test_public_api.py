"""The functions published as API endpoints and MCP tools return the chat tools' JSON."""

from __future__ import annotations

import inspect
import json
from typing import get_type_hints

import pytest

from assistant.agent.tool_args import ESTIMATE_FIELDS, RANK_FIELDS, EstimateMemoryArgs
from assistant.agent.toolbox import run_estimate_memory
from assistant.web.public_api import PublicApi
from knowledge.base import KnowledgeBase
from tests.fakes.catalogs import web_catalog
from tools.errors import InvalidInputError, UnknownNameError


def _api(kb: KnowledgeBase | None = None) -> PublicApi:
    def no_kb() -> KnowledgeBase:
        raise AssertionError("not needed")

    return PublicApi(web_catalog, (lambda: kb) if kb else no_kb)


def test_estimate_memory_returns_exactly_the_tool_json_text() -> None:
    got = json.loads(_api().estimate_memory("llama 3.1 8b", method="qlora", seq_len=1024))
    content, _ = run_estimate_memory(
        EstimateMemoryArgs(model="llama 3.1 8b", method="qlora", seq_len=1024)
    )
    assert got == json.loads(content), "same JSON as the chat's estimate_memory"
    assert got["model_id"] == "meta-llama/Llama-3.1-8B"


def test_rank_instances_defaults_to_100m_tokens_and_ranks_the_catalog() -> None:
    got = json.loads(_api().rank_instances("llama 3.1 8b", method="qlora", top=2))
    assert got["job"]["tokens"] == 1e8 and got["considered"] == 3
    assert [row["rank"] for row in got["ranked"]] == [1, 2], "top 2 rows"


def test_domain_errors_are_raised_as_the_command_line_words_them() -> None:
    with pytest.raises(UnknownNameError, match=r"^unknown model 'no such model xyz'"):
        _api().estimate_memory("no such model xyz")
    with pytest.raises(InvalidInputError, match=r"^top: got 99; valid: "):
        _api().rank_instances("7B", top=99)
    with pytest.raises(InvalidInputError, match=r"^seq_len: got 0; valid: an integer from 1 to"):
        _api().estimate_memory("7B", seq_len=0)


def test_every_job_field_is_a_parameter() -> None:
    params = set(inspect.signature(_api().rank_instances).parameters)
    assert params == {"model", "top", *RANK_FIELDS}, "the endpoint derives from the job"
    assert set(inspect.signature(_api().estimate_memory).parameters) == {
        "model", *ESTIMATE_FIELDS}, "the estimate endpoint too"  # fmt: skip


def test_search_knowledge_returns_passages(knowledge_base: KnowledgeBase) -> None:
    text = _api(knowledge_base).search_knowledge("Is spot safe for fine-tuning?", lang="en", k=2)
    got = json.loads(text)
    assert len(got["passages"]) == 2 and all(p["lang"] == "en" for p in got["passages"])


def test_signatures_are_typed_and_documented_for_the_endpoint_schema() -> None:
    for fn in _api().functions():
        hints = get_type_hints(fn)
        params = [p for p in inspect.signature(fn).parameters if p != "self"]
        assert set(params) <= set(hints), f"{fn.__name__}: every parameter typed"
        doc = inspect.getdoc(fn) or ""
        assert all(f"{name}:" in doc for name in params), f"{fn.__name__}: every arg described"
