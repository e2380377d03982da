"""The job panel beside the chat: its data, where it comes from, and what it shows.

The panel holds the last memory estimate and ranking. After a chat turn they are the artifacts of
that turn's `estimate_memory` and `rank_instances` calls (`panel_from_events`); after the form
is edited they are computed from the job state with the same domain functions
(`compute_panel`: `build_job`, `estimate`, `rank`). `panel_view` turns the data into what the
components show, in the conversation's language. No UI library is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.events import ToolEnd
from assistant.agent.jobspec import Notice, build_job, filter_catalog
from assistant.agent.state import JobState
from assistant.answers.job import notices_section
from assistant.answers.parts import Text
from assistant.web.charts import render_memory_chart
from assistant.web.launch_spec import build_launch_spec, to_json, to_skypilot_yaml
from assistant.web.ui_strings import ui_text
from assistant.web.views import Table, excluded_table, memory_chart, ranked_table, vram_lines
from tools.architectures.architecture import ModelArch
from tools.catalog.instances import Catalog, Instance
from tools.errors import AdvisorError
from tools.memory import MemoryEstimate, estimate
from tools.ranking import rank
from tools.ranking.models import RankResult

LAUNCH_CHOICES = 10  # ranked options offered for the launch spec


class PanelData(BaseModel):
    """What the panel shows: the latest estimate and ranking, and lines to note above them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    estimate: MemoryEstimate | None = None
    ranking: RankResult | None = None
    notices: list[Notice] = Field(
        default_factory=list, description="what the plan did not apply as asked (worded later)"
    )
    state: JobState | None = Field(default=None, description="the job the notices are about")
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


def compute_panel(state: JobState, catalog: Catalog, arch: ModelArch | None = None) -> PanelData:
    """Estimate and rank the job `state` describes; `arch` (an uploaded config.json) replaces
    the model. A job without a model, or one the tools reject, gives notes instead."""
    if arch is not None and state.model is None:
        state = state.model_copy(update={"model": f"{arch.total_params()}"})
    try:
        plan = build_job(state, catalog)
        notices = list(plan.notices)
        if plan.job is None or plan.request is None:
            return PanelData(notices=notices, state=state)
        job, request = plan.job, plan.request
        if arch is not None:
            job = job.model_copy(update={"model": arch})
            request = request.model_copy(update={"job": job})
        result = rank(request, filter_catalog(plan, catalog))
        return PanelData(estimate=estimate(job), ranking=result, notices=notices, state=state)
    except AdvisorError as exc:
        return PanelData(notes=[str(exc)])


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
