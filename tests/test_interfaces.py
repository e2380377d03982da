"""One job, every interface: the same per-GPU bytes, the same first instance, the same defaults.

The job is QLoRA of Llama 3.1 70B on 200M tokens with spot allowed, everything else left open,
said the way each interface says it: flags on the command line, a JobSpec in Python, arguments
of the published functions, the Gradio HTTP API and MCP tools, a chat message, the web form.
An image-model job (SDXL DreamBooth LoRA at 1024 px) goes through the same interfaces (the web
form has no image fields: the chat and the panel it fills carry them).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from assistant.agent.conversation import Assistant, Session
from assistant.cli import main
from assistant.web.blocks import App
from assistant.web.form import FORM_FIELDS
from assistant.web.public_api import PublicApi
from assistant.web.state.session import WebSession
from tests.fakes.app import TinyKnowledge, make_settings, running_app
from tools.advice import estimate_job, rank_job
from tools.catalog import builtin_catalog
from tools.job import JobSpec

MODEL = "meta-llama/Llama-3.1-70B"
SPEC = JobSpec(model=MODEL, method="qlora", tokens=2e8, spot="allowed")
CHAT = "QLoRA on Llama 3.1 70B, 200M tokens, spot is fine"
TOOL_ARGS = {"model": MODEL, "method": "qlora"}
RANK_ARGS = {**TOOL_ARGS, "tokens": 2e8, "spot": "allowed", "top": 3}
IMAGE_MODEL = "stabilityai/stable-diffusion-xl-base-1.0"
IMAGE_SPEC = JobSpec(model=IMAGE_MODEL, method="lora", dreambooth=True, resolution=1024)
IMAGE_CHAT = "Fine-tune SDXL with DreamBooth LoRA at 1024 px"
IMAGE_ARGS = {"model": IMAGE_MODEL, "method": "lora", "dreambooth": True, "resolution": 1024}


@pytest.fixture(scope="module")
def python_api() -> tuple[int, str, dict[str, Any]]:
    """What the Python API computes: per-GPU bytes, the first instance, the shown defaults."""
    _, memory = estimate_job(SPEC)
    ranked_job, ranking = rank_job(SPEC, builtin_catalog())
    shown = {a.field: a.value for a in ranked_job.shown_assumptions("rank")}
    assert shown == {
        "precision": "bf16-mixed", "optimizer": "paged-adamw-8bit", "lora_rank": 16,
        "micro_batch_size": 1, "seq_len": 2048, "gradient_checkpointing": "full", "epochs": 1.0,
        "objective": "cost",
    }, "the one set of defaults, method-aware for QLoRA"  # fmt: skip
    return memory.per_gpu.total, ranking.ranked[0].instance_id, shown


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0, argv
    return json.loads(capsys.readouterr().out)


def test_the_command_line(python_api: tuple[int, str, dict[str, Any]], capsys: Any) -> None:
    total, first, shown = python_api
    flags = ["--model", MODEL, "--method", "qlora"]
    estimate = _cli(capsys, "estimate", *flags)
    ranking = _cli(capsys, "rank", *flags, "--tokens", "200M", "--spot", "--top", "3")
    assert estimate["per_gpu"]["total"] == total, "estimate: the same bytes"
    assert ranking["ranked"][0]["instance_id"] == first, "rank: the same first instance"
    assert {a["field"]: a["value"] for a in ranking["assumed"]} == shown, "the same defaults"


def test_the_published_functions(python_api: tuple[int, str, dict[str, Any]]) -> None:
    total, first, _ = python_api
    api = PublicApi(builtin_catalog, TinyKnowledge)
    assert json.loads(api.estimate_memory(**TOOL_ARGS))["per_gpu_bytes"]["total"] == total
    assert json.loads(api.rank_instances(**RANK_ARGS))["ranked"][0]["instance_id"] == first


def test_the_chat(python_api: tuple[int, str, dict[str, Any]], tmp_path: Path) -> None:
    total, first, _ = python_api
    assistant = Assistant(
        make_settings(tmp_path), knowledge=TinyKnowledge(), catalog=builtin_catalog()
    )
    session = Session()
    result = assistant.respond(CHAT, session).result
    calls = {call.name: call.result for call in result.tool_calls}
    assert calls["estimate_memory"]["per_gpu_bytes"]["total"] == total, "the chat's estimate"
    assert calls["rank_instances"]["ranked"][0]["instance_id"] == first, "the chat's first pick"
    assert session.state == SPEC, "the chat understood the job as the other interfaces state it"


def test_the_web_form(python_api: tuple[int, str, dict[str, Any]], tmp_path: Path) -> None:
    total, first, _ = python_api
    settings = make_settings(tmp_path)
    ui = App(settings, Assistant(settings, knowledge=TinyKnowledge(), catalog=builtin_catalog()))
    web = WebSession()
    values = dict.fromkeys(FORM_FIELDS) | {"model": MODEL, "method": "qlora", "tokens": 200,
                                            "spot": "allowed"}  # fmt: skip
    ui.apply_form(web, *values.values(), "USD")
    assert web.session.state == SPEC, "the form's fields are the job's"
    assert web.panel.estimate is not None and web.panel.ranking is not None
    assert web.panel.estimate.per_gpu.total == total, "the panel's estimate"
    assert web.panel.ranking.ranked[0].instance_id == first, "the panel's first pick"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        with running_app(make_settings(tmp_path_factory.mktemp("data"), mcp=True)) as url:
            yield url


async def _mcp_calls(url: str, calls: tuple[tuple[str, dict[str, Any]], ...]) -> list[Any]:
    async with (
        streamable_http_client(f"{url}gradio_api/mcp/") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return [
            json.loads((await session.call_tool(name, args)).content[0].text)
            for name, args in calls
        ]


@pytest.mark.slow
def test_the_http_api_and_mcp(python_api: tuple[int, str, dict[str, Any]], served: str) -> None:
    total, first, _ = python_api
    client = Client(served, verbose=False)
    estimate = json.loads(client.predict(**TOOL_ARGS, api_name="/estimate_memory"))
    ranking = json.loads(client.predict(**RANK_ARGS, api_name="/rank_instances"))
    assert estimate["per_gpu_bytes"]["total"] == total, "HTTP API: the same bytes"
    assert ranking["ranked"][0]["instance_id"] == first, "HTTP API: the same first instance"
    calls = (("estimate_memory", TOOL_ARGS), ("rank_instances", RANK_ARGS))
    by_mcp = asyncio.run(_mcp_calls(served, calls))
    assert by_mcp[0]["per_gpu_bytes"]["total"] == total, "MCP: the same bytes"
    assert by_mcp[1]["ranked"][0]["instance_id"] == first, "MCP: the same first instance"


# --------------------------------------------------------------------------- an image-model job


@pytest.fixture(scope="module")
def image_api() -> tuple[int, str, float, dict[str, Any]]:
    """The Python API's figures for the image job: per-GPU bytes, the first instance, its total
    cost, the shown defaults (the diffusers DreamBooth script's, 500 steps)."""
    _, memory = estimate_job(IMAGE_SPEC)
    ranked_job, ranking = rank_job(IMAGE_SPEC, builtin_catalog())
    shown = {a.field: a.value for a in ranked_job.shown_assumptions("rank")}
    assert shown["steps"] == 500 and shown["prior_preservation"] is False
    assert ranking.job.images == 500
    best = ranking.ranked[0]
    assert best.plan == "single" and best.need_per_gpu_bytes == memory.per_gpu.total
    return memory.per_gpu.total, best.instance_id, best.total_cost, shown


def test_an_image_job_on_the_command_line(
    image_api: tuple[int, str, float, dict[str, Any]], capsys: Any
) -> None:
    total, first, cost, shown = image_api
    flags = ["--model", IMAGE_MODEL, "--method", "lora", "--dreambooth", "--resolution", "1024"]
    estimate = _cli(capsys, "estimate", *flags)
    ranking = _cli(capsys, "rank", *flags, "--top", "3")
    assert estimate["per_gpu"]["total"] == total, "estimate: the same bytes"
    assert ranking["ranked"][0]["instance_id"] == first, "rank: the same first instance"
    assert ranking["ranked"][0]["total_cost"] == pytest.approx(cost, rel=1e-12)
    assert {a["field"]: a["value"] for a in ranking["assumed"]} == shown, "the same defaults"


def test_an_image_job_through_the_published_functions(
    image_api: tuple[int, str, float, dict[str, Any]],
) -> None:
    total, first, cost, _ = image_api
    api = PublicApi(builtin_catalog, TinyKnowledge)
    assert json.loads(api.estimate_memory(**IMAGE_ARGS))["per_gpu_bytes"]["total"] == total
    best = json.loads(api.rank_instances(**IMAGE_ARGS, top=3))["ranked"][0]
    assert best["instance_id"] == first
    assert best["total_cost_usd"] == pytest.approx(cost, abs=0.005)


def test_an_image_job_in_the_chat(
    image_api: tuple[int, str, float, dict[str, Any]], tmp_path: Path
) -> None:
    total, first, _, _ = image_api
    assistant = Assistant(
        make_settings(tmp_path), knowledge=TinyKnowledge(), catalog=builtin_catalog()
    )
    session = Session()
    result = assistant.respond(IMAGE_CHAT, session).result
    calls = {call.name: call.result for call in result.tool_calls}
    assert calls["estimate_memory"]["per_gpu_bytes"]["total"] == total, "the chat's estimate"
    assert calls["rank_instances"]["ranked"][0]["instance_id"] == first, "the chat's first pick"
    assert session.state == IMAGE_SPEC, "the chat understood the job as the others state it"


@pytest.mark.slow
def test_an_image_job_over_http_and_mcp(
    image_api: tuple[int, str, float, dict[str, Any]], served: str
) -> None:
    total, first, _, _ = image_api
    client = Client(served, verbose=False)
    estimate = json.loads(client.predict(**IMAGE_ARGS, api_name="/estimate_memory"))
    ranking = json.loads(client.predict(**IMAGE_ARGS, top=3, api_name="/rank_instances"))
    assert estimate["per_gpu_bytes"]["total"] == total, "HTTP API: the same bytes"
    assert ranking["ranked"][0]["instance_id"] == first, "HTTP API: the same first instance"
    calls = (("estimate_memory", IMAGE_ARGS), ("rank_instances", {**IMAGE_ARGS, "top": 3}))
    by_mcp = asyncio.run(_mcp_calls(served, calls))
    assert by_mcp[0]["per_gpu_bytes"]["total"] == total, "MCP: the same bytes"
    assert by_mcp[1]["ranked"][0]["instance_id"] == first, "MCP: the same first instance"
