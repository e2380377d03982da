"""The whole page and its launch: `build_demo(settings)` builds the Gradio Blocks, `main()`
reads the settings (environment, then flags), launches on 127.0.0.1 by default and warms up the
knowledge base in the background.

The page: a header (name, one line of what it does, how old the prices are with a button to
refresh them, the interface and answer languages), then
the Advisor tab (the chat beside the job panel's form and charts, the tables below), the
Catalog, Knowledge and Memory estimator tabs, and the footer with the API/MCP link. On a
screen under 900 px everything stacks in one column (see `style.CSS`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import threading
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any

import gradio as gr

from assistant.agent.conversation import Assistant, Session
from assistant.settings import Settings
from assistant.web.blocks.catalog import catalog_tab
from assistant.web.blocks.chat import chat_column, wire_chat
from assistant.web.blocks.common import (
    CONCURRENCY,
    OFFLINE_ENV,
    QUEUE_ENV,
    QUEUE_SIZE,
    QUEUE_STATUS_EVERY_S,
    SET_LOCALE_JS,
    STORAGE_KEY,
    UPLOAD_LIMIT,
    i18n,
    t,
)
from assistant.web.blocks.estimator import estimator_tab
from assistant.web.blocks.handlers import App
from assistant.web.blocks.header import header
from assistant.web.blocks.knowledge import knowledge_tab
from assistant.web.blocks.own_prices import wire_own_prices
from assistant.web.blocks.panel import job_form, panel_charts, panel_tables, wire_panel
from assistant.web.blocks.style import CSS
from assistant.web.public_api import PublicApi
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_text
from tools.catalog.refresh.background import BackgroundRefresh
from tools.errors import AdvisorError
from tools.redaction import install_log_redaction

__all__ = [
    "build_demo",
    "endpoint",
    "launch_options",
    "main",
    "queue_demo",
    "settings_from_args",
    "settle_heap",
    "start_up",
    "warm_up",
]


def endpoint(fn: Callable[..., str]) -> Callable[..., str]:
    """A published function whose domain errors reach API and MCP clients as errors carrying
    the one line the command line prints ('error: ...'); MCP clients see a tool error
    (isError: true)."""

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except AdvisorError as exc:
            raise gr.Error(f"error: {exc}", title="", print_exception=False) from None

    return call


def build_demo(settings: Settings, *, assistant: Assistant | None = None) -> gr.Blocks:
    """The whole app for `settings`; `assistant` replaces the one Settings would build (tests)."""
    app = App(settings, assistant or Assistant(settings))
    with gr.Blocks(title="GPU Advisor", analytics_enabled=False, fill_width=True) as demo:
        web_state = gr.State(None)
        browser = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=app.seal.gradio_secret)
        head = header()
        ui_lang, answer = head.ui_lang, head.answer
        with gr.Tabs(elem_id="tabs") as tab_group:
            with gr.Tab(t("tab_chat"), id="chat-tab") as advisor_tab:
                with gr.Row(equal_height=False, elem_id="advisor-row"):
                    with gr.Column(scale=5, min_width=300, elem_id="chat-col"):
                        chat = chat_column()
                    with gr.Column(scale=4, min_width=300, elem_id="panel-col"):
                        panel = job_form()
                        panel_charts(panel)
                panel_tables(panel)
            with gr.Tab(t("tab_catalog"), id="catalog-tab") as catalog_box:
                catalog = catalog_tab(app, web_state, head)
            with gr.Tab(t("tab_knowledge"), id="knowledge-tab") as knowledge_box:
                knowledge_tab(app, web_state)
            with gr.Tab(t("tab_estimator"), id="estimator-tab") as estimator_box:
                estimator = estimator_tab(app, web_state)
        tabs = [advisor_tab, catalog_box, knowledge_box, estimator_box]
        gr.Markdown(t("privacy_note"), elem_id="privacy")
        job = [web_state, chat.chatbot, *panel.form_outputs, *panel.outputs]
        server_side = [panel.choose, panel.launch_outputs[-1]]  # checked choices, a file
        wire_chat(app, web_state, browser, chat, answer, job, job[2:], server_side)
        wire_panel(app, web_state, browser, panel, job)
        for changed in wire_own_prices(app, web_state, catalog.own, job):
            changed.then(*catalog.tables, api_visibility="private")
        head.refresh.click(
            lambda: gr.Tabs(selected="catalog-tab"), None, tab_group, api_visibility="private"
        )
        fills = [
            catalog.fill,
            estimator,
            [_tab_labels, [web_state], tabs],
            head.fill(app, web_state),
        ]
        _wire_session(app, demo, web_state, browser, ui_lang, answer, job, fills)
        published = PublicApi(app.catalog, app.assistant.resources.knowledge, app.prices)
        for fn in published.functions():
            gr.api(endpoint(fn), api_name=fn.__name__)
    return demo


TAB_KEYS = ("tab_chat", "tab_catalog", "tab_knowledge", "tab_estimator")


def _tab_labels(web: WebSession | None) -> tuple[Any, ...]:
    """The tabs' names in the interface language (Gradio's tabs do not follow a locale
    change made after they were drawn)."""
    lang = web.language if web is not None else "en"
    return tuple(gr.Tab(label=ui_text(lang, key)) for key in TAB_KEYS)


def _wire_session(
    app: App,
    demo: gr.Blocks,
    web_state: gr.State,
    browser: gr.BrowserState,
    ui_lang: Any,
    answer: Any,
    job: list[Any],
    tabs: list[list[Any]],
) -> None:
    """A load restores the saved session and sets the page's language; a new interface
    language re-renders what the server wrote; each choice is saved."""
    restored = [web_state, job[1], ui_lang, answer, *job[2:]]
    load = demo.load(app.restore, [browser], restored, api_visibility="private")
    load = load.then(None, [ui_lang], None, js=SET_LOCALE_JS)
    for fill, inputs, outputs in tabs:  # catalog, estimator, tab names: in the page's language
        load = load.then(fill, inputs, outputs, api_visibility="private")
    ui_lang.input(None, [ui_lang], None, js=SET_LOCALE_JS)
    changed = ui_lang.input(
        app.set_ui_language, [web_state, ui_lang], job, api_visibility="private"
    )
    for fill, inputs, outputs in tabs:
        changed = changed.then(fill, inputs, outputs, api_visibility="private")
    changed.then(app.save_browser, [web_state], [browser], api_visibility="private")
    answer.input(
        app.set_answer_language, [web_state, answer], [web_state], api_visibility="private"
    ).then(app.save_browser, [web_state], [browser], api_visibility="private")


WARM_UP_MESSAGE = "LoRA fine-tune of Llama 3.1 8B"


def warm_up(assistant: Assistant) -> None:
    """Open the catalog and the knowledge base, and answer one turn nobody sees, so the first
    person's turn finds the lexicons, routes and caches a turn reads already loaded. A failure
    is one log line: the first real turn then opens what it needs itself."""
    try:
        assistant.warm_up()
        for _event in assistant.respond(WARM_UP_MESSAGE, Session()):
            pass
    except Exception:
        logging.getLogger("assistant.web").exception("warm-up failed; the first turn opens all")


# The cycle collector's thresholds in a served worker: a young-generation pass every 10,000 net
# allocations (CPython's default 700), the middle one every 20 of those, a full pass every 50
# middle ones (about 2,000 turns). Measured in a worker serving `benchmarks.load`'s 500 turns
# (one worker): the collector took 4.0 s of CPU with the defaults, 15 full passes among them at
# ~0.17 s each, since 50 open sessions hold a million objects a full pass scans; 1.2 s with
# these. The young passes cost the same in all (their work is the allocations). Cyclic garbage
# that lives long enough to reach the oldest generation waits longer to be freed.
GC_THRESHOLDS = (10_000, 20, 50)


def settle_heap() -> int:
    """Collect once, move every object alive now to the collector's permanent generation, and
    set the worker's thresholds (`GC_THRESHOLDS`); the count of objects frozen. A started
    worker holds about 700,000 tracked objects (Gradio, the agent stack, the catalog, the
    lexicons), none of them garbage; frozen, no later pass scans them (`gc.collect()` ran just
    before, so nothing cyclic is left among them to free)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    return gc.get_freeze_count()


def start_up(assistant: Assistant) -> None:
    """What a worker does once its page is served: warm up, then settle the heap."""
    warm_up(assistant)
    settle_heap()


def launch_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of `Blocks.launch` for `settings` (host, port, auth, MCP, theme...)."""
    auth = None
    if settings.auth_user and settings.auth_password:
        auth = (settings.auth_user, settings.auth_password.get_secret_value())
    return {
        "server_name": settings.host,
        "server_port": settings.port,
        "auth": auth,
        "mcp_server": settings.mcp,
        "i18n": i18n(),
        "theme": gr.themes.Soft(font=["system-ui", "sans-serif"], font_mono=["monospace"]),
        "css": CSS,
        "max_file_size": UPLOAD_LIMIT,
        "blocked_paths": [str(settings.data_dir)],
        "show_error": True,
        "footer_links": ["api"],
    }


def settings_from_args(argv: Sequence[str] | None = None) -> Settings:
    """Settings from the environment, with the command-line flags on top."""
    parser = argparse.ArgumentParser(prog="app.py", description="GPU Advisor's web app.")
    parser.add_argument("--host", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default 7860)")
    parser.add_argument("--mcp", action="store_true", default=None, help="also serve MCP tools")
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return Settings(**overrides)


def queue_demo(demo: gr.Blocks) -> gr.Blocks:
    """The app's queue on `demo`: `CONCURRENCY` turns at once, at most `QUEUE_SIZE` waiting,
    queue places sent every `QUEUE_STATUS_EVERY_S` seconds rather than at every start."""
    return demo.queue(
        default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE,
        status_update_rate=QUEUE_STATUS_EVERY_S,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    for key, value in {**OFFLINE_ENV, **QUEUE_ENV}.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_args(argv)
    install_log_redaction(settings.secrets())  # no key or password in any log line
    assistant = Assistant(settings)
    demo = build_demo(settings, assistant=assistant)
    queue_demo(demo)
    demo.launch(**launch_options(settings), prevent_thread_lock=True)
    # Once the page is served: the first screen needs neither the knowledge base nor a turn's
    # lexicons, and on two cores opening them before would only delay the page.
    threading.Thread(target=start_up, args=(assistant,), name="warm-up", daemon=True).start()
    if settings.catalog_refresh_hours > 0:  # on by default; 0 turns it off
        BackgroundRefresh(
            settings.data_dir, settings.refresh_config(), settings.catalog_refresh_hours,
            on_updated=assistant.resources.reload_catalog,
        ).start()  # fmt: skip
    demo.block_thread()
