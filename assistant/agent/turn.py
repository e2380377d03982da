"""One turn of the offline brain: what the turn knows, which tool calls it needs, and its answer.

`plan_turn` folds the user's message into the job state and resolves the job
(`tools.advice.resolve_job`, leniently: language, diffusion and vision-language jobs alike);
`job_calls` builds the tool calls of a job with the arguments the conversation gave (the tools
resolve the rest with the same defaults), `job_answer` the answer from their results.
`assistant.agent.routes` chooses among them per intent and takes the step.

Every message is routed to one of eight intents (`assistant.extract.routing`); what each needs
and how it is answered is `assistant.agent.routes`. Decisions, in order:
- a tool returned an error -> one short sentence about it, in the user's language;
- an intent that needs a model with no model yet -> at most one clarifying question;
- job, amend -> estimate_memory and rank_instances (then a search_knowledge for caveats when the
  plan uses spot or a multi-GPU full fine-tune); an amendment says what changed first, and one
  that changed nothing asks one question;
- fit_check -> check_fit against the hardware named (never a catalog filter); compare ->
  rank_instances per GPU named; why_not -> the ranking, then the ranking of the GPU or provider
  asked about; guidance -> search_knowledge (a question about the job's time or cost is answered
  from its ranking); out_of_scope, small_talk -> no tool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.outcomes import ToolOutcome
from assistant.agent.tool_args import ESTIMATE_FIELDS, RANK_FIELDS
from assistant.agent.tool_results import KnowledgeResult
from assistant.answers import compose
from assistant.extract import (
    TOPIC_FIELDS,
    Intent,
    QuestionKind,
    RejectedSlot,
    Routed,
    is_diffusion,
    names_own_model,
    read_scaling,
    read_slots,
    route_intent,
)
from assistant.languages import choose_language
from tools.advice import JobNotice, ResolvedJob, resolve_job
from tools.catalog.instances import Catalog
from tools.enums import Method
from tools.errors import AdvisorError
from tools.job import JobSpec, JobUpdate, Money, apply_update
from tools.job.spec import IMAGE_FIELDS
from tools.memory import MemoryEstimate
from tools.ranking import RankResult

__all__ = [
    "CAVEAT_QUERIES",
    "PlannedCall",
    "TurnContext",
    "fold_messages",
    "job_answer",
    "job_calls",
    "job_tool_args",
    "plan_turn",
    "rank_tool_args",
]

CAVEAT_QUERIES = {
    "spot": "spot instances checkpoint interval interruptions",
    "multi_gpu_full": "multi-GPU full fine-tuning NVLink ZeRO FSDP",
}
GUIDANCE_K = 3
CAVEAT_K = 2
_FULL_METHODS = ("full", "pretrain")


class TurnContext(BaseModel):
    """What the policy knows about the turn it is answering."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    lang: str
    text: str
    state: JobSpec
    intent: Intent
    plan: ResolvedJob | None
    plan_error: AdvisorError | None = None
    kind: QuestionKind = "other"
    prior: JobSpec = JobSpec()
    prior_plan: ResolvedJob | None = None
    update: JobUpdate = JobUpdate()
    rejected: tuple[RejectedSlot, ...] = ()
    routed: Routed | None = None
    catalog: Catalog | None = Field(
        default=None,
        description="the catalog the turn was planned on, which its tools rank from (with a"
        " tab's own uploaded quotes); None: the tools' shared catalog",
    )


# What a message names that is not a filter of the job for these intents: the hardware one
# checks against, the GPUs compared, the GPU or provider a "why not" asks about.
_NOT_FILTERS: dict[str, tuple[str, ...]] = {
    "fit_check": ("gpus", "num_gpus", "max_vram_gib"),
    "compare": ("gpus", "max_vram_gib"),
    "why_not": ("gpus", "providers"),
}


def plan_turn(
    prior: JobSpec,
    text: str,
    lang: str,
    catalog: Catalog | None,
    previous: str | None = None,
    support: Callable[[str, str], float | None] | None = None,
) -> TurnContext:
    """Route one user message (`previous`: the intent of the conversation's previous message;
    `support(text, lang)`: how well the knowledge base covers it), fold what it says into the
    job state and resolve the job it now describes (leniently: a value the tools reject is
    dropped with a notice and its default)."""
    update, rejected = read_slots(text, lang, image_job=is_diffusion(prior.model))
    scaled = read_scaling(text, prior, update)
    if scaled:  # "double the tokens": relative to the job so far
        update = update.model_copy(update=scaled)
    if names_own_model(update, prior):  # "my 70B run" about Llama 3.1 70B: that model
        update = update.model_copy(update={"model": None})
    routed = route_intent(text, lang, prior, update, previous, support)
    dropped = _NOT_FILTERS.get(routed.intent, ())
    no_model = prior.model is None and update.model is None
    if routed.intent == "guidance" and (routed.cues.kind != "mixed" or no_model):
        # A question about a concept sets nothing in the job: its techniques are its topic and
        # its amounts an example ("is spot safe for a 20 hour run?", and with no model at all
        # "is 3 epochs over 20M tokens 60M tokens seen?"). The model it names stays, as after
        # an out-of-scope question, for the follow-up that asks about it.
        dropped = TOPIC_FIELDS + tuple(f for f in update.given() if f != "model")
    kept = update.model_copy(update=dict.fromkeys(dropped))
    state = apply_update(prior, kept)
    base = {
        "lang": lang, "text": text, "state": state, "intent": routed.intent, "prior": prior,
        "kind": routed.cues.kind, "update": update, "rejected": rejected, "routed": routed,
        "prior_plan": _resolved(prior, catalog), "catalog": catalog,
    }  # fmt: skip
    try:
        plan: ResolvedJob | None = resolve_job(state, catalog, strict=False)
    except AdvisorError as exc:
        return TurnContext(**base, plan=None, plan_error=exc)
    if plan is not None and rejected:
        ignored = [_ignored(slot) for slot in rejected]
        plan = plan.model_copy(update={"notices": ignored + list(plan.notices)})
    return TurnContext(**base, plan=plan)


def _ignored(slot: RejectedSlot) -> JobNotice:
    """The notice of a stated value the job cannot take (the conversation keeps its own)."""
    return JobNotice(
        kind="value_ignored",
        field=slot.field,
        value=slot.written,
        message=f"{slot.field} {slot.written!r} left out: {slot.reason}",
    )


def _resolved(spec: JobSpec, catalog: Catalog | None) -> ResolvedJob | None:
    if spec.model is None:
        return None
    try:
        return resolve_job(spec, catalog, strict=False)
    except AdvisorError:
        return None


def fold_messages(messages: Sequence[BaseMessage], catalog: Catalog | None) -> TurnContext:
    """The context of the last human message, every earlier one folded in as its own turn
    folded it (languages detected; routed, so the hardware a fit check named or the topic of a
    general question sets nothing)."""
    texts = [m.text for m in messages if isinstance(m, HumanMessage)]
    if not texts:
        raise ValueError("the conversation has no user message")
    state = JobSpec()
    for text in texts[:-1]:
        state = plan_turn(state, text, _detected(text), catalog).state
    return plan_turn(state, texts[-1], _detected(texts[-1]), catalog)


def _detected(text: str) -> str:
    return choose_language(text, None, None)


@dataclass(frozen=True)
class PlannedCall:
    name: str
    args: dict[str, Any]


# --------------------------------------------------------------------------- tool arguments


IMAGE_ONLY = (*IMAGE_FIELDS, "images", "steps")  # what the estimator clears for a language model


def _tool_args(plan: ResolvedJob, names: tuple[str, ...]) -> dict[str, Any]:
    """The job as a tool call: the model as the user named it, and every field of `names` the
    conversation set (JSON-safe); the tool resolves the rest with the same defaults, so its
    result is the plan's. A value the plan dropped (see its notices) is left out."""
    spec = plan.spec
    dropped: set[str] = {n.field for n in plan.notices if n.kind == "invalid_value"}
    if plan.estimate_input is not None:  # a language model: an earlier image job's fields
        dropped |= set(IMAGE_ONLY)  # ("SDXL at 1024px", then "Llama 3.1 8B") do not apply
    args = spec.model_dump(mode="json", include=set(names) - dropped, exclude_none=True)
    for name in ("max_price_per_hour", "budget"):
        money = getattr(spec, name)
        if name in args and isinstance(money, Money):  # USD as a number, else "2.5 EUR"
            args[name] = money.amount if money.is_usd else str(money)
    return {"model": spec.model_label(), **args}


def job_tool_args(plan: ResolvedJob) -> dict[str, Any]:
    """estimate_memory arguments for a resolved job."""
    return _tool_args(plan, ESTIMATE_FIELDS)


def rank_tool_args(plan: ResolvedJob) -> dict[str, Any]:
    """rank_instances arguments for a resolved job (regions the catalog lacks are left out)."""
    args = _tool_args(plan, RANK_FIELDS)
    regions = plan.request.constraints.regions if plan.request is not None else None
    if regions is None:
        args.pop("regions", None)
    else:
        args["regions"] = regions
    return args


def _search(query: str, lang: str, k: int, job: Method | None = None) -> PlannedCall:
    args: dict[str, Any] = {"query": query, "lang": lang, "k": k}
    if job is not None:
        args["job_method"] = job
    return PlannedCall("search_knowledge", args)


def job_method(ctx: TurnContext) -> Method | None:
    """The conversation's job method: as stated, else as the job was resolved; None without a
    job (the knowledge search picks twin entries by it)."""
    if ctx.state.method is not None:
        return ctx.state.method
    estimate = ctx.plan.estimate_input if ctx.plan is not None else None
    return estimate.method if estimate is not None else None


def _artifact(outcomes: Sequence[ToolOutcome], kind: type[Any]) -> Any:
    return next((o.artifact for o in outcomes if isinstance(o.artifact, kind)), None)


def _caveat_calls(ctx: TurnContext, ranking: RankResult | None) -> list[PlannedCall]:
    if ranking is None or not ranking.ranked:
        return []
    calls = []
    if ctx.state.spot in ("allowed", "required"):
        calls.append(_search(CAVEAT_QUERIES["spot"], ctx.lang, CAVEAT_K))
    best = ranking.ranked[0]
    if ranking.job.method in _FULL_METHODS and best.gpu_count > 1:
        calls.append(_search(CAVEAT_QUERIES["multi_gpu_full"], ctx.lang, CAVEAT_K))
    return calls


def _is(outcome: ToolOutcome, call: PlannedCall) -> bool:
    return outcome.name == call.name and outcome.args == call.args


def job_calls(
    ctx: TurnContext, outcomes: Sequence[ToolOutcome], caveats: bool
) -> list[PlannedCall]:
    """estimate_memory and rank_instances for the job, and the caveat searches its ranking
    calls for (when `caveats`)."""
    plan = ctx.plan
    if plan is None or not plan.ready or ctx.state.model is None:
        return []
    rank_call = PlannedCall("rank_instances", rank_tool_args(plan))
    calls = [PlannedCall("estimate_memory", job_tool_args(plan)), rank_call]
    if caveats:
        ranking = next((o.artifact for o in outcomes if _is(o, rank_call)), None)
        calls += _caveat_calls(ctx, ranking if isinstance(ranking, RankResult) else None)
    return calls


def _passages(outcomes: Sequence[ToolOutcome]) -> list[Any]:
    found = []
    for outcome in outcomes:
        if isinstance(outcome.artifact, KnowledgeResult):
            found.extend(outcome.artifact.passages)
    return found


def job_answer(ctx: TurnContext, outcomes: Sequence[ToolOutcome]) -> compose.Answer | None:
    """The job answer from the estimate and the ranking this turn ran, if both ran."""
    estimate = _artifact(outcomes, MemoryEstimate)
    ranking = _artifact(outcomes, RankResult)
    if estimate is None or ranking is None or ctx.plan is None:
        return None
    return compose.compose_job_answer(
        ctx.lang, ctx.state, ctx.plan, estimate, ranking, _passages(outcomes), ctx.plan.notices
    )


def _answer(answer: compose.Answer) -> AIMessage:
    return AIMessage(
        content=answer.text,
        response_metadata={"advisor_answer": answer.model_dump(mode="json")},
    )
