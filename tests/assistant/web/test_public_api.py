"""The functions published as API endpoints and MCP tools return the chat tools' JSON."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import get_args, get_type_hints

import pytest

from assistant.agent.tool_args import ESTIMATE_FIELDS, RANK_FIELDS, EstimateMemoryArgs
from assistant.agent.toolbox import run_estimate_memory
from assistant.web.prices import PriceRefresher, RefreshRunning
from assistant.web.public_api import PublicApi
from knowledge.base import KnowledgeBase
from tests.fakes.catalog_server import Reply, serve
from tests.fakes.catalogs import web_catalog
from tests.fakes.price_sources import gpu, publish
from tools.catalog.refresh import RefreshConfig
from tools.catalog.refresh.state import refresh_lock
from tools.catalog.store import load_catalog
from tools.errors import InvalidInputError, UnknownNameError


def _no_kb() -> KnowledgeBase:
    raise AssertionError("not needed")


def _api(kb: KnowledgeBase | None = None, prices: PriceRefresher | None = None) -> PublicApi:
    return PublicApi(web_catalog, (lambda: kb) if kb else _no_kb, prices)


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


def test_signatures_are_typed_and_documented_for_the_endpoint_schema(tmp_path: Path) -> None:
    functions = _api(prices=PriceRefresher(tmp_path, None, lambda: None)).functions()
    assert [fn.__name__ for fn in functions][-1] == "refresh_prices"
    for fn in functions:
        hints = get_type_hints(fn)
        params = [p for p in inspect.signature(fn).parameters if p != "self"]
        assert set(params) <= set(hints), f"{fn.__name__}: every parameter typed"
        doc = inspect.getdoc(fn) or ""
        assert all(f"{name}:" in doc for name in params), f"{fn.__name__}: every arg described"


def test_refresh_prices_without_a_refresher_is_not_published() -> None:
    names = [fn.__name__ for fn in _api().functions()]
    assert names == ["estimate_memory", "rank_instances", "search_knowledge"]


def test_refresh_prices_reports_each_provider_and_the_catalog_follows(tmp_path: Path) -> None:
    reloads: list[int] = []
    with serve() as server:
        publish(server, "aws", "v1", [gpu("p5.48xlarge", "us-east-1", 55.04, 8, "H100", 80)])
        server.set("/sky/v8/vast/vms.csv", Reply(b"busy", status=503))
        config = RefreshConfig(
            gpuhunt_url=f"{server.url}/v3", skypilot_url=f"{server.url}/sky",
            skypilot_mirror_url="", backoff_s=0.0, timeout_s=5.0,
        )  # fmt: skip
        prices = PriceRefresher(tmp_path, config, lambda: reloads.append(1))
        api = PublicApi(lambda: load_catalog(tmp_path), _no_kb, prices)
        assert api.refresh_prices is not None
        got = json.loads(api.refresh_prices(["aws", "vast"], "all"))
        hints = get_type_hints(api.refresh_prices)
    aws, vast = got["providers"]
    assert (aws["provider"], aws["source"], aws["status"], aws["instance_types"]) == (
        "aws", "gpuhunt", "updated", 1,
    )  # fmt: skip
    assert aws["as_of"] is not None and aws["url"].endswith("/v3/aws/v1/catalog.zip")
    assert (vast["source"], vast["status"], vast["as_of"]) == ("skypilot", "failed", None)
    assert vast["error"].startswith("HTTP 503"), vast["error"]
    assert (got["ok"], got["failed"], reloads) == (False, 1, [1])
    assert got["catalog_instance_types"] == len(load_catalog(tmp_path))
    assert load_catalog(tmp_path).get("aws/p5.48xlarge").origin == "gpuhunt"
    assert set(get_args(hints["source"])) == {"gpuhunt", "skypilot", "all"}


def test_refresh_prices_refuses_bad_input_and_a_second_refresh(tmp_path: Path) -> None:
    prices = PriceRefresher(tmp_path, None, lambda: None)
    api = _api(prices=prices)
    assert api.refresh_prices is not None
    with pytest.raises(InvalidInputError, match=r"^provider: got 'nope'; valid: one of .*lambda"):
        api.refresh_prices(["nope"])
    with pytest.raises(InvalidInputError, match=r"^source: got 'web'; valid: one of gpuhunt"):
        api.refresh_prices(None, "web")  # type: ignore[arg-type]
    with refresh_lock(tmp_path), pytest.raises(RefreshRunning, match="already running"):
        api.refresh_prices(["aws"])
