"""End to end in a real browser: Playwright drives Debian's Chromium against the app on loopback.

Three flows: an English QLoRA question (tool calls, answer, ranked table, chart, launch spec, and
the conversation surviving a reload), a Turkish question answered in Turkish under a Turkish UI,
and filtering the catalog tab. Screenshots go to test-artifacts/. The browser is headless, without
sandbox (containers) and with background networking off; the test also checks that the page never
requests anything off the machine. Skipped, saying why, when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

import app
from assistant.agent.conversation import Assistant
from assistant.answers.i18n import message
from assistant.web.ui_strings import ui_text
from assistant.web.views import CatalogFilters, filter_catalog_table
from tests.fakes.app import TinyKnowledge, make_settings
from tools.catalog.store import load_catalog

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TURN_TIMEOUT_MS = 60_000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Debian's chromium is not installed (apt-get install chromium)",
    ),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        settings = make_settings(tmp_path_factory.mktemp("data"))
        demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
        demo.queue(default_concurrency_limit=app.CONCURRENCY)
        options = app.launch_options(settings) | {"prevent_thread_lock": True, "quiet": True}
        _, url, _ = demo.launch(**options)
        try:
            yield url
        finally:
            demo.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser: Any, app_url: str) -> Iterator[Any]:
    """A function opening the app in a fresh context with a locale; records every request."""
    contexts: list[Any] = []

    def opener(locale: str) -> Any:
        context = browser.new_context(locale=locale, viewport={"width": 1440, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        page.requested = []
        page.on("request", lambda request: page.requested.append(request.url))
        page.goto(app_url)
        page.wait_for_selector("#chat-input textarea", timeout=TURN_TIMEOUT_MS)
        return page

    yield opener
    for context in contexts:
        context.close()


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _ask(page: Any, text: str) -> None:
    page.fill("#chat-input textarea", text)
    page.click("#send")
    page.wait_for_selector("#memory-chart svg.memory-chart", timeout=TURN_TIMEOUT_MS)
    page.wait_for_function(
        "() => !document.querySelector('#chat .pending, #chat [data-status=pending]')",
        timeout=TURN_TIMEOUT_MS,
    )


def _offsite(urls: list[str], base: str) -> list[str]:
    host = urlparse(base).hostname
    return [u for u in urls if urlparse(u).scheme in ("http", "https", "ws", "wss")
            and urlparse(u).hostname != host]  # fmt: skip


def test_english_qlora_question_shows_tools_answer_table_chart_and_spec(
    open_page: Any, app_url: str
) -> None:
    page = open_page("en-US")
    question = "QLoRA fine-tune of Llama 3.1 70B on 200M tokens, spot is fine. Which GPU?"
    _ask(page, question)
    chat = page.locator("#chat")
    sync_api.expect(chat.get_by_text("estimate_memory", exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text("rank_instances", exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text(message("en", "memory.heading")).first).to_be_visible()
    sync_api.expect(page.locator("#chat-input textarea")).to_have_value("")
    first_row = page.locator('#ranked [data-testid="cell-0-0"]')
    sync_api.expect(first_row).to_have_text("1")
    assert page.locator("#ranked [role=row][data-index]").count() >= 3, "ranked rows shown"
    sync_api.expect(page.locator("#memory-chart svg.memory-chart")).to_have_attribute(
        "aria-label", re.compile(r"Llama 3\.1 70B .* GiB")
    )
    sync_api.expect(page.locator("#launch-yaml")).to_contain_text("accelerators:")
    sync_api.expect(page.locator("#excluded-box")).to_contain_text(re.compile(r"\(\d+\)"))
    _shot(page, "flow1-en-qlora")
    page.reload()
    page.wait_for_selector("#chat-input textarea")
    sync_api.expect(page.locator("#chat").get_by_text(question)).to_be_visible(timeout=20_000)
    sync_api.expect(page.locator("#memory-chart svg.memory-chart")).to_be_visible()
    assert _offsite(page.requested, app_url) == [], "nothing is fetched off the machine"


def test_turkish_question_is_answered_in_turkish_under_a_turkish_ui(open_page: Any) -> None:
    page = open_page("tr-TR")
    sync_api.expect(page.locator("#send")).to_have_text(ui_text("tr", "send"))
    _ask(page, "70 milyar parametreli modelde QLoRA, 200 milyon token, spot olur. Hangi GPU?")
    chat = page.locator("#chat")
    sync_api.expect(chat.get_by_text(message("tr", "memory.heading"), exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text(message("en", "memory.heading"), exact=True)).to_have_count(0)
    header = page.locator("#ranked").get_by_text(ui_text("tr", "col_provider"), exact=True)
    sync_api.expect(header.first).to_be_visible()
    _shot(page, "flow2-tr-answer")


def test_catalog_filters_keep_only_matching_rows(open_page: Any) -> None:
    page = open_page("en-US")
    page.get_by_role("tab", name=ui_text("en", "tab_catalog")).click()
    count = page.locator("#cat-count")
    sync_api.expect(count).to_contain_text(" / ")
    page.fill("#cat-vram input", "80")
    page.press("#cat-vram input", "Enter")
    page.locator("#cat-spot input").check()
    catalog = load_catalog(None)
    text, table = filter_catalog_table(
        catalog, CatalogFilters(min_vram_gib=80, spot_only=True), date.today(), 120, "en"
    )
    expected = text.replace("**", "")
    sync_api.expect(count).to_have_text(expected, timeout=20_000)
    first = [page.locator(f'#catalog [data-testid="cell-0-{col}"]').inner_text() for col in (1, 3)]
    assert first == [table.rows[0][1], f"{table.rows[0][3]:g}"], "cheapest match first"
    vram = [float(page.locator(f'#catalog [data-testid="cell-{row}-3"]').inner_text())
            for row in range(min(5, len(table.rows)))]  # fmt: skip
    assert all(value >= 80 for value in vram), f"every shown row has >= 80 GiB: {vram}"
    _shot(page, "flow3-catalog-filter")
