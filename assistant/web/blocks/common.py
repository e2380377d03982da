"""What every part of the Gradio app shares: the translation table, the language switch, small
converters, the guard that keeps a failed handler from breaking the page, and the constants of
the page (queue, upload cap, offline environment).

This package is the only place in `assistant/` that imports Gradio: it builds components and
wires their events to the pure view functions of `assistant.web`.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from functools import cache, wraps
from typing import Any, TypeVar

import gradio as gr

from assistant.answers.literal import as_html_text
from assistant.web.tables import Table
from assistant.web.ui_strings import fixed_english, i18n_tables, ui_format, ui_text
from tools.errors import AdvisorError
from tools.languages import LANGUAGE_NAMES, LANGUAGES

log = logging.getLogger("assistant.web")

CONCURRENCY = 4  # turns run at once; CPU-bound, so more only adds contention
QUEUE_SIZE = 256
# Gradio's default ("auto") sends every waiting event its place in the queue each time an event
# starts: with 25 turns queued on a worker that is 25 SSE messages per turn, O(n^2) in the queue,
# about 10 ms of a worker's CPU per turn under a burst (py-spy). Every 2 s instead: the page's
# "queue 5/25" still moves, a turn costs one message of its own at the join.
QUEUE_STATUS_EVERY_S = 2.0
STREAM_INTERVAL_S = 0.1  # answer chunks closer together than this go out in one update
UPLOAD_LIMIT = "5mb"  # Gradio's hard cap; assistant.web.uploads refuses anything over 1 MB clearly
OFFLINE_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
# Gradio's queue rebuilds its monitoring summary (a pandas DataFrame of up to 10,000 past events)
# after every event unless told to do so less often; the app never enables monitoring, so nothing
# reads it. Measured: 1.8 ms of CPU per chat turn after 500 turns, growing with the events kept.
QUEUE_ENV = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000"}
STORAGE_KEY = "gpu-advisor-conversation"
# Switches the page's language in the browser: Gradio translates every gr.I18n label and its own
# strings with its locale store, which its `core` module sets with `changeLocale`; that module is
# already loaded, so importing it again returns the same instance.
# Gradio's own English titles and aria-labels (`ui_strings.fixed_english`) in the page's
# language: each written as it appears, and again after a change of language; the words any
# language gives a title are read back to its English first.
_FIXED_ENGLISH_JS = """
  const table = %s;
  const english = {};
  for (const [en, texts] of Object.entries(table)) {
    for (const text of Object.values(texts)) english[text] = en;
  }
  const fix = (el) => {
    for (const name of ["title", "aria-label"]) {
      const value = el.getAttribute && el.getAttribute(name);
      const en = value && english[value];
      if (!en) continue;
      const want = table[en][window.gaFixedLang] || en;
      if (value !== want) el.setAttribute(name, want);
    }
  };
  const fixAll = (root) => {
    fix(root);
    if (root.querySelectorAll) root.querySelectorAll("[title], [aria-label]").forEach(fix);
  };
  window.gaFixedLang = lang || "en";
  if (!window.gaFixedObserver) {
    window.gaFixedObserver = new MutationObserver((changes) => {
      for (const change of changes) {
        if (change.type === "attributes") fix(change.target);
        change.addedNodes.forEach((node) => { if (node.nodeType === 1) fixAll(node); });
      }
    });
    window.gaFixedObserver.observe(document.body, {
      subtree: true, childList: true, attributes: true, attributeFilter: ["title", "aria-label"],
    });
  }
  fixAll(document.body);
"""
SET_LOCALE_JS = (
    """
async (lang) => {
  const core = performance.getEntriesByType("resource").map((e) => e.name)
    .find((name) => /\\/assets\\/core-[\\w-]+\\.js$/.test(name));
  if (core && lang) {
    const module = await import(core);
    module.changeLocale(lang);
  }
  document.documentElement.lang = lang || "en";
"""
    + _FIXED_ENGLISH_JS % json.dumps(fixed_english(), ensure_ascii=False)
    + """
  return [];
}
"""
)
Widths = list[str | int]
F = TypeVar("F", bound=Callable[..., Any])


@cache
def i18n() -> gr.I18n:
    """The interface strings of the six languages, translated in the browser."""
    return gr.I18n(**i18n_tables())


def t(key: str) -> Any:
    """The interface string `key`, resolved in the page's language."""
    return i18n()(key)


def input_row() -> Any:
    """A row of labelled inputs, built alike for the Catalog tab's filters and the job form's
    rows: side by side on a wide screen, two to a line on a phone (`.input-row` in style.CSS)."""
    return gr.Row(elem_classes=["input-row"])


def number_input(label_key: str, elem_id: str, precision: int | None = None) -> Any:
    """A number input of at least 0, labelled with the interface string `label_key`."""
    return gr.Number(label=t(label_key), minimum=0, precision=precision, elem_id=elem_id)


def choice_input(choices: Any, label_key: str, elem_id: str, **extra: Any) -> Any:
    """A dropdown labelled with the interface string `label_key` (`extra`: multiselect, value,
    info, scale...)."""
    return gr.Dropdown(choices, label=t(label_key), elem_id=elem_id, **extra)


def table_update(table: Table, **extra: Any) -> Any:
    """A table component's new value: raw cells to sort by, locale text to show. An update, not
    a `gr.Dataframe`: Gradio treats both alike, and building the component walks its cells
    (about 0.37 ms for 25 rows)."""
    return gr.update(value=table.value(), datatype=table.datatypes, **extra)


def interface_choices() -> list[tuple[str, str]]:
    """The six interface languages, each by its own name."""
    return [(LANGUAGE_NAMES[code], code) for code in LANGUAGES]


def answer_choices() -> list[tuple[Any, str]]:
    """'Detect automatically' and the six languages, each by its own name."""
    return [(t("lang_auto"), "auto"), *interface_choices()]


def warn(lang: str, text: str) -> None:
    """A warning toast (its title is written in the page's language by `style.CSS`); the text,
    which may quote a file or a message, is shown as text."""
    gr.Warning(as_html_text(text), title=ui_text(lang, "toast_warning"))


def inform(lang: str, text: str) -> None:
    """An information toast (its title is written in the page's language by `style.CSS`); the
    text is shown as text."""
    gr.Info(as_html_text(text), title=ui_text(lang, "toast_info"))


def guarded(outputs: int, lang_of: Callable[..., str]) -> Callable[[F], F]:
    """A handler that never breaks the page: a domain error becomes one warning line, a bug one
    line with an error id (its traceback goes to the log); either way every output is left as it
    was (no component turns to an error state). `lang_of(*args)` says the interface language."""

    def wrap(fn: F) -> F:
        @wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except AdvisorError as exc:
                lang = lang_of(*args)
                warn(lang, ui_format(lang, "error_input", error=str(exc)))
            except Exception:
                error_id = uuid.uuid4().hex[:8]
                log.exception("web handler %s failed; error id %s", fn.__name__, error_id)
                lang = lang_of(*args)
                warn(lang, ui_format(lang, "error_unexpected", id=error_id))
            skipped = tuple(gr.skip() for _ in range(outputs))
            return skipped[0] if outputs == 1 else skipped

        return call  # type: ignore[return-value]

    return wrap
