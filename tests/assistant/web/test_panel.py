"""The job panel: data from turn events or from the job state, and what it shows."""

from __future__ import annotations

from assistant.agent.events import ToolEnd, ToolStart
from assistant.agent.tool_args import EstimateMemoryArgs, RankInstancesArgs
from assistant.agent.toolbox import run_estimate_memory, run_rank_instances
from assistant.answers.job import notices_section
from assistant.answers.parts import Text
from assistant.web.panel import (
    LAUNCH_CHOICES,
    PanelData,
    compute_panel,
    panel_from_events,
    panel_view,
)
from tests.fakes.artifacts import make_estimate, make_option, make_ranking
from tests.fakes.catalogs import web_catalog
from tools.job import JobSpec, Money


def _end(name: str, artifact: object, status: str = "success") -> ToolEnd:
    return ToolEnd(call_id=name, name=name, args={}, status=status,
                   content="{}", artifact=artifact, duration_s=0.1)  # fmt: skip


def test_a_job_turn_replaces_the_panel_and_a_guidance_turn_keeps_it() -> None:
    previous = PanelData(notes=["old"])
    est, ranking = make_estimate(), make_ranking([make_option()])
    events = [ToolStart(call_id="a", name="estimate_memory", args={}),
              _end("estimate_memory", est), _end("rank_instances", ranking)]  # fmt: skip
    after = panel_from_events(events, previous)
    assert after.estimate == est and after.ranking == ranking and after.notes == []
    assert panel_from_events([_end("search_knowledge", None)], after) is after
    failed = panel_from_events([_end("estimate_memory", None, "error")], after)
    assert failed is after, "a failed tool leaves the panel as it was"


def test_compute_panel_runs_the_same_domain_functions_as_the_chat() -> None:
    state = JobSpec(model="meta-llama/Llama-3.1-8B", method="qlora", spot="never")
    data = compute_panel(state, web_catalog())
    assert data.estimate is not None and data.ranking is not None and data.notices == []
    assert data.ranking.job.method == "qlora" and data.ranking.considered == 3
    _, by_tool = run_estimate_memory(EstimateMemoryArgs(model=state.model, method="qlora"))
    assert data.estimate == by_tool, "the same estimate the chat's estimate tool returns"
    _, ranked = run_rank_instances(
        RankInstancesArgs(model=state.model, method="qlora", spot="never"), web_catalog()
    )
    assert data.ranking == ranked, "the same ranking the chat's rank tool returns"


def test_compute_panel_notes_what_was_not_applied_and_missing_models() -> None:
    data = compute_panel(JobSpec(method="lora"), web_catalog())
    assert data.estimate is None and data.ranking is None and data.notices == []
    euros_state = JobSpec(model="7B", budget=Money(amount=20, currency="EUR"))
    euros = compute_panel(euros_state, web_catalog())
    assert [(n.kind, n.field, n.value) for n in euros.notices] == [
        ("currency_converted", "budget", "20 EUR")
    ], "never converted silently"
    assert euros.state == euros_state and euros.ranking is not None
    shown = panel_view(euros, {}, "de").notes_markdown
    assert shown == notices_section(Text("de"), euros.notices, euros_state), "worded in German"
    assert "EUR" in shown and "20" in shown
    naira_state = JobSpec(model="7B", budget=Money(amount=20000, currency="NGN"))
    naira = compute_panel(naira_state, web_catalog())
    assert [(n.kind, n.field) for n in naira.notices] == [("currency_not_applied", "budget")]
    assert naira.ranking is not None, "ranked all the same, without the budget"


def test_panel_view_renders_chart_tables_and_the_chosen_launch_spec() -> None:
    options = [make_option(i, instance_id=f"aws/g{i}", instance_type=f"g{i}")
               for i in range(1, LAUNCH_CHOICES + 3)]  # fmt: skip
    data = PanelData(estimate=make_estimate(), ranking=make_ranking(options))
    view = panel_view(data, {}, "nl")
    assert view.chart_svg.startswith('<svg class="memory-chart"'), "chart drawn"
    assert len(view.ranked.rows) == LAUNCH_CHOICES + 2, "every ranked option in the table"
    assert len(view.launch_choices) == LAUNCH_CHOICES and view.chosen == "aws/g1"
    assert "instance_type: g1" in view.launch_yaml and view.launch_json is not None
    second = panel_view(data, {}, "nl", chosen="aws/g2")
    assert "instance_type: g2" in second.launch_yaml
    unknown = panel_view(data, {}, "nl", chosen="aws/elsewhere")
    assert unknown.chosen == "aws/g1", "a stale choice falls back to the best option"


def test_an_empty_panel_invites_the_user_in_their_language() -> None:
    view = panel_view(PanelData(), {}, "es")
    assert view.chart_svg == "" and view.launch_json is None and view.launch_choices == []
    assert view.notes_markdown.startswith("- Describe un trabajo en el chat")
    assert view.ranked.rows == [] and view.ranked.headers[1] == "Proveedor"
