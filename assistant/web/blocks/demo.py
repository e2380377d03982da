"""The whole page and its launch: `build_demo(settings)` builds the Gradio Blocks, `main()`
reads the settings (environment, then flags), launches on 127.0.0.1 by default and warms up the
knowledge base in the background."""

from __future__ import annotations

import argparse
import logging
import os
import threading
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any

import gradio as gr

from assistant.agent.conversation import Assistant
from assistant.settings import Settings
from assistant.web.blocks.chat import chat_column, wire_chat
from assistant.web.blocks.common import (
    CONCURRENCY,
    CSS,
    OFFLINE_ENV,
    QUEUE_SIZE,
    STORAGE_KEY,
    UPLOAD_LIMIT,
    i18n,
    t,
)
from assistant.web.blocks.handlers import App
from assistant.web.blocks.panel import panel_column, wire_panel
from assistant.web.blocks.tabs import catalog_tab, estimator_tab, knowledge_tab
from assistant.web.public_api import PublicApi
from assistant.web.session import browser_secret
from tools.errors import AdvisorError

__all__ = ["build_demo", "endpoint", "launch_options", "main", "settings_from_args"]


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
    secret = browser_secret(settings.data_dir)
    with gr.Blocks(title="GPU Advisor", analytics_enabled=False, fill_width=True) as demo:
        web_state = gr.State(None)
        browser = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=secret)
        gr.Markdown("# GPU Advisor", elem_id="title")
        gr.Markdown(t("subtitle"))
        with gr.Tabs():
            with gr.Tab(t("tab_chat"), id="chat-tab"), gr.Row(equal_height=False):
                with gr.Column(scale=3, min_width=420):
                    chat = chat_column(app, web_state)
                with gr.Column(scale=2, min_width=380):
                    fields, panel, upload, apply, choose = panel_column()
            catalog = catalog_tab(app, web_state)
            knowledge_tab(app)
            estimator = estimator_tab(app, web_state)
        gr.Markdown(t("privacy_note"), elem_id="privacy")
        wire_chat(app, demo, web_state, browser, chat, [*fields, *panel], [catalog, estimator])
        wire_panel(app, web_state, browser, fields, panel, upload, apply, choose)
        for fn in PublicApi(app.catalog, app.assistant.resources.knowledge).functions():
            gr.api(endpoint(fn), api_name=fn.__name__)
    return demo


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


def main(argv: Sequence[str] | None = None) -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_args(argv)
    assistant = Assistant(settings)
    demo = build_demo(settings, assistant=assistant)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    threading.Thread(target=assistant.warm_up, name="warm-up", daemon=True).start()
    demo.launch(**launch_options(settings))
