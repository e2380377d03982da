"""The job panel: data from turn events or from the job state, and what it shows."""

from __future__ import annotations

import pytest

from assistant.agent.events import ToolEnd, ToolStart
from assistant.agent.tool_args import EstimateMemoryArgs, RankInstancesArgs
from assistant.agent.toolbox import ARTIFACT_ROWS, run_estimate_memory, run_rank_instances
from assistant.answers.job import notices_section
from assistant.answers.parts import Text
from assistant.web.panel import (
    TABLE_ROWS,
    PanelData,
    PanelNote,
    complete_options,
    compute_panel,
    panel_from_events,
    panel_view,
)
from tests.fakes.artifacts import make_estimate, make_option, make_ranking
from tests.fakes.catalogs import web_catalog
from tools.catalog import builtin_catalog
from tools.job import JobSpec, Money

AGE_FIELDS = {"price_age_days", "price_age_hours", "price_age", "stale"}


def _end(name: str, artifact: object, status: str = "success") -> ToolEnd:
    return ToolEnd(
        call_id=name,
        name=name,
        args={},
        status=status,
        content="{}",
        artifact=artifact,
        duration_s=0.1,
    )


def test_a_job_turn_replaces_the_panel_and_a_guidance_turn_keeps_it() -> None:
    previous = PanelData(notes=[PanelNote(key="no_job_yet")])
    est, ranking = make_estimate(), make_ranking([make_option()])
    events = [
        ToolStart(call_id="a", name="estimate_memory", args={}),
        _end("estimate_memory", est),
        _end("rank_instances", ranking),
    ]
    after = panel_from_events(events, previous)
    assert after.estimate == est and after.ranking == ranking and after.notes == []
    assert after.options == ranking.ranked, "the chart starts from the turn's rows"
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
    mine = [o.model_dump(exclude=AGE_FIELDS) for o in data.ranking.ranked]
    theirs = [o.model_dump(exclude=AGE_FIELDS) for o in ranked.ranked]
    assert mine == theirs, "the same rows the chat's rank tool returns"
    assert data.options == data.ranking.ranked and data.plan is not None


def test_every_fitting_option_reaches_the_cost_chart_the_table_keeps_the_best() -> None:
    state = JobSpec(model="llama 3.1 8b", method="qlora", tokens=1e8, spot="allowed")
    full = compute_panel(state, builtin_catalog())
    assert full.ranking is not None and len(full.options) == full.ranking.feasible > ARTIFACT_ROWS
    _, turn = run_rank_instances(
        RankInstancesArgs(model="llama 3.1 8b", method="qlora", tokens=1e8, spot="allowed"),
        builtin_catalog(),
    )
    after_turn = panel_from_events([_end("rank_instances", turn)], PanelData())
    assert len(after_turn.options) == ARTIFACT_ROWS, "a turn's artifact keeps the best 25"
    with pytest.MonkeyPatch.context() as patch:  # the rest its ranking kept: no second ranking
        patch.setattr("assistant.web.panel._rank_all", lambda *_: pytest.fail("ranked again"))
        completed = complete_options(after_turn, state, builtin_catalog())
    assert [o.instance_id for o in completed.options] == [o.instance_id for o in full.options]
    assert [o.rank for o in completed.options] == list(range(1, full.ranking.feasible + 1))
    assert completed.ranking is turn, "the table keeps the turn's own rows"
    loaded = turn.model_validate_json(turn.model_dump_json())  # a ranking that kept no rest
    again = complete_options(after_turn.model_copy(update={"ranking": loaded}), state,
                             builtin_catalog())  # fmt: skip
    assert [o.instance_id for o in again.options] == [o.instance_id for o in full.options]
    view = panel_view(completed, {}, "en")
    assert len(view.ranked.rows) == TABLE_ROWS
    assert view.cost_caption.startswith(f"{full.ranking.feasible} options.")


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


def test_notes_are_worded_when_shown_in_the_interface_language() -> None:
    note = PanelNote(key="upload_done", values={"name": "my-llama", "params": 8_030_261_248})
    data = PanelData(notes=[note])
    assert panel_view(data, {}, "en").notes_markdown == (
        "- Model from your config.json: my-llama, 8,030,261,248 parameters. Only the model "
        "changed; the other fields keep what you set."
    )
    assert panel_view(data, {}, "de").notes_markdown.startswith(
        "- Modell aus Ihrer config.json: my-llama, 8.030.261.248 Parameter."
    )


def test_panel_view_renders_charts_tables_and_the_chosen_launch_spec() -> None:
    options = [
        make_option(i, instance_id=f"aws/g{i}", instance_type=f"g{i}")
        for i in range(1, TABLE_ROWS + 3)
    ]
    data = PanelData(estimate=make_estimate(), ranking=make_ranking(options), options=options)
    view = panel_view(data, {}, "nl")
    assert view.plan_chart_html.startswith('<figure class="plan-chart"'), "memory chart drawn"
    assert view.cost_chart is not None
    assert len(view.ranked.rows) == TABLE_ROWS == len(view.launch_choices)
    assert view.chosen == "aws/g1" and view.launch_title == "Startspecificatie van #1: aws/g1"
    assert view.launch_choices[0] == ("#1 aws/g1 (1 × L40S, on-demand)", "aws/g1")
    assert "instance_type: g1" in view.launch_yaml and view.launch_json is not None
    second = panel_view(data, {}, "nl", chosen="aws/g17")
    assert "instance_type: g17" in second.launch_yaml, "any row of the table can be picked"
    assert second.launch_title == "Startspecificatie van #17: aws/g17"
    unknown = panel_view(data, {}, "nl", chosen="aws/elsewhere")
    assert unknown.chosen == "aws/g1", "a stale choice falls back to the best option"
    assert view.ranked_count == (
        f"{TABLE_ROWS} van {TABLE_ROWS + 2} opties die passen · {TABLE_ROWS + 2} instancetypes "
        "bekeken · 0 uitgesloten. Kies een rij om hieronder de startspecificatie te zien."
    )


def test_an_empty_panel_invites_the_user_in_their_language() -> None:
    view = panel_view(PanelData(), {}, "es")
    assert view.plan_chart_html == "" and view.launch_json is None and view.launch_choices == []
    assert view.cost_chart is None and view.ranked_count == ""
    assert view.notes_markdown.startswith("- Describe un trabajo en el chat")
    assert view.ranked.rows == [] and view.ranked.headers[1] == "Instancia"


def test_a_why_not_or_compare_turn_keeps_the_jobs_whole_ranking() -> None:
    """After "why not an H100?" the panel showed only the H100 rows and ringed an H100 as the
    first choice while the chat's first choice was an A100 (issue 26, defect 3): the panel
    takes the job's whole ranking, never a side narrowed to the GPUs a question names."""
    previous = PanelData(estimate=make_estimate(), ranking=make_ranking([make_option()]))
    whole = make_ranking([make_option(instance_type="a100-8x"), make_option()])
    side = make_ranking([make_option(instance_type="h100-1x")])

    def end(artifact: object, args: dict[str, object]) -> ToolEnd:
        return _end("rank_instances", artifact).model_copy(update={"args": args})

    why_not = [end(whole, {"model": "m"}), end(side, {"model": "m", "gpus": ["H100"], "top": 1})]
    after = panel_from_events(why_not, previous)
    assert after.ranking is whole and after.options == whole.ranked, "the job's whole ranking"
    compare = [end(side, {"model": "m", "gpus": ["H100"], "top": 1})]
    assert panel_from_events(compare, previous) is previous, "sides only: the panel stays"
