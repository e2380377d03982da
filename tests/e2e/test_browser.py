"""End to end in a real browser: the three main flows, on a desktop screen.

An English QLoRA question (tool calls, answer, ranked table, chart, launch spec, the conversation
surviving a reload, nothing fetched off the machine), a Turkish question answered in Turkish
under a Turkish interface, and filtering the catalog. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from assistant.answers.i18n import message
from assistant.web.ui_strings import ui_text
from assistant.web.views import CatalogFilters, catalog_view
from tests.e2e.conftest import sync_api
from tests.e2e.pages import ask, cells, offsite, shot
from tools.catalog.store import load_catalog


def test_english_qlora_question_shows_tools_answer_table_chart_and_spec(
    open_page: Any, app_url: str
) -> None:
    page = open_page("desktop", "en-US")
    question = "QLoRA fine-tune of Llama 3.1 70B on 200M tokens, spot is fine. Which GPU?"
    ask(page, question)
    chat = page.locator("#chat")
    sync_api.expect(chat.get_by_text("estimate_memory", exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text("rank_instances", exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text(message("en", "memory.heading")).first).to_be_visible()
    sync_api.expect(page.locator("#chat-input textarea")).to_have_value("")
    assert cells(page, "#ranked", 0, 3) == ["1", "2", "3"], "ranked rows, best first"
    sync_api.expect(page.locator("#memory-chart .plan-chart")).to_have_attribute(
        "aria-label", re.compile(r"Memory per GPU of the best options: #1 [\d.]+ / \d+\u00a0GiB")
    )
    sync_api.expect(page.locator("#launch-yaml")).to_contain_text("accelerators:")
    sync_api.expect(page.locator("#excluded-box")).to_contain_text(re.compile(r"\(\d+\)"))
    shot(page, "flow1-en-qlora")
    page.reload()
    page.wait_for_selector("#chat-input textarea")
    sync_api.expect(page.locator("#chat").get_by_text(question)).to_be_visible(timeout=20_000)
    sync_api.expect(page.locator("#memory-chart .plan-chart")).to_be_visible()
    assert offsite(page.requested, app_url) == [], "nothing is fetched off the machine"


def test_turkish_question_is_answered_in_turkish_under_a_turkish_ui(open_page: Any) -> None:
    page = open_page("desktop", "tr-TR")
    sync_api.expect(page.locator("#send")).to_have_text(ui_text("tr", "send"))
    ask(page, "70 milyar parametreli modelde QLoRA, 200 milyon token, spot olur. Hangi GPU?")
    chat = page.locator("#chat")
    sync_api.expect(chat.get_by_text(message("tr", "memory.heading"), exact=True)).to_be_visible()
    sync_api.expect(chat.get_by_text(message("en", "memory.heading"), exact=True)).to_have_count(0)
    header = page.locator("#ranked").get_by_text(ui_text("tr", "col_instance"), exact=True)
    sync_api.expect(header.first).to_be_visible()
    shot(page, "flow2-tr-answer")


def test_catalog_filters_keep_only_matching_rows(open_page: Any) -> None:
    page = open_page("desktop", "en-US")
    page.get_by_role("tab", name=ui_text("en", "tab_catalog")).click()
    count = page.locator("#cat-count")
    sync_api.expect(count).to_contain_text(" of ")
    page.fill("#cat-vram input", "80")
    page.press("#cat-vram input", "Enter")
    page.locator("#cat-spot input").check()
    filters = CatalogFilters(min_vram_gib=80, spot_only=True)
    view = catalog_view(load_catalog(None), filters, datetime.now(UTC), 120, "en")
    sync_api.expect(count).to_have_text(view.count_markdown.replace("**", ""), timeout=20_000)
    assert cells(page, "#catalog", 0, 1) == [view.key.display[0][0]], "cheapest per GPU-hour first"
    vram = [float(v) for v in cells(page, "#catalog", 2, min(5, len(view.key.rows)))]
    assert all(value >= 80 for value in vram), f"every shown row has >= 80 GiB: {vram}"
    shot(page, "flow3-catalog-filter")
