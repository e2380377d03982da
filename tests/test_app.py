"""The Gradio app over HTTP: built, launched on loopback, driven with gradio_client.

The app runs the real assistant (offline policy, real catalog and tools) with a small in-memory
knowledge base, so no embedding model is loaded. One server per module; every test that talks to
it is marked slow.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import httpx
import pytest
from gradio_client import Client
from gradio_client.exceptions import AuthenticationError

import app
from assistant.agent.conversation import Assistant
from assistant.agent.tool_args import RANK_FIELDS
from assistant.settings import Settings
from assistant.web.blocks.outputs import FORM_OUTPUTS, PANEL_OUTPUTS
from assistant.web.public_api import PublicApi
from deploy.probe import GradioSession, find_fn_index, find_load_event, find_page_event
from tests.fakes.app import TinyKnowledge, free_port, make_settings, running_app
from tools.catalog.store import load_catalog


@pytest.fixture(autouse=True)
def _gradio_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the app hands to Gradio (launch-spec downloads) land in the test's folder."""
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Settings]]:
    """The app launched on loopback with `prevent_thread_lock=True`; yields (url, settings)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        settings = make_settings(tmp_path_factory.mktemp("data"))
        with running_app(settings) as url:
            yield url, settings


def _texts(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _title(message: dict[str, Any]) -> str | None:
    return (message.get("metadata") or {}).get("title")


def _turn(client: Client, text: str, lang: str = "auto") -> list[list[dict[str, Any]]]:
    """Every streamed update of one chat turn, the last one complete."""
    job = client.submit(text, lang, api_name="/chat")
    updates = list(job)
    return [*updates, job.result()] if not updates or updates[-1] != job.result() else updates


@pytest.mark.slow
def test_documented_api_lists_the_four_tools(served: tuple[str, Settings]) -> None:
    client = Client(served[0], verbose=False)
    api = client.view_api(return_format="dict", print_info=False)
    assert sorted(api["named_endpoints"]) == [
        "/estimate_memory", "/rank_instances", "/refresh_prices", "/search_knowledge",
    ], "internal events stay private; /chat is callable but not an MCP tool"  # fmt: skip
    refresh = api["named_endpoints"]["/refresh_prices"]["parameters"]
    assert [p["parameter_name"] for p in refresh] == ["providers", "source"]
    params = [p["parameter_name"] for p in api["named_endpoints"]["/rank_instances"]["parameters"]]
    assert params == ["model", "top", *RANK_FIELDS], "the job's fields, from the signature"


@pytest.mark.slow
def test_an_offline_chat_turn_comes_as_one_update_with_tool_messages_then_the_answer(
    served: tuple[str, Settings],
) -> None:
    """Without an LLM a turn takes milliseconds, so it is sent once, when it ends (the chat is
    shipped one time, not once per tool call: issue 15); its tool calls are shown finished, with
    their inputs and durations, before the answer. A turn of an LLM streams
    (tests/assistant/web/blocks/test_handlers.py)."""
    client = Client(served[0], verbose=False)
    updates = _turn(client, "QLoRA fine-tune of Llama 3.1 8B on 100M tokens. Which GPU?", "en")
    assert len(updates) == 1, "one update: the finished turn"
    final = updates[-1]
    assert _texts(final[0]) == "QLoRA fine-tune of Llama 3.1 8B on 100M tokens. Which GPU?"
    tools = [m for m in final if _title(m) in ("estimate_memory", "rank_instances")]
    assert [_title(m) for m in tools] == ["estimate_memory", "rank_instances"]
    assert all(m["metadata"]["status"] == "done" for m in tools), "every call finished"
    assert all(m["metadata"]["duration"] >= 0 for m in tools), "with its duration"
    assert '"model": "meta-llama/Llama-3.1-8B"' in _texts(tools[0]) or "Llama-3.1-8B" in _texts(
        tools[0]
    ), "the inputs are shown"
    answer = next(m for m in final if not _title(m) and m["role"] == "assistant")
    assert "GiB" in _texts(answer) and "Llama 3.1 8B" in _texts(answer), "the answer follows"
    assert final.index(tools[-1]) < final.index(answer), "the tool calls come first"


@pytest.mark.slow
def test_estimate_memory_endpoint_matches_the_published_function(
    served: tuple[str, Settings],
) -> None:
    client = Client(served[0], verbose=False)
    got = client.predict(model="llama 3.1 8b", method="lora", api_name="/estimate_memory")
    catalog = load_catalog(None)
    expected = PublicApi(lambda: catalog, TinyKnowledge).estimate_memory("llama 3.1 8b", "lora")
    assert got == expected, "the HTTP endpoint returns the tool's JSON unchanged"
    data = json.loads(got)
    assert data["per_gpu_bytes"]["total"] > data["per_gpu_bytes"]["weights"] > 0


@pytest.mark.slow
def test_two_concurrent_sessions_keep_their_own_conversation(
    served: tuple[str, Settings],
) -> None:
    first, second = Client(served[0], verbose=False), Client(served[0], verbose=False)
    results: dict[str, list[dict[str, Any]]] = {}

    def talk(name: str, client: Client, turns: list[tuple[str, str]]) -> None:
        for text, lang in turns:
            results[name] = _turn(client, text, lang)[-1]

    runs = [
        threading.Thread(target=talk, args=("en", first, [
            ("QLoRA fine-tune of Llama 3.1 70B on 200M tokens, spot is fine.", "en"),
            ("and with full fine-tuning?", "en"),
        ])),
        threading.Thread(target=talk, args=("tr", second, [
            ("7 milyar parametreli modelde LoRA, 50 milyon token.", "tr"),
        ])),
    ]  # fmt: skip
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=120)
    users_en = [_texts(m) for m in results["en"] if m["role"] == "user"]
    users_tr = [_texts(m) for m in results["tr"] if m["role"] == "user"]
    assert users_en == [
        "QLoRA fine-tune of Llama 3.1 70B on 200M tokens, spot is fine.",
        "and with full fine-tuning?",
    ], "the first session holds its two messages and nothing else"
    assert users_tr == ["7 milyar parametreli modelde LoRA, 50 milyon token."]
    last_en = next(m for m in reversed(results["en"]) if m["role"] == "assistant"
                   and not _title(m) and "GiB" in _texts(m))  # fmt: skip
    assert "70B" in _texts(last_en) and "full" in _texts(last_en).lower(), "amended, not mixed"
    tr_answer = next(m for m in results["tr"] if m["role"] == "assistant" and not _title(m))
    assert "70B" not in _texts(tr_answer), "nothing from the other session"


@pytest.mark.slow
def test_the_page_sends_a_turn_as_one_event_and_gets_only_what_changed(
    served: tuple[str, Settings],
) -> None:
    """The send button's event returns the chat, the form and panel and the saved record in one
    event (issue 15: a second event after the answer cost a queue round and its HTTP): the
    form and panel as one payload the browser applies, but for the launch choice and file;
    after a guidance question the payload leaves every component alone and only the launch
    file is sent. The `chat` endpoint of API clients returns the chat alone."""
    url = served[0]
    page, api = find_page_event(url, "send"), find_fn_index(url, "chat")
    assert page != api
    on_load, load_inputs = find_load_event(url)
    session = GradioSession(url)
    session.open(heartbeat=False)
    try:
        restored = session.call(on_load, [None] * load_inputs)  # as the tab opens: nothing saved
        assert len(restored) == 4 + FORM_OUTPUTS + PANEL_OUTPUTS and not restored[1].get("value")
        job = session.call(page, ["QLoRA on Llama 3.1 8B, 100M tokens", "en", None])
        guidance = session.call(page, ["Are spot instances safe for training?", "en", None])
        alone = session.call(api, ["and with LoRA?", "en", None])
    finally:
        session.close()
    in_browser = FORM_OUTPUTS + PANEL_OUTPUTS - 2  # all but the launch choice and file
    assert len(job) == len(guidance) == 2 + 1 + 2 + 1 and len(alone) == 2
    assert _texts(job[0][0]) == "QLoRA on Llama 3.1 8B, 100M tokens"
    updates = json.loads(job[2])["updates"]
    assert len(updates) == in_browser and None not in updates, "a new page: everything"
    assert updates[0]["value"] == "meta-llama/Llama-3.1-8B", "the form's model field"
    ranked = updates[FORM_OUTPUTS + 6]["value"]
    assert ranked["headers"][:2] == ["#", "Instance"] and ranked["data"], "the ranked table"
    assert job[3]["choices"][0][1] == ranked["data"][0][1], "the launch choice, on the server"
    assert json.loads(guidance[2])["updates"] == [None] * in_browser, "a turn that changes nothing"
    assert guidance[3] == {"__type__": "update"} and guidance[4]["value"], "but the file"
    assert isinstance(guidance[-1], str) and guidance[-1] != job[-1], "the record is saved"
    assert [_texts(m) for m in alone[0] if m["role"] == "user"][-1] == "and with LoRA?"


def test_the_page_turn_and_the_api_turn_are_wired_apart(tmp_path: Path) -> None:
    demo = app.build_demo(make_settings(tmp_path))
    config = demo.get_config_file()
    ids = {c["props"].get("elem_id"): c["id"] for c in config["components"]}
    (api,) = [d for d in config["dependencies"] if d.get("api_name") == "chat"]
    assert api["targets"] == [] and api["outputs"] == [ids["chat"], api["outputs"][1]]
    page = next(d for d in config["dependencies"] if d["backend_fn"]
                and (ids["send"], "click") in [tuple(t) for t in d["targets"]])  # fmt: skip
    assert page["api_visibility"] == "private" and page["outputs"][0] == ids["chat"]
    assert page["outputs"][2:5] == [ids["page-updates"], ids["launch-choice"], ids["launch-json"]]
    assert page["show_progress_on"] == [ids["chat"]], "the panel does not spin for a turn"
    (applied,) = [d for d in config["dependencies"] if d.get("trigger_after") == page["id"]]
    assert not applied["backend_fn"] and applied["js"] and applied["trigger_only_on_success"]
    assert applied["inputs"] == [ids["page-updates"]]
    assert len(applied["outputs"]) == FORM_OUTPUTS + PANEL_OUTPUTS - 2
    assert ids["ranked"] in applied["outputs"] and ids["launch-choice"] not in applied["outputs"]


def test_build_demo_returns_blocks_with_the_tabs(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
    assert isinstance(demo, gr.Blocks)
    ids = {getattr(block, "elem_id", None) for block in demo.blocks.values()}
    assert {"chat", "ranked", "ranked-more", "excluded", "memory-chart", "cost-chart",
            "launch-yaml", "catalog", "catalog-more", "kb-results", "est-chart", "est-upload",
            "ui-lang", "language", "job-form"} <= ids  # fmt: skip


def test_launch_options_follow_settings_and_never_show_the_password(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, host="0.0.0.0", port=9000, mcp=True,
                        auth_user="ada", auth_password="s3cret")  # fmt: skip
    options = app.launch_options(settings)
    assert (options["server_name"], options["server_port"], options["mcp_server"]) == (
        "0.0.0.0", 9000, True,
    )  # fmt: skip
    assert options["auth"] == ("ada", "s3cret") and options["blocked_paths"] == [str(tmp_path)]
    assert "s3cret" not in repr(settings), "the settings never print the password"
    assert app.launch_options(Settings(data_dir=tmp_path))["auth"] is None, "no auth by default"


def test_flags_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_PORT", "8000")
    monkeypatch.setenv("GPU_ADVISOR_HOST", "0.0.0.0")
    settings = app.settings_from_args(["--port", "9001", "--mcp"])
    assert (settings.host, settings.port, settings.mcp) == ("0.0.0.0", 9001, True)
    assert app.settings_from_args([]).mcp is False


@pytest.mark.slow
def test_basic_auth_from_the_environment_guards_page_and_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_AUTH_USER", "ada")
    monkeypatch.setenv("GPU_ADVISOR_AUTH_PASSWORD", "pw-from-env")
    settings = app.settings_from_args(["--port", str(free_port())])
    demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
    demo.queue()
    _, url, _ = demo.launch(**app.launch_options(settings), prevent_thread_lock=True, quiet=True)
    try:
        assert httpx.get(f"{url}config").status_code == 401, "nothing without logging in"
        refresh = httpx.post(
            f"{url}gradio_api/call/refresh_prices", json={"data": [["aws"], "all"]}
        )
        assert refresh.status_code == 401, "no price refresh without logging in"
        with pytest.raises(AuthenticationError):
            Client(url, verbose=False)
        client = Client(url, auth=("ada", "pw-from-env"), verbose=False)
        assert json.loads(client.predict("7B", api_name="/estimate_memory"))["total_params"] > 0
        with pytest.raises(Exception, match=r"error: provider: got 'nope'; valid: one of .*aws"):
            client.predict(["nope"], "all", api_name="/refresh_prices")  # validated, not fetched
        assert "pw-from-env" not in httpx.get(url).text, "the password is never sent out"
    finally:
        demo.close()
