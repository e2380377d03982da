"""What every part of the Gradio app shares: the translation table, small converters and the
constants of the page (queue, upload cap, offline environment, styles).

This package is the only place in `assistant/` that imports Gradio: it builds components and
wires their events to the pure view functions of `assistant.web`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import gradio as gr
import pandas as pd

from assistant.web.ui_strings import i18n_tables
from assistant.web.views import Table
from tools.errors import AdvisorError
from tools.languages import LANGUAGE_NAMES, LANGUAGES

CONCURRENCY = 4  # turns run at once; CPU-bound, so more only adds contention
QUEUE_SIZE = 256
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
STORAGE_KEY = "gpu-advisor-conversation"
CSS = """
.gradio-container {max-width: 1500px !important; margin: auto}
#chat {min-height: 560px}
.memory-chart text {user-select: none}
footer {display: none !important}
"""
Widths = list[str | int]


@cache
def i18n() -> gr.I18n:
    """The interface strings of the six languages, translated in the browser."""
    return gr.I18n(**i18n_tables())


def t(key: str) -> Any:
    """The interface string `key`, resolved in the browser's language."""
    return i18n()(key)


def frame(table: Table) -> pd.DataFrame:
    """A view table as the DataFrame a gr.Dataframe shows."""
    return pd.DataFrame(table.rows, columns=table.headers)


def language_choices() -> list[tuple[str, str]]:
    """'Auto' and the six languages, each by its own name."""
    return [("Auto", "auto")] + [(LANGUAGE_NAMES[code], code) for code in LANGUAGES]


def shown_error(prefix: str, error: AdvisorError) -> gr.Error:
    """A domain error as the one-line message a page shows."""
    return gr.Error(f"{prefix} {error}")
