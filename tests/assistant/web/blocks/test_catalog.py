"""The Catalog tab's refresh button as Gradio runs it (without a browser): the status it streams
per provider, then the outcome, the new catalog's filter choices; a click while a refresh runs
is one toast and changes nothing. Prices come from a local fake gpuhunt on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from assistant.agent.conversation import Assistant
from assistant.web.blocks.catalog import _refresh
from assistant.web.blocks.handlers import App
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_text
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalog_server import serve
from tests.fakes.price_sources import gpu, publish, source_settings
from tools.catalog.refresh import plan_refresh
from tools.catalog.refresh.state import refresh_lock


def _app(data: Path, sources: dict[str, Any]) -> App:
    settings = make_settings(data, **sources)
    return App(settings, Assistant(settings, knowledge=TinyKnowledge()))


def test_the_button_streams_a_line_per_provider_then_the_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with serve() as server:
        publish(server, "aws", "v1", [gpu("p5.48xlarge", "us-east-1", 31.5, 8, "H100", 80)])
        ui = _app(tmp_path / "data", source_settings(server))
        before = len(ui.catalog())
        updates = list(_refresh(ui, WebSession()))
    *progress, last = updates
    total = len(plan_refresh())  # every default provider; all but aws answer 404 here
    assert progress[0][0].startswith(f"Refreshing prices: 0 of {total} providers done")
    assert all(u[1:] == (gr.skip(),) * 5 for u in progress), "only the status moves"
    assert progress[-1][0].startswith(f"Refreshing prices: {total} of {total} providers done")
    status, box, outcome, gpus, providers, _regions = last
    assert status.startswith(f"**Prices refreshed**: 1 of {total} providers current")
    assert "- ✓ **aws** (gpuhunt): new prices, 1 instance types" in status.splitlines()
    assert box.visible is True
    assert outcome["value"]["data"][0][:3] == ["aws", "gpuhunt", "new prices"]
    assert len(outcome["value"]["data"]) == total
    assert ("aws", "aws") in providers.choices and ("H100-SXM", "H100-SXM") in gpus.choices
    assert len(ui.catalog()) == before, "the fresh p5.48xlarge replaces the built-in one"
    assert ui.catalog().get("aws/p5.48xlarge").price_per_hour == 31.5, "the app follows"


def test_a_click_while_a_refresh_runs_is_one_toast_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ui = _app(tmp_path / "data", {})
    with refresh_lock(tmp_path / "data"):  # held by the background thread, say
        updates = list(_refresh(ui, WebSession()))
    assert updates == [(gr.skip(),) * 6], "every output left as it was"
    assert ui_text("en", "refresh_running") in capsys.readouterr().out, "the info toast"
