"""Issue 14, "The web app as people use it", defects 5-8 (one picture of the decision, the
tables, the language, the first screen and the messages), checked in Chromium at both sizes
(1440x900 and 390x844) and in three interface languages (English, French, Turkish). Defects 1-4
are in test_issue14_page.py. Each test saves test-artifacts/issue14-<defect>-<size>-<lang>.png.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from assistant.agent.conversation import MAX_MESSAGE_CHARS
from assistant.answers.i18n import message
from assistant.web.chat_view import message_problem
from assistant.web.tables import CATALOG_KEY_COLUMNS, RANKED_KEY_COLUMNS
from assistant.web.ui_strings import example_prompts, i18n_tables, ui_text, vocabulary
from assistant.web.views import CatalogFilters, catalog_view
from tests.e2e.conftest import sync_api
from tests.e2e.pages import (
    LOCALES,
    SIZES,
    ask,
    box,
    cells,
    choose,
    headers,
    idle,
    leftovers,
    messages,
    open_form,
    open_tab,
    page_width,
    shot,
    toasts,
    wait_for_message_starting,
    wait_for_messages,
    wait_ui_language,
)
from tools.catalog.store import load_catalog
from tools.languages import LANGUAGE_NAMES, LANGUAGES

CASES = [(size, lang) for size in SIZES for lang in ("en", "fr", "tr")]
FULL_FINE_TUNE = {
    "en": "Full fine-tune of Llama 3.1 70B on 200M tokens",
    "fr": "Affinage complet de Llama 3.1 70B sur 200 millions de tokens",
    "tr": "Llama 3.1 70B üzerinde tam ince ayar, 200 milyon token",
}
SPOT_QUESTION = {
    "en": "Is spot safe for a long training run?",
    "fr": "Le spot est-il sûr pour un long entraînement ?",
    "tr": "Uzun bir eğitim için spot güvenli mi?",
}
# Money in the interface locale: "$1,234.56" (en), "1 234,56 $US" (fr), "$1.234,56" (tr).
MONEY = {
    "en": r"^\$[\d,]+\.\d\d$",
    "fr": "^[\\d\u202f]+,\\d\\d\u00a0\\$US$",
    "tr": r"^\$[\d.]+,\d\d$",
}


def _name(defect: str, size: str, lang: str) -> str:
    return f"issue14-{defect}-{size}-{lang}"


def _plan_figures(page: Any) -> list[str]:
    return [f.strip() for f in page.locator("#memory-chart .pc-fig").all_inner_texts()]


def _need_widths(page: Any) -> list[float]:
    """Each drawn option's need as a share of its card's frame (percent)."""
    styles = page.locator("#memory-chart .pc-need").evaluate_all(
        "(bars) => bars.map((b) => b.style.width)"
    )
    return [float(s.rstrip("%")) for s in styles]


# --------------------------------------------------------------------- 5. one picture


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_5_the_memory_chart_draws_the_rows_own_needs(open_page: Any, size: str, lang: str) -> None:
    page = open_page(size, LOCALES[lang])
    ask(page, FULL_FINE_TUNE[lang])
    figures = _plan_figures(page)
    assert len(figures) >= 3, "the best options are drawn"
    assert figures == cells(page, "#ranked", 4, len(figures)), "the chart's figures are the rows'"
    assert all(0 < width <= 100 for width in _need_widths(page)), "no ranked card drawn too small"
    sync_api.expect(page.locator("#cost-chart canvas, #cost-chart svg").first).to_be_visible()
    shot(page, _name("5-decision", size, lang))


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_5_a_form_edit_moves_chat_and_spec(open_page: Any, size: str, lang: str) -> None:
    page = open_page(size, LOCALES[lang])
    ask(page, FULL_FINE_TUNE[lang])
    before = messages(page)
    open_form(page)
    choose(page, "#form-method", vocabulary(lang, "method", "qlora"))
    wait_for_messages(page, before)
    heading = ui_text(lang, "form_updated").split("{changes}")[0].strip()
    edited = wait_for_message_starting(page, heading)  # the chat answers the edited job
    idle(page)
    assert vocabulary(lang, "method", "qlora") in edited.split("\n")[0]
    first = cells(page, "#ranked", 1, 1)[0]
    sync_api.expect(page.locator("#launch-choice input")).to_have_value(
        re.compile(f"^#1 {re.escape(first)}")
    )
    assert _plan_figures(page) == cells(page, "#ranked", 4, len(_plan_figures(page)))


# --------------------------------------------------------------------- 6. tables


def _in_view(page: Any, table: str, width: int) -> list[str]:
    """The headers of `table` whose right edge lies outside the screen."""
    outside = []
    for th in page.locator(f"{table} thead th").all():
        found = th.bounding_box()
        if found is not None and th.inner_text().strip() and found["x"] + found["width"] > width:
            outside.append(th.inner_text().strip())
    return outside


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_6_key_columns_first_money_in_the_locale_links_and_counts_that_follow_filters(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, LOCALES[lang])
    ask(page, example_prompts(lang)[0])
    width = SIZES[size][0]
    keys = [ui_text(lang, c.header) for c in RANKED_KEY_COLUMNS]
    assert headers(page, "#ranked") == keys, "rank, instance, ..., age, in that order"
    if size == "desktop":
        assert _in_view(page, "#ranked", width) == [], "every key column in view at 1440 px"
    prices = cells(page, "#ranked", 5, 3)
    assert all(re.match(MONEY[lang], p) for p in prices), f"money in the {lang} locale: {prices}"
    open_tab(page, ui_text(lang, "tab_catalog"))
    page.wait_for_selector('#catalog [data-testid="cell-0-0"]')
    assert page_width(page) <= width, "the catalog fits the screen"
    assert ui_text(lang, "col_per_gpu_hour") in headers(page, "#catalog"), "$/GPU-hour shown"
    assert headers(page, "#catalog") == [ui_text(lang, c.header) for c in CATALOG_KEY_COLUMNS]
    links = page.locator("#catalog a[href^='https://']")
    sync_api.expect(links.first).to_be_attached()  # the source column's links
    page.fill("#cat-search input, #cat-search textarea", "H100")
    page.press("#cat-search input, #cat-search textarea", "Enter")
    view = catalog_view(
        load_catalog(None), CatalogFilters(text="H100"), datetime.now(UTC), 120, lang
    )
    sync_api.expect(page.locator("#cat-count")).to_have_text(
        view.count_markdown.replace("**", ""), timeout=20_000
    )
    shown = cells(page, "#catalog", 1, min(5, len(view.key.rows)))
    assert all("H100" in gpus for gpus in shown), f"only H100 rows: {shown}"
    shot(page, _name("6-tables", size, lang))


# --------------------------------------------------------------------- 7. language


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_7_six_interface_languages_no_english_leftover_one_unit_spelling(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, "en-US")
    page.locator("#ui-lang input").click()
    options = page.get_by_role("option").all_inner_texts()
    assert len(options) == len(LANGUAGES), f"six interface languages: {options}"
    page.get_by_role("option", name=LANGUAGE_NAMES[lang], exact=True).click()
    wait_ui_language(page, lang)
    ask(page, example_prompts(lang)[0])
    if lang != "en":
        assert leftovers(page, lang) == [], "no English left on the page"
    text = page.locator("body").inner_text()
    assert "GiB" in text and "Gio" not in text, "one unit spelling"
    page.reload()
    page.wait_for_selector("#memory-chart .pc-fig")
    sync_api.expect(page.locator("#send")).to_have_text(ui_text(lang, "send"))
    shot(page, _name("7-language", size, lang))


def test_7_an_answer_language_apart_from_the_interface_keeps_each_in_its_place(
    open_page: Any,
) -> None:
    page = open_page("desktop", "en-US")
    choose(page, "#language", LANGUAGE_NAMES["de"])
    idle(page)
    ask(page, example_prompts("en")[0])
    chat = page.locator("#chat")
    sync_api.expect(chat.get_by_text(message("de", "memory.heading")).first).to_be_visible()
    assert headers(page, "#ranked") == [ui_text("en", c.header) for c in RANKED_KEY_COLUMNS]
    sync_api.expect(page.locator("#send")).to_have_text(ui_text("en", "send"))
    sync_api.expect(page.locator("#tagline")).to_have_text(ui_text("en", "tagline"))
    shot(page, "issue14-7-answer-de-ui-en")


# --------------------------------------------------------------------- 8. first screen


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_8_first_screen_examples_above_the_fold_footer_and_messages_refused_with_a_hint(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, LOCALES[lang])
    height = SIZES[size][1]
    sync_api.expect(page.locator("#tagline")).to_have_text(ui_text(lang, "tagline"))
    examples = page.locator("#chat button.example")
    assert 4 <= examples.count() <= 6, "four to six examples"
    assert box(page, "#chat button.example")["y"] < height, "the examples start above the fold"
    sync_api.expect(page.locator("#job-form [data-testid=accordion-content]")).to_be_hidden()
    footer = page.get_by_text(i18n_tables()[lang]["errors.use_via_api_or_mcp"])
    sync_api.expect(footer.first).to_be_visible()
    page.click("#send")
    page.wait_for_timeout(800)
    assert toasts(page)[-1] == message_problem("", MAX_MESSAGE_CHARS, lang), "empty: a hint"
    paste = "x" * 20_000
    page.fill("#chat-input textarea", paste)
    page.click("#send")
    page.wait_for_timeout(800)
    assert toasts(page)[-1] == message_problem(paste, MAX_MESSAGE_CHARS, lang), "the limit said"
    assert len(page.locator("#chat-input textarea").input_value()) == 20_000, "nothing cut"
    assert messages(page) == 0, "nothing was sent"
    page.fill("#chat-input textarea", "")
    examples.first.click()
    wait_for_messages(page, 0)
    idle(page)
    page.click("#new-chat")
    idle(page)
    ask(page, SPOT_QUESTION[lang], job=False)
    sources = ui_text(lang, "sources_title").split("{count}")[0].strip()
    answer = page.locator("#chat [data-testid=bot]").filter(has_text=sources)
    assert answer.count() == 1, "the sources are listed once"
    open_tab(page, ui_text(lang, "tab_estimator"))
    sync_api.expect(page.locator("#est-upload")).to_be_visible()
    assert page.locator("#est-gpus input").get_attribute("min") == "0", "0 GPUs = any"
    shot(page, _name("8-first-screen", size, lang))
