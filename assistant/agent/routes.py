"""Per intent: the tool calls a turn needs and the answer composed from their results.

`calls_for(ctx, outcomes)` is asked again after every round of tool results (a "why not" needs
the ranking of the GPU asked about before it knows whether to rank it without the limits);
`compose_for(ctx, outcomes)` writes the answer from this turn's artifacts only; `next_step`
returns the calls still missing, or the final answer in the user's language.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage

from assistant.agent.outcomes import ToolOutcome
from assistant.agent.turn import (
    GUIDANCE_K,
    PlannedCall,
    TurnContext,
    _answer,
    _artifact,
    _passages,
    _search,
    job_answer,
    job_calls,
    job_method,
    job_tool_args,
    rank_tool_args,
)
from assistant.answers import compose
from assistant.answers.fit import compose_fit_answer
from assistant.answers.job import defaults_line
from assistant.answers.parts import Answer, Text
from assistant.answers.talk import changes_line, compose_amend_unclear, compose_hello, compose_scope
from assistant.answers.versus import Side, compose_compare_answer, compose_why_not_answer
from tools.fit import FitCheck
from tools.gpus import lookup_gpu
from tools.memory import MemoryEstimate
from tools.ranking import RankResult

__all__ = ["calls_for", "compose_final", "compose_for", "family_label", "next_step"]

MAX_SIZES = 2  # memory sizes a fit check tries for one GPU family ("A100": 40 and 80 GB)
MAX_SIDES = 3  # GPUs compared side by side
_LIMITS = ("max_price_per_hour", "budget", "deadline_hours")
_NEEDS_MODEL = ("job", "amend", "fit_check", "compare", "why_not")


def family_label(ids: str) -> str:
    """How a GPU family is named in an answer: 'A100' for every A100, else the one id."""
    parts = ids.split(",")
    return parts[0].split("-")[0] if len(parts) > 1 else parts[0]


def _sizes(ctx: TurnContext) -> tuple[list[float], str | None]:
    """The memory sizes to check against, and the GPU they are from (None: a size alone)."""
    if ctx.update.max_vram_gib is not None:
        return [ctx.update.max_vram_gib], None
    families = ctx.routed.cues.gpu_families if ctx.routed else ()
    if not families:
        return [], None
    # The variants the message narrowed the GPU to ("two A100s with 40 GB"), else the family's.
    ids = list(ctx.update.gpus or ()) or families[0].split(",")
    sizes = sorted({lookup_gpu(gid).vram_gib for gid in ids})
    return sizes[-MAX_SIZES:], family_label(families[0])


def _ready(ctx: TurnContext) -> bool:
    return ctx.plan is not None and ctx.plan.ready and ctx.state.model is not None


def calls_for(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> list[PlannedCall]:
    """Every tool call the turn needs for its intent, given what has run so far."""
    intent = ctx.intent
    if intent in _NEEDS_MODEL and not _ready(ctx):
        return []
    if intent in ("job", "amend"):
        return job_calls(ctx, outcomes, caveats=True) if _changed(ctx) else []
    if intent == "fit_check":
        assert ctx.plan is not None
        count = ctx.update.num_gpus or 1
        sizes, _ = _sizes(ctx)
        args = job_tool_args(ctx.plan) | {"num_gpus": count}
        return [PlannedCall("check_fit", args | {"gpu_memory_gib": size}) for size in sizes]
    if intent == "compare":
        return _compare_calls(ctx)
    if intent == "why_not":
        return _why_not_calls(ctx, outcomes)
    if intent == "guidance":
        return _guidance_calls(ctx, outcomes)
    return []


def _changed(ctx: TurnContext) -> bool:
    """A job to answer: a new one, a change, or a stated value it had to leave out (said so)."""
    return ctx.intent == "job" or ctx.state != ctx.prior or bool(ctx.rejected)


def _asks_about_job(ctx: TurnContext) -> bool:
    cues = ctx.routed.cues if ctx.routed else None
    return bool(cues and cues.has_job and (cues.asks_time or cues.asks_cost))


def _guidance_calls(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> list[PlannedCall]:
    if _asks_about_job(ctx) and _ready(ctx):
        return job_calls(ctx, outcomes, caveats=False)
    calls = job_calls(ctx, outcomes, caveats=False) if ctx.kind == "mixed" else []
    return [*calls, _search(ctx.text, ctx.lang, GUIDANCE_K, job_method(ctx))]


def _compare_calls(ctx: TurnContext) -> list[PlannedCall]:
    assert ctx.plan is not None
    families = ctx.routed.cues.gpu_families if ctx.routed else ()
    base = rank_tool_args(ctx.plan) | {"top": 1}
    calls = [PlannedCall("estimate_memory", job_tool_args(ctx.plan))]
    return calls + [
        PlannedCall("rank_instances", base | {"gpus": ids.split(",")})
        for ids in families[:MAX_SIDES]
    ]


def _target(ctx: TurnContext) -> tuple[str, dict[str, Any]] | None:
    """What a "why not" asks about, and the rank_instances filter that selects it."""
    cues = ctx.routed.cues if ctx.routed else None
    if cues is None:
        return None
    if cues.gpu_families:
        return family_label(cues.gpu_families[0]), {"gpus": cues.gpu_families[0].split(",")}
    if cues.providers:
        return cues.providers[0], {"providers": [cues.providers[0]]}
    return None


def _why_not_calls(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> list[PlannedCall]:
    assert ctx.plan is not None
    target = _target(ctx)
    main = rank_tool_args(ctx.plan)
    calls = [PlannedCall("estimate_memory", job_tool_args(ctx.plan)),
             PlannedCall("rank_instances", main)]  # fmt: skip
    if target is None:
        return calls
    side_args = main | target[1] | {"top": 1}
    side_call = PlannedCall("rank_instances", side_args)
    calls.append(side_call)
    side = _result_of(outcomes, side_call)
    kinds = {item.kind for item in side.excluded} if side is not None else set()
    if side is not None and not side.ranked and kinds & {"price", "budget", "deadline"}:
        relaxed = {k: v for k, v in side_args.items() if k not in _LIMITS}
        calls.append(PlannedCall("rank_instances", relaxed))
    return calls


def _result_of(outcomes: Sequence[ToolOutcome], call: PlannedCall) -> RankResult | None:
    found = next((o.artifact for o in outcomes if o.name == call.name and o.args == call.args),
                 None)  # fmt: skip
    return found if isinstance(found, RankResult) else None


# --------------------------------------------------------------------------- answers


def compose_for(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> Answer:
    """The answer for the turn's intent from this turn's artifacts."""
    intent = ctx.intent
    if intent == "small_talk":
        return compose_hello(ctx.lang)
    if intent == "out_of_scope":
        serving = bool(ctx.routed and ctx.routed.cues.serve_words)
        arch = ctx.plan.estimate_input.model if ctx.plan and ctx.plan.estimate_input else None
        name = arch.name if arch is not None and not arch.estimated else ctx.state.model_label()
        return compose_scope(ctx.lang, serving, name)
    if intent in _NEEDS_MODEL and ctx.state.model is None:
        return compose.compose_clarification(ctx.lang, "model", _passages(outcomes))
    if intent == "amend" and not _changed(ctx):
        return compose_amend_unclear(ctx.lang)
    if intent == "fit_check":
        return _fit_answer(ctx, outcomes)
    if intent == "compare":
        return _with_defaults(ctx, _compare_answer(ctx, outcomes))
    if intent == "why_not":
        return _with_defaults(ctx, _why_not_answer(ctx, outcomes))
    answer = job_answer(ctx, outcomes)
    if answer is not None and intent == "amend":
        return _with_changes(ctx, answer)
    if answer is not None and intent == "guidance" and _asks_about_job(ctx):
        return _with_first_choice(ctx, outcomes, answer)
    if answer is not None:
        return answer
    return compose.compose_guidance_answer(ctx.lang, _passages(outcomes))


def _with_defaults(ctx: TurnContext, answer: Answer) -> Answer:
    """`answer` with the defaults its ranking rests on, as a job answer states them (issue 25:
    a comparison used 100M tokens and 2,048-token sequences without a word)."""
    if ctx.plan is None:
        return answer
    t = Text(ctx.lang)
    line = defaults_line(t, ctx.plan.shown_assumptions("rank"))
    return t.answer([answer.text, line], answer.citations) if line else answer


def _with_changes(ctx: TurnContext, answer: Answer) -> Answer:
    t = Text(ctx.lang)
    line = changes_line(t, ctx.prior, ctx.state, ctx.prior_plan)
    return t.answer([line, answer.text], answer.citations) if line else answer


def _with_first_choice(ctx: TurnContext, outcomes: Sequence[ToolOutcome], answer: Answer) -> Answer:
    """A question about the job's time or cost: the first choice's figures, then the rest."""
    ranking = _artifact(outcomes, RankResult)
    if ranking is None or not ranking.ranked:
        return answer
    t, best = Text(ctx.lang), ranking.ranked[0]
    line = t.msg(
        "ask.first_choice",
        instance=f"**{best.provider} {best.instance_type}**",
        gpus=t.msg("options.gpus", count=t.count(best.gpu_count), gpu=best.gpu),
        hours=t.duration(best.hours),
        total=t.money(best.total_cost),
    )
    return t.answer([line, answer.text], answer.citations)


def _fit_answer(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> Answer:
    checks = [o.artifact for o in outcomes if isinstance(o.artifact, FitCheck)]
    if not checks:
        return compose.compose_clarification(ctx.lang, "max_vram_gib")
    _, gpu = _sizes(ctx)
    method = ctx.plan.estimate_input.method if ctx.plan and ctx.plan.estimate_input else None
    return compose_fit_answer(ctx.lang, checks, gpu, method)


def _compare_answer(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> Answer:
    families = ctx.routed.cues.gpu_families if ctx.routed else ()
    sides = []
    for ids in families[:MAX_SIDES]:
        ranking = next((o.artifact for o in outcomes if o.name == "rank_instances"
                        and o.args.get("gpus") == ids.split(",")), None)  # fmt: skip
        sides.append(Side(family_label(ids), ranking if isinstance(ranking, RankResult) else None))
    estimate = _artifact(outcomes, MemoryEstimate)
    t = Text(ctx.lang)
    label = str(ctx.state.model_label())
    model = t.model(estimate.model_name, estimate.model_id) if estimate is not None else label
    return compose_compare_answer(ctx.lang, sides, model)


def _why_not_answer(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> Answer:
    rankings = [o.artifact for o in outcomes if isinstance(o.artifact, RankResult)]
    target = _target(ctx)
    if not rankings or target is None:
        return compose.compose_clarification(ctx.lang, "gpus")
    side = rankings[1] if len(rankings) > 1 else None
    relaxed = rankings[2] if len(rankings) > 2 else None
    estimate = _artifact(outcomes, MemoryEstimate)
    return compose_why_not_answer(
        ctx.lang, target[0], rankings[0], side, relaxed, ctx.state, estimate
    )


# ------------------------------------------------------------------------------ the step


def planned_calls(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> list[PlannedCall]:
    """Every tool call the turn needs, given what has run so far."""
    return calls_for(ctx, outcomes)


def next_step(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> list[PlannedCall] | AIMessage:
    """The tool calls still missing, or the final answer."""
    failed = next((o for o in outcomes if o.status == "error"), None)
    if failed is not None:
        return _answer(compose.compose_tool_error(ctx.lang, failed.name, _error_of(failed)))
    planned = [(c.name, c.args) for c in planned_calls(ctx, outcomes)]
    done = [(o.name, o.args) for o in outcomes]
    missing = [PlannedCall(*call) for call in planned if call not in done]
    if missing:
        return missing
    # Compose from the policy's own calls only (a model may have called the tools differently
    # before the policy took over).
    return _answer(compose_final(ctx, [o for o in outcomes if (o.name, o.args) in planned]))


def _error_of(outcome: ToolOutcome) -> dict[str, Any]:
    try:
        error = json.loads(outcome.content)["error"]
    except (ValueError, KeyError, TypeError):
        return {"type": "ToolError", "message": outcome.content}
    return error if isinstance(error, dict) else {"type": "ToolError", "message": str(error)}


def compose_final(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> compose.Answer:
    """The answer from this turn's artifacts, in the turn's language."""
    if ctx.plan_error is not None:
        return compose.compose_tool_error(
            ctx.lang,
            "estimate_memory",
            {
                "type": type(ctx.plan_error).__name__,
                "message": str(ctx.plan_error),
            },
        )
    return compose_for(ctx, outcomes)
