"""The job panel beside the chat: its data, where it comes from, and what it shows.

The panel holds the last memory estimate and ranking. After a chat turn they are the artifacts of
that turn's `estimate_memory` and `rank_instances` calls (`panel_from_events`); after the form is
edited they are computed from the job state through the same resolution the chat's tools use
(`compute_panel`: `tools.advice.rank_job` and the estimate of the job it resolved). `panel_view`
turns the data into what the components show, in the conversation's language. No UI library is
imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.events import ToolEnd
from assistant.agent.toolbox import ARTIFACT_ROWS
from assistant.answers.job import notices_section
from assistant.answers.parts import Text
from assistant.web.charts import render_memory_chart
from assistant.web.launch_spec import build_launch_spec, to_json, to_skypilot_yaml
from assistant.web.ui_strings import ui_text
from assistant.web.views import Table, excluded_table, memory_chart, ranked_table, vram_lines
from tools.advice import JobNotice, rank_job
from tools.catalog.instances import Catalog, Instance
from tools.errors import AdvisorError
from tools.job import JobSpec
from tools.memory import MemoryEstimate, estimate
from tools.ranking import RankResult

LAUNCH_CHOICES = 10  # ranked options offered for the launch spec


class PanelData(BaseModel):
    """What the panel shows: the latest estimate and ranking, and lines to note above them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    estimate: MemoryEstimate | None = None
    ranking: RankResult | None = None
    notices: list[JobNotice] = Field(
        default_factory=list, description="what the job did not apply as asked (worded later)"
    )
    state: JobSpec | None = Field(default=None, description="the job the notices are about")
    notes: list[str] = Field(default_factory=list, description="plain lines, already worded")


class PanelView(BaseModel):
    """The panel rendered: chart SVG, tables, launch choices and the chosen launch spec."""

    notes_markdown: str
    chart_svg: str
    ranked: Table
    excluded: Table
    launch_choices: list[tuple[str, str]] = Field(description="(label, instance id), best first")
    chosen: str | None
    launch_yaml: str
    launch_json: str | None = Field(description="None when there is nothing to launch")


def _notes_markdown(data: PanelData, lang: str) -> str:
    """Plain notes as bullets, then the plan's notices worded in `lang` by the answer catalogs;
    an empty panel invites the user to describe a job."""
    parts = ["\n".join(f"- {line}" for line in data.notes)] if data.notes else []
    if data.notices:
        parts.append(notices_section(Text(lang), data.notices, data.state))
    if not parts and data.estimate is None and data.ranking is None:
        parts.append(f"- {ui_text(lang, 'no_job_yet')}")
    return "\n\n".join(parts)


def panel_from_events(events: Iterable[object], previous: PanelData) -> PanelData:
    """The panel after a turn: the turn's estimate and ranking where it made them, else the
    previous ones (a guidance question leaves the panel as it was)."""
    found_estimate: MemoryEstimate | None = None
    found_ranking: RankResult | None = None
    for event in events:
        if isinstance(event, ToolEnd) and event.status == "success":
            if isinstance(event.artifact, MemoryEstimate):
                found_estimate = event.artifact
            elif isinstance(event.artifact, RankResult):
                found_ranking = event.artifact
    if found_estimate is None and found_ranking is None:
        return previous
    return PanelData(estimate=found_estimate, ranking=found_ranking)


def compute_panel(state: JobSpec, catalog: Catalog) -> PanelData:
    """Estimate and rank the job `state` describes, as the chat's tools would. A job without a
    model, or one the tools reject, gives notes instead."""
    if state.model is None:
        return PanelData(state=state)
    try:
        resolved, ranking = rank_job(
            state, catalog, top=ARTIFACT_ROWS, strict=False, now=datetime.now(UTC)
        )
        assert resolved.estimate_input is not None  # the state has a model
        memory = estimate(resolved.estimate_input)
    except AdvisorError as exc:
        return PanelData(notes=[str(exc)])
    return PanelData(estimate=memory, ranking=ranking, notices=list(resolved.notices), state=state)


def panel_view(
    data: PanelData, instances: Mapping[str, Instance], lang: str, chosen: str | None = None
) -> PanelView:
    """What the components show for `data`; `chosen` picks the launch spec's instance (default:
    the best ranked one)."""
    ranking = data.ranking
    chart = ""
    if data.estimate is not None:
        chart = render_memory_chart(memory_chart(data.estimate, vram_lines(ranking), lang))
    options = ranking.ranked if ranking is not None else []
    choices = [
        (f"#{o.rank} {o.instance_id} ({o.gpu_count} × {o.gpu}, {o.pricing})", o.instance_id)
        for o in options[:LAUNCH_CHOICES]
    ]
    ids = [value for _, value in choices]
    pick = chosen if chosen in ids else (ids[0] if ids else None)
    launch_yaml, launch_json = "", None
    if ranking is not None and pick is not None:
        option = next(o for o in options if o.instance_id == pick)
        spec = build_launch_spec(option, ranking.job, instances.get(pick))
        launch_yaml, launch_json = to_skypilot_yaml(spec), to_json(spec)
    return PanelView(
        notes_markdown=_notes_markdown(data, lang),
        chart_svg=chart,
        ranked=ranked_table(options, instances, lang),
        excluded=excluded_table(ranking.excluded if ranking else [], instances, lang),
        launch_choices=choices,
        chosen=pick,
        launch_yaml=launch_yaml,
        launch_json=launch_json,
    )
