"""The values the advisor tab's components show for one browser session, in the order the page
lists those components: the job form (`form_outputs`), the panel (`panel_outputs`) and the
launch spec alone (`launch_outputs`). Everything shown is computed by `assistant.web`. Values
are updates (`gr.update`), which Gradio treats as it treats a component object, without building
one (a table's walks its cells); the launch file stays a `gr.DownloadButton`, which `sent_key`
tells apart.

After a chat turn (`after_turn`) only what changed is sent: a component whose value is the one
this page was last sent gets `gr.skip()`. A guidance question changes neither form nor panel,
and a change of the job leaves most form fields and often the excluded table as they were; the
whole form and panel are about 67 kB of JSON a turn. The record of what was sent is kept only
by `after_turn`; any other render of these components (a page load, an edit, a language, a
pick) makes it unknown, so the next `after_turn` sends everything again.

The page's turn does not hand these values to Gradio one component each (`PageUpdates`): for
every output an event lists, changed or skipped, Gradio builds the component again and its
configuration twice (about 0.37 ms each, 10 ms for the 26 of the form and panel, a fifth of a
turn's CPU). The turn returns them as one JSON payload instead, values already in the form the
browser's components take (each component's own `postprocess`), and a chained browser-side
function (`APPLY_UPDATES_JS`) hands each to its component; an unchanged one is left alone. Only
the launch choice (its choices are checked by the server when someone picks one) and the
download (a file the server must register to serve) stay Gradio outputs.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import orjson
from gradio.blocks import Block
from gradio.components.plot import AltairPlotData

from assistant.web.blocks.common import table_update
from assistant.web.form import CURRENCIES, FORM_FIELDS, assumed_defaults, form_hints, form_values
from assistant.web.panel import PanelData, PanelView, panel_view
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_text
from tools.catalog.instances import Catalog, Instance

__all__ = ["APPLY_UPDATES_JS", "FORM_OUTPUTS", "LAUNCH_OUTPUTS", "PANEL_OUTPUTS", "SLOTS",
           "Outputs", "PageUpdates"]  # fmt: skip

# How many values each group returns (the components are listed in this order on the page).
FORM_OUTPUTS = len(FORM_FIELDS) + 2  # the fields, the currency, the form's accordion
PANEL_OUTPUTS = 14
SLOTS = FORM_OUTPUTS + PANEL_OUTPUTS
LAUNCH_OUTPUTS = 4  # the launch accordion, the choice, the YAML, the JSON download
PICKLE_PROTOCOL = 5
# What a component update applied in the browser may set; any other property goes through Gradio.
BROWSER_PROPS = frozenset(
    {"value", "visible", "label", "open", "info", "placeholder", "datatype", "choices"}
)
# The page's payload to its components, in order: an update each, or null for one left alone
# (undefined is how a browser-side function skips an output).
APPLY_UPDATES_JS = """(text) => {
  const payload = text ? JSON.parse(text) : null;
  if (!payload || !Array.isArray(payload.updates)) return [];
  return payload.updates.map((u) => (u === null ? undefined : u));
}"""
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


def sent_key(value: Any) -> Any:
    """What identifies an output value as sent: the pickled bytes of a component's arguments,
    else of the value (text, an update). Bytes, since Gradio changes what it is given in place
    (it drops an update's None entries); pickling is a quarter of the cost of a deep copy, and
    equal bytes can only come from equal values (the converse need not hold: a value that
    pickles otherwise is sent again, never skipped wrongly). A file's key equals no other: its
    URL names its content, which may change under the same path (the launch spec of another
    job for the same instance)."""
    if isinstance(value, gr.DownloadButton | gr.File):
        return object()
    if isinstance(value, Block):
        return pickle.dumps((type(value), value.constructor_args), protocol=PICKLE_PROTOCOL)
    return pickle.dumps(value, protocol=PICKLE_PROTOCOL)


@dataclass(frozen=True)
class Sent:
    """What `Outputs.after_turn` last sent a page: the keys of its form and panel values, and
    the panel's inputs (the data, the renderer, the language, the launch choice), with the panel
    values they gave."""

    keys: tuple[Any, ...]
    panel: PanelData
    outputs: Outputs
    lang: str
    chosen: str | None
    panel_values: tuple[Any, ...]


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

    def after_turn(self, web: WebSession) -> tuple[Any, ...]:
        """Form and panel after a chat turn, each value this page was last sent by this method
        replaced by `gr.skip()` (see the module docstring). The panel is rendered again only
        when its data, this renderer, the language or the launch choice changed; the form (about
        1 ms) always, and compared field by field."""
        before = web.sent
        form = self.form_outputs(web)
        keys = tuple(sent_key(value) for value in form)
        if (
            isinstance(before, Sent)
            and before.panel is web.panel
            and before.outputs is self
            and (before.lang, before.chosen) == (web.language, web.chosen)
        ):
            # the same values, and their keys as recorded (Gradio has since changed the
            # updates it was given in place); a file gets a new key, so it is sent again
            panel = before.panel_values
            kept = before.keys[len(form) :]
            keys += tuple(
                sent_key(value) if isinstance(value, gr.DownloadButton | gr.File) else key
                for value, key in zip(panel, kept, strict=True)
            )
        else:
            panel = self.panel_outputs(web)
            keys += tuple(sent_key(value) for value in panel)
        values = (*form, *panel)
        web.sent = Sent(keys, web.panel, self, web.language, web.chosen, panel)
        if not isinstance(before, Sent):
            return values
        return tuple(
            gr.skip() if key == old else value
            for value, key, old in zip(values, keys, before.keys, strict=True)
        )

    def form_outputs(self, web: WebSession) -> tuple[Any, ...]:
        """The form's fields (FORM_FIELDS order) with what the job holds and, beside each open
        field, the default it takes; the currency; the form open once there is a job."""
        web.sent = None  # see the module docstring
        state, lang = web.session.state, web.language
        shown = form_values(state)
        hints = form_hints(state, assumed_defaults(state, self.catalog), lang)
        fields: list[Any] = []
        for name in FORM_FIELDS:
            value, hint = shown.values[name], hints.get(name)
            if name == "model":
                fields.append(gr.update(value=value, info=ui_text(lang, "model_info")))
            elif name in _HINTED:  # "", not None: an update's None leaves the old hint shown
                fields.append(gr.update(value=value, info=hint or ""))
            else:
                fields.append(gr.update(value=value, placeholder=hint or ""))
        currency = gr.update(value=shown.currency, choices=list(CURRENCIES))
        return (*fields, currency, gr.update(open=state.model is not None))

    def panel_outputs(self, web: WebSession, view: PanelView | None = None) -> tuple[Any, ...]:
        """Notes, memory chart, cost chart and caption, the results (shown once there is a
        ranking): ranked count and tables, excluded box and table, then the launch spec
        (`launch_outputs`)."""
        web.sent = None
        view = view or self.view(web)
        lang = web.language
        excluded = f"{ui_text(lang, 'excluded')} ({len(view.excluded.rows)})"
        return (
            view.notes_markdown,
            view.plan_chart_html,
            gr.update(value=plot_value(view.cost_chart), visible=view.cost_chart is not None),
            view.cost_caption,
            gr.update(visible=web.panel.ranking is not None),
            view.ranked_count,
            table_update(view.ranked),
            table_update(view.ranked_more),
            gr.update(label=excluded),
            table_update(view.excluded),
            *self.launch_outputs(web, view),
        )

    def launch_outputs(self, web: WebSession, view: PanelView | None = None) -> tuple[Any, ...]:
        """The launch accordion's title, the choice, the SkyPilot YAML and the JSON download."""
        web.sent = None
        view = view or self.view(web)
        download = gr.DownloadButton(visible=False)
        if view.launch_json is not None and view.chosen is not None:
            folder = self.export_dir / web.session.id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"launch-{view.chosen.replace('/', '-')}.json"
            path.write_text(view.launch_json, encoding="utf-8")
            download = gr.DownloadButton(value=str(path), visible=True)
        return (
            gr.update(label=view.launch_title),
            gr.update(choices=view.launch_choices, value=view.chosen),
            view.launch_yaml,
            download,
        )


class PageUpdates:
    """The page's turn values for `blocks` (the form and panel, in order) split in two: one
    JSON payload the browser applies (`APPLY_UPDATES_JS`), and the values of `server_side`
    blocks, which stay Gradio outputs."""

    def __init__(self, blocks: Sequence[Any], server_side: Sequence[Any]) -> None:
        kept = {id(block) for block in server_side}
        self.blocks = list(blocks)
        self.in_browser = [i for i, block in enumerate(self.blocks) if id(block) not in kept]
        self.on_server = [i for i, block in enumerate(self.blocks) if id(block) in kept]

    @property
    def outputs(self) -> int:
        """How many outputs the split values take: the payload and the server-side ones."""
        return 1 + len(self.on_server)

    @property
    def browser_blocks(self) -> list[Any]:
        return [self.blocks[i] for i in self.in_browser]

    @property
    def server_blocks(self) -> list[Any]:
        return [self.blocks[i] for i in self.on_server]

    def split(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """The payload (JSON text: one string, which Gradio neither validates nor walks for
        files as it does a dict), then the server-side blocks' values, for `values` of
        `blocks`."""
        updates = [browser_update(self.blocks[i], values[i]) for i in self.in_browser]
        payload = orjson.dumps({"updates": updates}, default=str, option=orjson.OPT_SERIALIZE_NUMPY)
        return (payload.decode(), *(values[i] for i in self.on_server))


def browser_update(block: Any, value: Any) -> dict[str, Any] | None:
    """`value` (a text, an update, `gr.skip()`) for `block` as its component in the browser
    takes it: None for a skip; else an update whose value went through the component's
    `postprocess`, without the properties left as None (as Gradio drops them) and with
    choices as (label, value) pairs."""
    if isinstance(value, Block):
        raise TypeError(f"{type(block).__name__}: a component object is a Gradio output")
    props = dict(value) if isinstance(value, dict) else {"value": value}
    props.pop("__type__", None)
    if not props:
        return None
    update: dict[str, Any] = {"__type__": "update"}
    for key, prop in props.items():
        if key not in BROWSER_PROPS:
            raise ValueError(f"{type(block).__name__}.{key} is not applied in the browser")
        if key == "value":
            shown = block.postprocess(prop)
            update["value"] = shown.model_dump() if hasattr(shown, "model_dump") else shown
        elif key == "choices" and prop is not None:
            update["choices"] = [
                list(c) if isinstance(c, tuple | list) else [str(c), c] for c in prop
            ]
        elif prop is not None:
            update[key] = prop
    return update
