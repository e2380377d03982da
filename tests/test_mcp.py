"""The app as an MCP server: the official `mcp` client lists and calls its four tools (the price
refresh downloads from a local fake source on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from assistant.cli import main as cli_main
from tests.fakes.app import make_settings, running_app
from tests.fakes.catalog_server import serve
from tests.fakes.price_sources import gpu, publish, source_settings

TOOLS = ["estimate_memory", "rank_instances", "refresh_prices", "search_knowledge"]


@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app launched with `--mcp` on loopback, its prices from a local fake gpuhunt that
    publishes aws; yields its MCP endpoint."""
    with pytest.MonkeyPatch.context() as env, serve() as server:
        env.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        publish(server, "aws", "v1", [gpu("p5.48xlarge", "us-east-1", 31.5, 8, "H100", 80)])
        data = tmp_path_factory.mktemp("data")
        settings = make_settings(data, mcp=True, **source_settings(server))
        with running_app(settings) as url:
            yield f"{url}gradio_api/mcp/"


async def _session_calls(
    url: str, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[Any, list[Any]]:
    async with (
        streamable_http_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        results = [await session.call_tool(name, args) for name, args in calls]
    return listed, results


def _json(result: Any) -> Any:
    assert not result.isError, result.content
    return json.loads(result.content[0].text)


@pytest.mark.slow
def test_lists_and_calls_the_three_tools(mcp_url: str) -> None:
    listed, (estimate, ranked, found) = asyncio.run(_session_calls(mcp_url, [
        ("estimate_memory", {"model": "llama 3.1 8b", "method": "qlora"}),
        ("rank_instances", {"model": "llama 3.1 8b", "method": "qlora", "top": 2}),
        ("search_knowledge", {"query": "Is spot safe?", "lang": "tr", "k": 1}),
    ]))  # fmt: skip
    tools = {tool.name: tool for tool in listed.tools}
    assert sorted(tools) == TOOLS, "exactly the four tools; the stateful chat is not one"
    schema = tools["estimate_memory"].inputSchema
    assert schema["required"] == ["model"] and "qlora" in json.dumps(schema["properties"])
    assert "peak GPU memory" in (tools["estimate_memory"].description or "")
    assert _json(estimate)["model_id"] == "meta-llama/Llama-3.1-8B", "JSON text, not a repr"
    rows = _json(ranked)["ranked"]
    assert [row["rank"] for row in rows] == [1, 2] and rows[0]["total_cost_usd"] > 0
    assert _json(found)["passages"][0]["lang"] == "tr"


@pytest.mark.slow
def test_a_bad_argument_is_an_mcp_error_with_the_command_lines_message(
    mcp_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = asyncio.run(_session_calls(mcp_url, [
        ("estimate_memory", {"model": "no-such-model-xyz"}),
        ("estimate_memory", {"model": "llama 3.1 8b", "seq_len": 0}),
    ]))  # fmt: skip
    for result, argv in zip(
        results,
        (["--model", "no-such-model-xyz"], ["--model", "llama 3.1 8b", "--seq-len", "0"]),
        strict=True,
    ):
        assert result.isError, "MCP clients see a failed call"
        assert cli_main(["estimate", *argv]) == 2
        line = capsys.readouterr().err.strip()
        assert result.content[0].text == line, "the same one line the command line prints"


@pytest.mark.slow
def test_refresh_prices_tool_reports_per_provider_and_refuses_an_unknown_one(
    mcp_url: str,
) -> None:
    listed, (refreshed, ranked, unknown) = asyncio.run(_session_calls(mcp_url, [
        ("refresh_prices", {"providers": ["aws"], "source": "gpuhunt"}),
        ("rank_instances", {"model": "llama 3.1 8b", "method": "qlora", "providers": ["aws"],
                            "min_gpus": 8, "top": 20}),
        ("refresh_prices", {"providers": ["nosuchcloud"]}),
    ]))  # fmt: skip
    schema = {t.name: t for t in listed.tools}["refresh_prices"].inputSchema
    assert {"gpuhunt", "skypilot", "all"} <= set(json.dumps(schema["properties"]).split('"'))
    (aws,) = _json(refreshed)["providers"]
    assert (aws["provider"], aws["status"], aws["instance_types"]) == ("aws", "updated", 1)
    assert aws["as_of"] and aws["error"] is None
    rows = {row["instance_id"]: row for row in _json(ranked)["ranked"]}
    assert "aws/p5.48xlarge" in rows, "the ranking uses the refreshed catalog"
    assert rows["aws/p5.48xlarge"]["price_per_hour_usd"] == pytest.approx(31.5), "its new price"
    assert unknown.isError
    assert unknown.content[0].text.startswith("error: provider: got 'nosuchcloud'; valid: one of")
