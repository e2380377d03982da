"""Issue 13 in the browser: the Catalog tab's "Refresh prices" button against a local fake
gpuhunt (tests/fakes/price_sources.py on 127.0.0.1; every other provider answers 404 there, as
an unreachable one would fail). The rows it publishes replace the built-in ones: the count and
the price ages change, the status says per provider what happened, the outcome table lists
them. Screenshot in test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assistant.web.prices import price_age_markdown
from assistant.web.ui_strings import ui_text
from assistant.web.views import CatalogFilters, catalog_view
from tests.e2e.pages import SIZES, TURN_MS, cells, idle, open_app, open_tab, page_width, shot
from tests.fakes.app import make_settings, running_app
from tests.fakes.catalog_server import serve
from tests.fakes.price_sources import gpu, publish, source_settings
from tools.catalog.store import load_catalog

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")

SEARCH = "p5.48xlarge"
AGE_COLUMN = 7  # tables.CATALOG_KEY_COLUMNS: instance, GPUs, VRAM, 4 prices, age, source
AWS = [
    gpu("p5.48xlarge", "us-east-1", 31.5, 8, "H100", 80),
    gpu("p5.48xlarge", "eu-north-1", 35.25, 8, "H100", 80),
    gpu("g6.xlarge", "us-east-1", 0.8048, 1, "L4", 24),
]


@pytest.fixture(scope="module")
def prices_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app with its price sources on a local fake server; yields (url, data folder)."""
    with pytest.MonkeyPatch.context() as env, serve() as server:
        env.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        publish(server, "aws", "20261202-0300", AWS)
        data = tmp_path_factory.mktemp("data")
        with running_app(make_settings(data, **source_settings(server))) as url:
            yield url, data


def _view(data: Path) -> Any:
    return catalog_view(
        load_catalog(data), CatalogFilters(text=SEARCH), datetime.now(UTC), 120, "en"
    )


def test_refresh_prices_button_shows_the_new_rows_and_their_age(
    browser: Any, prices_app: tuple[str, Path]
) -> None:
    url, data = prices_app
    page, context = open_app(browser, url, "desktop", "en-US")
    try:
        open_tab(page, ui_text("en", "tab_catalog"))
        count = page.locator("#cat-count")
        sync_api.expect(count).to_contain_text(" of ")
        page.locator("#cat-search input, #cat-search textarea").first.fill(SEARCH)
        before = _view(data)
        sync_api.expect(count).to_have_text(before.count_markdown.replace("**", ""))
        ages = cells(page, "#catalog", AGE_COLUMN, len(before.key.rows))
        assert ui_text("en", "age_now") not in ages, f"built-in prices are days old: {ages}"

        page.click("#refresh-prices")
        status = page.locator("#refresh-status")
        sync_api.expect(status).to_contain_text("Prices refreshed", timeout=TURN_MS)
        idle(page)
        after = _view(data)
        assert len(after.key.rows) == len(before.key.rows) + 1, "a row per region price"
        sync_api.expect(count).to_have_text(after.count_markdown.replace("**", ""))
        ages = cells(page, "#catalog", AGE_COLUMN, len(after.key.rows))
        assert ages.count(ui_text("en", "age_now")) == 2, f"the two fresh rows: {ages}"
        text = status.inner_text()
        assert "✓ aws (gpuhunt): new prices, 3 instance types" in text
        assert "✗ gcp (gpuhunt): not refreshed (HTTP 404" in text, "one line per failure"
        assert "the built-in prices stay in use" in text
        page.click("#refresh-outcome-box button.label-wrap")
        outcome = cells(page, "#refresh-outcome", 0, 1) + cells(page, "#refresh-outcome", 2, 1)
        assert outcome == ["aws", ui_text("en", "refresh_status_updated")]
        shot(page, "issue13-refresh-prices")
    finally:
        context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_header_says_how_old_the_prices_are_and_refreshes_them(
    browser: Any, prices_app: tuple[str, Path], size: str
) -> None:
    """Issue 26, defect 7: the header shows the prices' age from the first screen, and its
    button runs the refresh, opens the Catalog tab with its progress and writes the new age."""
    url, data = prices_app
    page, context = open_app(browser, url, size, "en-US")
    try:
        line = page.locator("#price-age")
        expected = price_age_markdown(load_catalog(data), datetime.now(UTC), 120, "en")
        assert expected.startswith("Price age: newest ")
        sync_api.expect(line).to_have_text(expected)
        page.click("#header-refresh")
        sync_api.expect(page.locator("#cat-count")).to_be_visible()
        status = page.locator("#refresh-status")
        sync_api.expect(status).to_contain_text("Prices refreshed", timeout=TURN_MS)
        idle(page)
        sync_api.expect(line).to_contain_text(f"Price age: newest {ui_text('en', 'age_now')}, ")
        now = price_age_markdown(load_catalog(data), datetime.now(UTC), 120, "en")
        sync_api.expect(line).to_have_text(now)
        assert page_width(page) <= SIZES[size][0], "the header fits the screen"
        shot(page, f"issue26-7-header-prices-{size}")
    finally:
        context.close()
