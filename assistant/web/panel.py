"""The job panel: its data, where it comes from, and what it shows.

The panel holds the last memory estimate and ranking. After a chat turn they are the artifacts of
that turn's `estimate_memory` and `rank_instances` calls (`panel_from_events`), completed with
every other option that fits for the cost chart (`complete_options`); after the form is edited
or a config uploaded they are computed from the job state through the resolution the chat's
tools use (`compute_panel`: `tools.advice.rank_job` and the estimate of the job it resolved).
`panel_view` turns the data into what the components show, in the interface language: notes, the
memory chart of each top option's own plan, the cost-against-time chart, the ranked table (key
columns and all columns), the excluded instances and the launch spec of the chosen row. No UI
library is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.events import ToolEnd
from assistant.agent.toolbox import ARTIFACT_ROWS
from assistant.answers.job import notices_section
from assistant.answers.literal import as_text
from assistant.answers.parts import Text
from assistant.web import cells
from assistant.web.charts.cost import cost_caption, cost_chart, cost_points
from assistant.web.charts.plan import plan_chart, render_plan_chart
from assistant.web.launch_spec import build_launch_spec, to_json, to_skypilot_yaml
from assistant.web.tables import Table, excluded_table, gpus_text, ranked_tables
from assistant.web.ui_strings import ui_format, ui_text, vocabulary
from tools.advice import JobNotice, ResolvedJob, estimate_job, rank_job
from tools.catalog.instances import Catalog, Instance
from tools.errors import AdvisorError
from tools.job import JobSpec
from tools.memory import MemoryEstimate, estimate
from tools.ranking import RankResult
from tools.ranking.models import RankedOption

__all__ = [
    "TABLE_ROWS",
    "PanelData",
    "PanelNote",
    "PanelView",
    "complete_options",
    "compute_panel",
    "panel_from_events",
    "panel_view",
]

TABLE_ROWS = ARTIFACT_ROWS  # ranked rows in the table and the launch choice: the chat's artifact


class PanelNote(BaseModel):
    """A line above the panel, worded when shown (so it follows the interface language):
    an interface string key and its values (whole numbers are written in the locale)."""

    key: str
    values: dict[str, str | int] = Field(default_factory=dict)


class PanelData(BaseModel):
    """What the panel shows: the latest estimate and ranking, and lines to note above them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    estimate: MemoryEstimate | None = None
    ranking: RankResult | None = None
    options: list[RankedOption] = Field(
        default_factory=list, description="every option that fits, best first (the cost chart)"
    )
    plan: ResolvedJob | None = Field(default=None, description="the job resolved, when computed")
    notices: list[JobNotice] = Field(
        default_factory=list, description="what the job did not apply as asked (worded later)"
    )
    state: JobSpec | None = Field(default=None, description="the job the notices are about")
    notes: list[PanelNote] = Field(default_factory=list)


class PanelView(BaseModel):
    """The panel rendered, every text in the interface language."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    notes_markdown: str
    plan_chart_html: str
    cost_chart: dict[str, Any] | None = Field(
        description="the cost chart's Vega-Lite specification, or None without options"
    )
    cost_caption: str
    ranked_count: str
    ranked: Table
    ranked_more: Table
    excluded: Table
    launch_choices: list[tuple[str, str]] = Field(description="(label, instance id), best first")
    chosen: str | None
    launch_title: str
    launch_yaml: str
    launch_json: str | None = Field(description="None when there is nothing to launch")


def _note_text(note: PanelNote, lang: str) -> str:
    """A note in `lang`; its values (names, messages from a file or a tool) shown as text."""
    values = {
        k: cells.count(v, lang) if isinstance(v, int) else as_text(str(v))
        for k, v in note.values.items()
    }
    return ui_format(lang, note.key, **values) if values else ui_text(lang, note.key)


def _notes_markdown(data: PanelData, lang: str) -> str:
    """Notes as bullets, then the plan's notices worded by the answer catalogs; an empty panel
    invites the user to describe a job."""
    parts = ["\n".join(f"- {_note_text(n, lang)}" for n in data.notes)] if data.notes else []
    if data.notices:
        parts.append(notices_section(Text(lang), data.notices, data.state))
    if not parts and data.estimate is None and data.ranking is None:
        parts.append(f"- {ui_text(lang, 'no_job_yet')}")
    return "\n\n".join(parts)


def panel_from_events(events: Iterable[object], previous: PanelData) -> PanelData:
    """The panel after a turn: the turn's estimate and the job's own ranking where it made them,
    else the previous ones (a guidance question leaves the panel as it was). A ranking narrowed
    to the GPUs or provider a question names (why not an H100? an A100 or an H100?) answers that
    question; the panel, like the chat's first choice, stays on the job's whole ranking."""
    found_estimate: MemoryEstimate | None = None
    found_ranking: RankResult | None = None
    narrowed = False
    for event in events:
        if isinstance(event, ToolEnd) and event.status == "success":
            if isinstance(event.artifact, MemoryEstimate):
                found_estimate = event.artifact
            elif isinstance(event.artifact, RankResult) and _narrowed(event.args):
                narrowed = True
            elif isinstance(event.artifact, RankResult) and found_ranking is None:
                found_ranking = event.artifact
    if found_ranking is None and (narrowed or found_estimate is None):
        return previous  # a comparison's sides only, or no tool at all: the job is as it was
    options = list(found_ranking.ranked) if found_ranking is not None else []
    return PanelData(estimate=found_estimate, ranking=found_ranking, options=options)


def _narrowed(args: Mapping[str, Any]) -> bool:
    """A ranking asked for one best option among named GPUs or providers (the side of a
    comparison or a why-not: assistant/agent/routes.py), not the job's whole ranking."""
    return args.get("top") == 1 and bool(args.get("gpus") or args.get("providers"))


def _rank_all(state: JobSpec, catalog: Catalog) -> tuple[ResolvedJob, RankResult]:
    return rank_job(state, catalog, top=None, strict=False, now=datetime.now(UTC))


def compute_panel(state: JobSpec, catalog: Catalog) -> PanelData:
    """Estimate and rank the job `state` describes, as the chat's tools would, keeping every
    option that fits. A job without a model, or one the tools reject, gives a note instead."""
    if state.model is None:
        return PanelData(state=state)
    try:
        resolved, ranking = _rank_all(state, catalog)
        if resolved.estimate_input is not None:
            memory = estimate(resolved.estimate_input)
        else:  # an image model: its own estimator, as the chat's estimate_memory runs it
            _, memory = estimate_job(state, strict=False)
    except AdvisorError as exc:
        return PanelData(notes=[PanelNote(key="error_input", values={"error": str(exc)})])
    return PanelData(
        estimate=memory,
        ranking=ranking,
        options=list(ranking.ranked),
        plan=resolved,
        notices=list(resolved.notices),
        state=state,
    )


def complete_options(data: PanelData, state: JobSpec, catalog: Catalog) -> PanelData:
    """`data` with every option that fits, where its ranking kept only the best rows (a chat
    turn's artifact): the rest its ranking kept aside (`RankResult.every_option`), else the
    same ranking of the same job again, not cut."""
    ranking = data.ranking
    if ranking is None or len(data.options) >= ranking.feasible or state.model is None:
        return data
    every = ranking.every_option()
    if every is not None:
        return data.model_copy(update={"options": every})
    try:
        _, full = _rank_all(state, catalog)
    except AdvisorError:
        return data
    return data.model_copy(update={"options": list(full.ranked)})


def _launch(
    ranking: RankResult | None,
    options: list[RankedOption],
    chosen: str | None,
    instances: Mapping[str, Instance],
    lang: str,
) -> tuple[list[tuple[str, str]], str | None, str, str, str | None]:
    choices = [
        (
            f"#{o.rank} {o.instance_id} ({gpus_text(o)}, {vocabulary(lang, 'pricing', o.pricing)})",
            o.instance_id,
        )
        for o in options
    ]
    ids = [value for _, value in choices]
    pick = chosen if chosen in ids else (ids[0] if ids else None)
    if ranking is None or pick is None:
        return choices, None, ui_text(lang, "launch_spec"), "", None
    option = next(o for o in options if o.instance_id == pick)
    spec = build_launch_spec(option, ranking.job, instances.get(pick))
    title = ui_format(lang, "launch_for", rank=option.rank, instance=option.instance_id)
    return choices, pick, title, to_skypilot_yaml(spec), to_json(spec)


def panel_view(
    data: PanelData, instances: Mapping[str, Instance], lang: str, chosen: str | None = None
) -> PanelView:
    """What the components show for `data`; `chosen` picks the launch spec's instance (default,
    or when it is not among the table's rows: the best ranked one)."""
    ranking = data.ranking
    shown = ranking.ranked[:TABLE_ROWS] if ranking is not None else []
    chart = ""
    if data.estimate is not None or ranking is not None:
        chart = render_plan_chart(plan_chart(data.estimate, ranking, lang), lang)
    points = cost_points(data.options or shown, lang)
    ranked, more = ranked_tables(shown, instances, lang)
    count = ""
    if ranking is not None:
        count = ui_format(
            lang,
            "ranked_count",
            shown=cells.count(len(shown), lang),
            fitting=cells.count(ranking.feasible, lang),
            considered=cells.count(ranking.considered, lang),
            excluded=cells.count(len(ranking.excluded), lang),
        )
        if shown:
            count += f". {ui_text(lang, 'select_hint')}"
    choices, pick, title, launch_yaml, launch_json = _launch(
        ranking, shown, chosen, instances, lang
    )
    return PanelView(
        notes_markdown=_notes_markdown(data, lang),
        plan_chart_html=chart,
        cost_chart=cost_chart(points, lang) if points else None,
        cost_caption=cost_caption(points, lang) if points else "",
        ranked_count=count,
        ranked=ranked,
        ranked_more=more,
        excluded=excluded_table(ranking.excluded if ranking else [], instances, lang),
        launch_choices=choices,
        chosen=pick,
        launch_title=title,
        launch_yaml=launch_yaml,
        launch_json=launch_json,
    )
