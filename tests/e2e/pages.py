"""What the browser tests do on the page: open it at a size and in a locale, ask, switch the
interface language, upload, read what is shown, take screenshots (test-artifacts/)."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from assistant.web.ui_strings import i18n_tables, ui_text

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
LOCALES = {"en": "en-US", "nl": "nl-NL", "fr": "fr-FR", "tr": "tr-TR", "de": "de-DE", "es": "es-ES"}
TURN_MS = 60_000


def open_app(browser: Any, url: str, size: str, locale: str) -> tuple[Any, Any]:
    """A new context at `size` in `locale`, the app loaded, its saved session restored and the
    page in its language; the page records every request it makes (`page.requested`)."""
    width, height = SIZES[size]
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
    page = context.new_page()
    page.requested = []
    page.on("request", lambda request: page.requested.append(request.url))
    page.goto(url)
    page.wait_for_selector("#chat-input textarea", timeout=TURN_MS)
    page.wait_for_selector("#chat button.example, #chat .message-row", timeout=TURN_MS)
    return page, context


def shot(page: Any, name: str, full: bool = True) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full)
    return path


def idle(page: Any) -> None:
    """Wait until no chat message is pending and no event is running."""
    page.wait_for_function(
        "() => !document.querySelector('#chat .pending, #chat [data-status=pending]')"
        " && !document.querySelector('.progress-text, .eta-bar')",
        timeout=TURN_MS,
    )
    page.wait_for_timeout(400)


def ask(page: Any, text: str, job: bool = True) -> None:
    """Send `text` and wait for the answer (and, for a job, the panel's chart and table)."""
    rows = page.locator("#chat .message-row").count()
    page.fill("#chat-input textarea", text)
    page.click("#send")
    page.wait_for_function(
        f"() => document.querySelectorAll('#chat .message-row').length > {rows}", timeout=TURN_MS
    )
    if job:
        page.wait_for_selector("#memory-chart .plan-chart", timeout=TURN_MS)
        page.wait_for_selector('#ranked [data-testid="cell-0-0"]', timeout=TURN_MS)
    idle(page)


MESSAGES = "#chat [data-testid=bot], #chat [data-testid=user]"  # one per message (rows group them)


def messages(page: Any) -> int:
    """How many messages the chat shows (consecutive ones share a row)."""
    return int(page.locator(MESSAGES).count())


def wait_for_messages(page: Any, more_than: int) -> None:
    """Wait until the chat shows more than `more_than` messages."""
    page.wait_for_function(
        f"() => document.querySelectorAll({json.dumps(MESSAGES)}).length > {more_than}",
        timeout=TURN_MS,
    )


def last_message(page: Any) -> str:
    return str(page.locator(MESSAGES).last.inner_text())


def wait_for_message_starting(page: Any, prefix: str) -> str:
    """The last message that starts with `prefix`, once the chat shows one (a turn's sources may
    still arrive after it, so the last message need not be the one waited for)."""
    starts = f"m => m.innerText.trim().startsWith({json.dumps(prefix)})"
    page.wait_for_function(
        f"() => [...document.querySelectorAll({json.dumps(MESSAGES)})].some({starts})",
        timeout=TURN_MS,
    )
    found = [t for t in page.locator(MESSAGES).all_inner_texts() if t.strip().startswith(prefix)]
    return str(found[-1]).strip()


def tool_call(page: Any, name: str) -> str:
    """The last call of tool `name` in the chat, unfolded: its inputs (JSON) and result line."""
    title = page.get_by_text(name, exact=True)
    message = page.locator("#chat [data-testid=bot]").filter(has=title).last
    text = ""
    for _ in range(3):  # a click while the message still renders can leave it folded
        message.get_by_text(name, exact=True).click()
        for _ in range(20):
            page.wait_for_timeout(150)
            text = str(message.inner_text())
            if "{" in text:
                return text
    return text


def choose(page: Any, selector: str, option: str) -> None:
    """Pick `option` (its shown name) in the dropdown `selector`, and wait until the dropdown
    shows it (a click while an unfolding form still moves can land beside the list)."""
    box = page.locator(f"{selector} input")
    box.scroll_into_view_if_needed()
    for _ in range(3):
        box.click()
        choice = page.get_by_role("option", name=option, exact=True)
        try:
            choice.wait_for(state="visible", timeout=5_000)
        except Exception:  # the list did not open: click the box again
            continue
        choice.click()
        if box.input_value() == option:
            return
    assert box.input_value() == option, f"{selector} shows {box.input_value()!r}, not {option!r}"


def wait_ui_language(page: Any, lang: str) -> None:
    """Wait until the page is in interface language `lang` (the Send button says so)."""
    label = json.dumps(ui_text(lang, "send"))
    page.wait_for_function(
        f"() => document.querySelector('#send').innerText.trim() === {label}", timeout=TURN_MS
    )
    idle(page)


def open_tab(page: Any, name: str) -> None:
    """Open the tab `name`; on a narrow screen Gradio folds the last tabs into a "More" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if tab.count() and tab.is_visible():
        tab.click()
        return
    page.click("#tabs .overflow-menu > button")
    page.locator("#tabs .overflow-dropdown button").filter(has_text=name).click()


def open_form(page: Any) -> None:
    """Unfold the job form if it is folded."""
    if page.locator("#job-form [data-testid=accordion-content]").is_hidden():
        page.click("#job-form button.label-wrap")
    page.wait_for_selector("#job-form input[type=file]", state="attached")


def upload(page: Any, path: Path, where: str = "#job-form") -> None:
    page.set_input_files(f"{where} input[type=file]", str(path))
    page.wait_for_timeout(600)
    idle(page)


def toasts(page: Any) -> list[str]:
    """The messages of the toasts on screen."""
    return page.locator("[data-testid=toast-text]").all_inner_texts()


def page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not on the page"
    return found


def cells(page: Any, table: str, column: int, rows: int) -> list[str]:
    """The shown text of `column` in the first `rows` rows of a table component."""
    return [
        page.locator(f'{table} [data-testid="cell-{row}-{column}"]').inner_text().strip()
        for row in range(rows)
    ]


def headers(page: Any, table: str) -> list[str]:
    return [h.strip() for h in page.locator(f"{table} thead th").all_inner_texts() if h.strip()]


def offsite(urls: list[str], base: str) -> list[str]:
    host = urlparse(base).hostname
    return [u for u in urls if urlparse(u).scheme in ("http", "https", "ws", "wss")
            and urlparse(u).hostname != host]  # fmt: skip


def english_fragments(lang: str) -> set[str]:
    """English pieces (12+ characters, split at `{name}` places) of every interface string that
    reads differently in `lang`: none of them may show on a page in `lang`."""
    table = i18n_tables()
    pieces = set()
    for key, english in table["en"].items():
        if table[lang][key] == english:
            continue
        for literal, *_ in string.Formatter().parse(english):
            pieces |= {p.strip() for p in re.split(r"[*_]", literal) if len(p.strip()) >= 12}
    return pieces


# Gradio's own words that would show in English if its tables or ours missed them.
GRADIO_ENGLISH = (
    "Use via API", "Copy message", "Clear filters", "Sort ascending", "Drop File Here",
    "Click to Upload", "Search...", "Built with Gradio", "Copy table data", "Fullscreen",
    "Table actions", "More tabs", "chatbot conversation", "Click to view actions",
    "Vega visualization",
)  # fmt: skip


def page_texts(page: Any) -> list[str]:
    """Every text the page shows outside the chat's messages (which are in the answer's
    language) and the launch YAML: visible text nodes, placeholders, button labels and titles."""
    return page.evaluate(
        """() => {
      const out = [];
      const skip = (el) => el.closest('#chat .message-row, #launch-yaml, .cm-editor');
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) {
        const node = walker.currentNode, el = node.parentElement;
        const text = node.textContent.trim();
        if (!text || !el || skip(el)) continue;
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.visibility === 'hidden' || el.offsetParent === null
            && style.position !== 'fixed') continue;
        out.push(text);
      }
      for (const el of document.querySelectorAll('[placeholder], [aria-label], [title]')) {
        if (skip(el) || el.offsetParent === null) continue;
        for (const a of ['placeholder', 'aria-label', 'title']) {
          const v = el.getAttribute(a); if (v && v.trim()) out.push(v.trim());
        }
      }
      return out;
    }"""
    )


def leftovers(page: Any, lang: str) -> list[str]:
    """English shown on a page in `lang`."""
    texts = page_texts(page)
    found = {p for p in english_fragments(lang) for t in texts if p in t}
    found |= {g for g in GRADIO_ENGLISH for t in texts if t == g or t.startswith(g)}
    return sorted(found)


def write_config(folder: Path, name: str, content: bytes | dict[str, object]) -> Path:
    path = folder / name
    path.write_bytes(json.dumps(content).encode() if isinstance(content, dict) else content)
    return path
