"""A tab's own price file (issue 26, defect 5): the chat, the panel and the catalog table of
that tab rank with it, other tabs never see it, a reload and a new conversation keep it,
"Remove my prices" drops it, and a file that cannot be used is one warning that changes
nothing."""

from __future__ import annotations

import warnings
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.conversation import Assistant
from assistant.web.blocks import App
from assistant.web.blocks.own_prices import (
    OWN_OUTPUTS,
    add_prices,
    own_prices_line,
    remove_prices,
)
from assistant.web.state.session import WebSession
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import make_instance, web_catalog
from tools.catalog.files import write_catalog_csv
from tools.catalog.instances import Catalog

JOB = "LoRA on Llama 3.1 8B, 50M tokens, which GPU should I rent?"
SKIP = {"__type__": "update"}


@pytest.fixture
def ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> App:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    settings = make_settings(tmp_path / "data")
    return App(settings, Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog()))


def _quotes(tmp_path: Path, name: str = "my quotes.csv") -> str:
    """A quote for the catalog's L40S at $0.30/h (it replaces that row) and an instance the
    catalog lacks."""
    rows = Catalog([
        make_instance(price_per_hour=0.3, spot_price_per_hour=None, spot_available=False,
                      as_of=date(2026, 12, 1), source="quote from our reseller"),
        make_instance(instance_type="g6e.12xlarge", gpu_count=4, price_per_hour=4.4,
                      spot_price_per_hour=None, spot_available=False, as_of=date(2026, 12, 1)),
    ])  # fmt: skip
    return str(write_catalog_csv(rows, tmp_path / name))


def _first(web: WebSession) -> str:
    assert web.panel.ranking is not None
    return web.panel.ranking.ranked[0].instance_id


def _answer(ui: App, web: WebSession, text: str) -> str:
    *_, (chat, _session) = ui.respond(text, "en", web)
    return str(chat[-1]["content"])


def test_the_tab_ranks_with_its_prices_and_no_other_tab_does(ui: App, tmp_path: Path) -> None:
    web, other = WebSession(), WebSession()
    assert "runpod h100" in _answer(ui, web, JOB).split("**Recommended instances**")[1][:40]
    _answer(ui, other, JOB)
    before = _first(other)
    outputs = add_prices(ui, web, _quotes(tmp_path))
    assert len(outputs) == OWN_OUTPUTS and outputs[0] is web
    status = outputs[-2]
    assert status == (
        "Your prices from my quotes.csv: 2 instance types from 2 rows read (0 skipped without a"
        " usable GPU); catalog rows with the same id replaced: 1. The chat, the panel and this"
        " table use them in this tab. Replaced: aws/g6e.xlarge $1.86 → $0.30."
    )
    assert outputs[-1].visible is True, "the remove button shows"
    assert _first(web) == "aws/g6e.xlarge", "the panel is ranked again with the quote"
    assert web.panel.notes[0].key == "own_prices_panel"
    answer = _answer(ui, web, "what about 100M tokens?")
    first = answer.split("**Recommended instances**")[1].split("\n")[1]
    assert first.startswith("1. **aws g6e.xlarge**"), answer
    assert "$0.30 per hour" in answer
    assert _answer(ui, other, "what about 100M tokens?").count("$0.30") == 0
    assert _first(other) == before, "another tab ranks from the shared catalog"
    assert len(ui.catalog()) == 3, "the shared catalog is unchanged"
    assert (
        len(ui.catalog_for(web)) == 4
        and ui.catalog_for(web).get("aws/g6e.xlarge").price_per_hour == 0.3
    )


def test_a_reload_and_a_new_conversation_keep_the_prices_and_remove_drops_them(
    ui: App, tmp_path: Path
) -> None:
    web = WebSession()
    _answer(ui, web, JOB)
    add_prices(ui, web, _quotes(tmp_path))
    back = ui.restore(ui.save_browser(web), None)[0]  # type: ignore[arg-type]
    assert _first(back) == "aws/g6e.xlarge", "the reloaded tab ranks with its prices"
    assert own_prices_line(ui, back, "de")[0] == (
        "In diesem Tab in Gebrauch: 2 Instanztypen Ihrer Preise aus my quotes.csv."
    )
    fresh = ui.reset(back)[0]
    assert len(ui.catalog_for(fresh)) == 4, "a new conversation in the tab keeps its prices"
    _answer(ui, fresh, JOB)
    assert _first(fresh) == "aws/g6e.xlarge"
    outputs = remove_prices(ui, fresh)
    assert outputs[-2] == (
        "Your prices from my quotes.csv are no longer used: this tab ranks from the shared"
        " catalog again."
    )
    assert outputs[-1].visible is False
    assert _first(fresh) == "runpod/h100" and ui.catalog_for(fresh) is ui.catalog()
    assert remove_prices(ui, fresh) == (SKIP,) * OWN_OUTPUTS, "nothing to remove: no change"
    assert own_prices_line(ui, fresh, "en")[0] == ""


def _refused(ui: App, web: WebSession, path: str) -> tuple[tuple[Any, ...], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = add_prices(ui, web, path)
    return outputs, [str(w.message) for w in caught if w.category is UserWarning]


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("prices.txt", "id\n", "it is not a .csv, .yaml or .yml file"),
        ("prices.yaml", "- : [", "it did not pass the import checks (prices.yaml: got"),
        ("<b>x<b>.csv", "", "it has no row with a usable GPU (0 skipped)"),
    ],
)
def test_a_file_that_cannot_be_used_is_one_warning_and_changes_nothing(
    ui: App, tmp_path: Path, name: str, content: str, problem: str
) -> None:
    web = WebSession()
    _answer(ui, web, JOB)
    panel = web.panel
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    outputs, said = _refused(ui, web, str(path))
    assert outputs == (SKIP,) * OWN_OUTPUTS
    assert len(said) == 1 and problem in said[0], said
    assert "<b>" not in said[0], "a file name is shown as text"
    assert web.panel is panel and ui.own_catalog(web) is None


def test_a_bad_row_is_named_and_a_good_file_after_it_is_used(ui: App, tmp_path: Path) -> None:
    web = WebSession()
    good = Path(_quotes(tmp_path))
    bad = tmp_path / "bad.csv"
    bad.write_text(good.read_text(encoding="utf-8").replace(",0.3,", ",-1,"), encoding="utf-8")
    outputs, said = _refused(ui, web, str(bad))
    assert outputs == (SKIP,) * OWN_OUTPUTS
    assert "bad.csv row 1: field price_per_hour: got '-1'" in said[0], said
    assert add_prices(ui, web, str(good))[-1].visible is True
    assert ui.own_catalog(web) is not None
