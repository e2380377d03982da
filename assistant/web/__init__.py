"""Everything the web app draws and serves, as pure functions and models (no UI library here).

`panel` is the job panel beside the chat, `views` and `tables` its tables, `charts/` the memory,
plan and cost charts, `form` the job form, `launch_spec` the SkyPilot task, `state/` what a
browser tab keeps (its session, sealed on the server) and the thumbs ratings, `uploads`
config.json uploads, `chat_view` and `safe_text` the chat as text, `cells` figures in the
interface locale, `ui_strings` the interface strings in six languages, `prices` the price
refresh the Catalog tab and the API run (one at a time), and `public_api` the functions
published as API endpoints and MCP tools.
"""

from assistant.web.form import form_values, form_widgets, spec_from_form
from assistant.web.panel import PanelData, compute_panel, panel_from_events, panel_view
from assistant.web.public_api import PublicApi
from assistant.web.state.session import WebSession

__all__ = [
    "PanelData",
    "PublicApi",
    "WebSession",
    "compute_panel",
    "form_values",
    "form_widgets",
    "panel_from_events",
    "panel_view",
    "spec_from_form",
]
