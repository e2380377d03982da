"""The Gradio edge of the web app: components and event wiring, and nothing else.

This is the only package of `assistant/` that imports Gradio. `demo` builds the page and
launches it, `chat` the chat column, `panel` the job panel, `tabs` the Catalog, Knowledge and
Estimator tabs, `handlers` the event handlers, `common` what they share. Everything a component
shows is computed by the pure modules of `assistant.web`, tested without Gradio.
"""

from assistant.web.blocks.common import CONCURRENCY, QUEUE_SIZE
from assistant.web.blocks.demo import (
    build_demo,
    launch_options,
    main,
    queue_demo,
    settings_from_args,
)
from assistant.web.blocks.handlers import App

__all__ = [
    "CONCURRENCY",
    "QUEUE_SIZE",
    "App",
    "build_demo",
    "launch_options",
    "main",
    "queue_demo",
    "settings_from_args",
]
