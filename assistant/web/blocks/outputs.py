"""The values the advisor tab's components show for one browser session, in the order the page
lists those components: the job form (`form_outputs`), the panel (`panel_outputs`) and the
launch spec alone (`launch_outputs`). Everything shown is computed by `assistant.web`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.components.plot import AltairPlotData

from assistant.web.blocks.common import table_update
from assistant.web.form import CURRENCIES, FORM_FIELDS, assumed_defaults, form_hints, form_values
from assistant.web.panel import PanelView, panel_view
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_text
from tools.catalog.instances import Catalog, Instance

__all__ = ["FORM_OUTPUTS", "LAUNCH_OUTPUTS", "PANEL_OUTPUTS", "Outputs"]

# How many values each group returns (the components are listed in this order on the page).
FORM_OUTPUTS = len(FORM_FIELDS) + 2  # the fields, the currency, the form's accordion
PANEL_OUTPUTS = 14
LAUNCH_OUTPUTS = 4  # the launch accordion, the choice, the YAML, the JSON download
_HINTED = {"precision", "method", "spot"}  # choices whose hint is their info line


def plot_value(chart: dict[str, Any] | None) -> AltairPlotData | None:
    """A Vega-Lite specification (`assistant.web.charts.cost.cost_chart`) as the plot
    component's value. The component fits a chart to its container's width (and again when the
    window resizes) only for the kinds of chart it draws itself; marked 'line', the kind whose
    theming handles layered charts, ours gets that too."""
    if chart is None:
        return None
    plot = json.dumps(chart, separators=(",", ":"))
    return AltairPlotData(type="altair", plot=plot, chart="line")


class Outputs:
    """Renders a session's form and panel; writes launch-spec downloads under `export_dir`."""

    def __init__(self, catalog: Catalog, instances: Mapping[str, Instance], export_dir: Path):
        self.catalog = catalog
        self.instances = instances
        self.export_dir = export_dir

    def view(self, web: WebSession) -> PanelView:
        """The panel for `web` in its interface language; the launch choice follows the view."""
        view = panel_view(web.panel, self.instances, web.language, web.chosen)
        web.chosen = view.chosen
        return view

    def form_outputs(self, web: WebSession) -> tuple[Any, ...]:
        """The form's fields (FORM_FIELDS order) with what the job holds and, beside each open
        field, the default it takes; the currency; the form open once there is a job."""
        state, lang = web.session.state, web.language
        shown = form_values(state)
        hints = form_hints(state, assumed_defaults(state, self.catalog), lang)
        fields: list[Any] = []
        for name in FORM_FIELDS:
            value, hint = shown.values[name], hints.get(name)
            if name == "model":
                fields.append(gr.update(value=value, info=ui_text(lang, "model_info")))
            elif name in _HINTED:
                fields.append(gr.update(value=value, info=hint))
            else:
                fields.append(gr.Number(value=value, placeholder=hint or ""))
        currency = gr.Dropdown(value=shown.currency, choices=list(CURRENCIES))
        return (*fields, currency, gr.Accordion(open=state.model is not None))

    def panel_outputs(self, web: WebSession, view: PanelView | None = None) -> tuple[Any, ...]:
        """Notes, memory chart, cost chart and caption, the results (shown once there is a
        ranking): ranked count and tables, excluded box and table, then the launch spec
        (`launch_outputs`)."""
        view = view or self.view(web)
        lang = web.language
        excluded = f"{ui_text(lang, 'excluded')} ({len(view.excluded.rows)})"
        return (
            view.notes_markdown,
            view.plan_chart_html,
            gr.Plot(value=plot_value(view.cost_chart), visible=view.cost_chart is not None),
            view.cost_caption,
            gr.Column(visible=web.panel.ranking is not None),
            view.ranked_count,
            table_update(view.ranked),
            table_update(view.ranked_more),
            gr.Accordion(label=excluded),
            table_update(view.excluded),
            *self.launch_outputs(web, view),
        )

    def launch_outputs(self, web: WebSession, view: PanelView | None = None) -> tuple[Any, ...]:
        """The launch accordion's title, the choice, the SkyPilot YAML and the JSON download."""
        view = view or self.view(web)
        download = gr.DownloadButton(visible=False)
        if view.launch_json is not None and view.chosen is not None:
            folder = self.export_dir / web.session.id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"launch-{view.chosen.replace('/', '-')}.json"
            path.write_text(view.launch_json, encoding="utf-8")
            download = gr.DownloadButton(value=str(path), visible=True)
        return (
            gr.Accordion(label=view.launch_title),
            gr.Dropdown(choices=view.launch_choices, value=view.chosen),
            view.launch_yaml,
            download,
        )
