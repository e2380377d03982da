"""Issue 26, "The app and the catalog as people use them": the defects seen in the browser,
checked in Chromium on a desktop (1440x900) and a phone (390x844). Screenshots go to
test-artifacts/issue26-<defect>-<size>-<language>.png."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import sync_api
from tests.e2e.pages import (
    LOCALES,
    SIZES,
    ask,
    cells,
    open_form,
    open_tab,
    page_width,
    shot,
    toasts,
    upload,
    write_config,
)
from tests.fakes.jobs import LLAMA_8B_CONFIG
from tools.catalog import builtin_catalog
from tools.catalog.files import write_catalog_csv
from tools.catalog.instances import Catalog

JOB = {
    "en": ("QLoRA on Llama 3.1 70B, 200M tokens, which GPU should I rent?", "spot is fine"),
    "tr": ("Llama 3.1 70B QLoRA, 200 milyon token, hangi GPU'yu kiralamalıyım?", "spot olur"),
}
# What the cost chart drew at its edges: the on-screen box of its canvas, and how many pixels
# of its outermost 3 columns on each side differ from its background (text cut at an edge
# shows there; the chart's own padding leaves them blank).
CHART_EDGES = """() => {
  const canvas = document.querySelector('#cost-chart canvas');
  const box = canvas.getBoundingClientRect();
  const context = canvas.getContext('2d');
  const ground = context.getImageData(0, 0, 1, 1).data;  // the background, at a corner
  const painted = (x) => {
    const data = context.getImageData(x, 0, 3, canvas.height).data;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) {
      const off = [0, 1, 2, 3].some((c) => Math.abs(data[i + c] - ground[c]) > 24);
      if (off) count += 1;
    }
    return count;
  };
  return {left: box.left, right: box.right, painted: painted(0) + painted(canvas.width - 3)};
}"""


@pytest.mark.parametrize("lang", list(JOB))
@pytest.mark.parametrize("size", list(SIZES))
def test_4_the_cost_chart_stays_inside_the_screen_after_a_spot_turn(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, LOCALES[lang])
    question, spot = JOB[lang]
    ask(page, question)
    ask(page, spot)
    page.wait_for_timeout(800)
    page.locator("#cost-chart").scroll_into_view_if_needed()
    width = SIZES[size][0]
    edges = page.evaluate(CHART_EDGES)
    assert page_width(page) <= width, "no sideways scroll of the page"
    assert edges["left"] >= 0 and edges["right"] <= width, f"the chart is on screen: {edges}"
    assert edges["painted"] == 0, "nothing the chart draws is cut at its edges (legend, labels)"
    shot(page, f"issue26-4-cost-chart-{size}-{lang}")


# --------------------------------------------------------------------- 1-3. uploads, panel

HUGE_CONFIG = {**LLAMA_8B_CONFIG, "num_hidden_layers": 10**21, "_name_or_path": "huge"}
MARKUP_NAME = "**bold** [link](http://203.0.113.9/x) ![img](http://203.0.113.9/i.png) <b>b</b>"
JOB_TEXT = "LoRA on Llama 3.1 8B, 50M tokens, which GPU should I rent?"


@pytest.mark.parametrize("size", list(SIZES))
def test_1_a_config_with_absurd_sizes_is_refused_and_the_chat_keeps_answering(
    open_page: Any, files: Path, size: str
) -> None:
    page = open_page(size)
    ask(page, JOB_TEXT)
    open_form(page)
    upload(page, write_config(files, "config.json", HUGE_CONFIG))
    assert "num_hidden_layers" in toasts(page)[-1], "the refusal names the key"
    sync_api.expect(page.locator("#job-form .error")).to_have_count(0)
    for question in (JOB_TEXT, "and with 100M tokens?"):
        ask(page, question)
        assert "Something went wrong" not in page.locator("#chat").inner_text()
        sync_api.expect(page.locator("#chat .error")).to_have_count(0)
    assert first_recommended(page), "the last turn answered with a ranking"
    shot(page, f"issue26-1-huge-config-{size}")


@pytest.mark.parametrize("size", list(SIZES))
def test_2_a_model_name_with_markup_shows_as_its_characters(
    open_page: Any, files: Path, size: str
) -> None:
    page = open_page(size)
    ask(page, JOB_TEXT)
    open_form(page)
    config = write_config(files, "config.json", {**LLAMA_8B_CONFIG, "_name_or_path": MARKUP_NAME})
    upload(page, config)
    sync_api.expect(page.locator("#panel-notes")).to_contain_text(MARKUP_NAME)
    ask(page, "and with 100M tokens?")
    sync_api.expect(page.locator("#chat").get_by_text(MARKUP_NAME).first).to_be_visible()
    made = (  # what the name would make as markup
        "strong:text-is('bold'), b:text-is('b'), a[href*='203.0.113.9'], img[src*='203.0.113.9']"
    )
    for where in ("#panel-notes", "#chat", "#results", "[data-testid=toast-text]"):
        assert page.locator(where).locator(made).count() == 0, f"markup from the file in {where}"
    assert [u for u in page.requested if "203.0.113.9" in u] == [], "nothing fetched for it"
    shot(page, f"issue26-2-markup-name-{size}")


@pytest.mark.parametrize("size", list(SIZES))
def test_3_after_why_not_the_panel_and_the_chat_name_one_first_choice(
    open_page: Any, size: str
) -> None:
    page = open_page(size)
    ask(page, JOB_TEXT)
    first = first_recommended(page)
    ask(page, "why not an H100?", job=False)
    for moment in ("after the question", "after a reload"):
        assert first in cells(page, "#ranked", 1, 1)[0], f"the table's first row {moment}"
        gpus = set(cells(page, "#ranked", 2, 3))
        assert not all("H100" in g for g in gpus), f"the whole ranking {moment}: {gpus}"
        sync_api.expect(page.locator("#memory-chart .pc-first")).to_contain_text(first_gpu(page))
        page.reload()
        page.wait_for_selector("#memory-chart .pc-fig", timeout=60_000)
    shot(page, f"issue26-3-why-not-{size}")


def first_recommended(page: Any) -> str:
    """The instance of the chat's last first choice ('<provider> <instance>: ...')."""
    text = page.locator("#chat").inner_text()
    heading = "Recommended instances"
    assert heading in text, "a ranking in the chat"
    line = text.rsplit(heading, 1)[1].strip().splitlines()[0]
    return line.split(":", 1)[0].split(" ", 1)[1]


def first_gpu(page: Any) -> str:
    text = page.locator("#chat").inner_text().rsplit("Recommended instances", 1)[1]
    return text.strip().splitlines()[0].split("×", 1)[1].split(",", 1)[0].strip()


# --------------------------------------------------------------------- 5. own prices

QUOTED = "hyperstack/n3-A100x1"  # a built-in row the test's price file quotes far cheaper


def write_quotes(folder: Path, name: str, price: float) -> Path:
    """A price file in the catalog's own CSV layout: the built-in row `QUOTED` at `price`."""
    row = builtin_catalog().get(QUOTED)
    quote = row.model_copy(update={"price_per_hour": price, "as_of": date.today()})
    return write_catalog_csv(Catalog([quote]), folder / name)


@pytest.mark.parametrize("size", list(SIZES))
def test_5_an_uploaded_price_file_ranks_this_tab_and_a_bad_one_is_refused(
    open_page: Any, files: Path, size: str
) -> None:
    page = open_page(size)
    ask(page, JOB_TEXT)
    assert "n3-A100x1" not in first_recommended(page)
    open_tab(page, "Catalog")
    page.click("#own-prices-box button.label-wrap")
    bad = files / "bad quotes.csv"
    bad.write_text(write_quotes(files, "q.csv", 0.07).read_text().replace(",0.07,", ",-2,"))
    upload(page, bad, "#own-prices-box")
    assert "bad quotes.csv row 1: field price_per_hour" in toasts(page)[-1]
    sync_api.expect(page.locator("#own-prices-status")).to_have_text("")
    upload(page, write_quotes(files, "my quotes.csv", 0.07), "#own-prices-box")
    status = page.locator("#own-prices-status")
    sync_api.expect(status).to_contain_text("Your prices from my quotes.csv: 1 instance types")
    sync_api.expect(status).to_contain_text("n3-A100x1 $1.35 → $0.07")
    page.fill("#cat-search input, #cat-search textarea", "n3-A100x1")
    sync_api.expect(page.locator("#catalog")).to_contain_text("$0.07")
    shot(page, f"issue26-5-own-prices-{size}")
    open_tab(page, "Advisor")
    ask(page, "and with 100M tokens?")
    assert first_recommended(page) == "n3-A100x1", "the chat ranks with the quote"
    assert "n3-A100x1" in cells(page, "#ranked", 1, 1)[0], "so does the panel"
    page.reload()
    page.wait_for_selector("#memory-chart .pc-fig", timeout=60_000)
    assert "n3-A100x1" in cells(page, "#ranked", 1, 1)[0], "and after a reload"
    open_tab(page, "Catalog")
    page.click("#own-prices-box button.label-wrap")
    sync_api.expect(page.locator("#own-prices-status")).to_contain_text("In use in this tab")
    page.click("#own-prices-remove")
    sync_api.expect(page.locator("#own-prices-status")).to_contain_text("no longer used")
    open_tab(page, "Advisor")
    assert "n3-A100x1" not in cells(page, "#ranked", 1, 1)[0], "removed: the shared catalog"


# --------------------------------------------------------------------- 8. smaller defects

SPOT_FIELD = """() => {
  const box = document.querySelector('#form-spot');
  const checked = box.querySelector('input[type=radio]:checked');
  return {text: box.innerText, checked: checked ? checked.value : null};
}"""


@pytest.mark.parametrize("size", list(SIZES))
def test_8_a_default_hint_goes_when_the_chat_sets_the_field(open_page: Any, size: str) -> None:
    page = open_page(size)
    ask(page, JOB["en"][0])
    open_form(page)
    before = page.evaluate(SPOT_FIELD)
    assert before["checked"] is None and "assumed: no spot" in before["text"]
    ask(page, JOB["en"][1])
    after = page.evaluate(SPOT_FIELD)
    assert after["checked"] == "allowed", after
    assert "assumed" not in after["text"], f"no default hint beside a chosen value: {after}"
    shot(page, f"issue26-8-spot-hint-{size}")


WELCOME_TOP = """() => {
  const intro = document.querySelector('#chat .placeholder');
  let box = document.querySelector('#chat').getBoundingClientRect();
  for (let el = intro.parentElement; el && el.id !== 'chat'; el = el.parentElement) {
    const style = getComputedStyle(el);  // the parts that scroll clip what they show
    if (['auto', 'scroll', 'hidden'].includes(style.overflowY)) {
      const r = el.getBoundingClientRect();
      box = {top: Math.max(box.top, r.top), bottom: Math.min(box.bottom, r.bottom)};
    }
  }
  return {intro: intro.getBoundingClientRect().top, top: box.top, bottom: box.bottom};
}"""


@pytest.mark.parametrize("lang", ["en", "fr", "tr"])
@pytest.mark.parametrize("size", list(SIZES))
def test_8_the_welcome_text_is_shown_from_its_first_line(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, LOCALES[lang])
    page.wait_for_selector("#chat .placeholder")
    page.wait_for_timeout(800)
    where = page.evaluate(WELCOME_TOP)
    assert where["top"] <= where["intro"] < where["bottom"], f"the first line is shown: {where}"
    shot(page, f"issue26-8-welcome-{size}-{lang}", full=False)


YAML_ROWS = """() => {
  const numbers = [...document.querySelectorAll('#launch-yaml .cm-lineNumbers .cm-gutterElement')]
    .filter((g) => g.getBoundingClientRect().height > 0);  // CodeMirror's hidden measurers
  const lines = [...document.querySelectorAll('#launch-yaml .cm-line')];
  return {
    numbers: numbers.map((g) => g.textContent.trim()),
    off: numbers.map((g, i) => lines[i] ? Math.abs(g.getBoundingClientRect().top
      - lines[i].getBoundingClientRect().top) : 99),
    lines: lines.length,
  };
}"""


@pytest.mark.parametrize("size", list(SIZES))
def test_8_each_launch_yaml_line_number_is_on_its_line(open_page: Any, size: str) -> None:
    """Not seen misaligned here (Debian's Chromium) on the session's starting main either,
    beyond the one frame before CodeMirror measures a box scrolled into view: kept as a guard,
    after a turn, another row's spec and a reload."""
    page = open_page(size)
    ask(page, JOB_TEXT)
    for moment in ("after a turn", "for another row", "after a reload"):
        if moment == "for another row":
            page.locator("#launch-choice input").click()
            page.get_by_role("option").nth(1).click()
            page.wait_for_timeout(800)
        if moment == "after a reload":
            page.reload()
            page.wait_for_selector("#memory-chart .pc-fig", timeout=60_000)
        page.locator("#launch-yaml").scroll_into_view_if_needed()
        page.wait_for_timeout(300)  # CodeMirror measures its lines in the frame after it shows
        rows = page.evaluate(YAML_ROWS)
        assert rows["lines"] >= 8 and rows["numbers"][:3] == ["1", "2", "3"], (moment, rows)
        assert max(rows["off"]) <= 1, f"each number on its line {moment}: {rows}"
