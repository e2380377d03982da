"""The turn's decisions: which tool calls it needs, with which exact arguments, and its answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from assistant.agent.outcomes import turn_outcomes
from assistant.agent.routes import next_step
from assistant.agent.toolbox import ToolResources, build_tools
from assistant.agent.turn import CAVEAT_QUERIES, PlannedCall, TurnContext, plan_turn
from assistant.answers.i18n import message as i18n_message
from tools.catalog import builtin_catalog
from tools.catalog.instances import Catalog
from tools.job import JobSpec
from tools.memory import estimate as estimate_of

# What the user said: the tools resolve the rest with the job's stated defaults, exactly as the
# turn's plan did (tools.advice.resolve_job), so the calls carry only the given fields.
QLORA_8B = {"model": "meta-llama/Llama-3.1-8B", "method": "qlora"}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return builtin_catalog()


def ctx_for(text: str, lang: str, catalog: Catalog, prior: JobSpec | None = None) -> TurnContext:
    return plan_turn(prior or JobSpec(), text, lang, catalog)


def run_tools(calls: list[PlannedCall], catalog: Catalog, knowledge: Any) -> list[Any]:
    """The AIMessage and ToolMessages the graph would add for `calls`."""
    tools = {t.name: t for t in build_tools(ToolResources(lambda: catalog, lambda: knowledge))}
    ai = AIMessage(
        "",
        tool_calls=[
            {"type": "tool_call", "name": c.name, "args": c.args, "id": f"t{i}"}
            for i, c in enumerate(calls)
        ],
    )
    results = [
        tools[c.name].invoke({"type": "tool_call", "name": c.name, "args": c.args, "id": f"t{i}"})
        for i, c in enumerate(calls)
    ]
    return [ai, *results]


def test_job_turn_calls_estimate_and_rank_with_the_plan(catalog: Catalog) -> None:
    ctx = ctx_for("I want to fine-tune Llama 3.1 8B with QLoRA on 200M tokens", "en", catalog)
    step = next_step(ctx, [])
    assert step == [
        PlannedCall("estimate_memory", QLORA_8B),
        PlannedCall("rank_instances", {**QLORA_8B, "tokens": 200_000_000.0}),
    ]


def test_the_tools_resolve_the_plans_job(catalog: Catalog, knowledge_base: Any) -> None:
    """The calls carry what the user said; the tools' artifacts are the plan's job."""
    ctx = ctx_for("Llama 3.1 8B with QLoRA on 200M tokens, spot is fine", "en", catalog)
    step = next_step(ctx, [])
    assert isinstance(step, list) and ctx.plan is not None
    _, estimate, ranking = run_tools(step, catalog, knowledge_base)
    assert ctx.plan.estimate_input is not None and ctx.plan.request is not None
    assert estimate.artifact.per_gpu.total == estimate_of(ctx.plan.estimate_input).per_gpu.total
    assert ranking.artifact.job.tokens == ctx.plan.request.workload.total_tokens(2048)
    assert ranking.artifact.job.spot_policy == "allowed"


def test_amendments_change_only_what_they_say(catalog: Catalog) -> None:
    first = ctx_for("Llama 3.1 8B with QLoRA on 200M tokens", "en", catalog)
    second = ctx_for("only spot, max $40/h", "en", catalog, first.state)
    step = next_step(second, [])
    assert isinstance(step, list)
    rank_args = step[1].args
    assert rank_args["spot"] == "required"
    assert rank_args["max_price_per_hour"] == 40.0
    assert {k: rank_args[k] for k in QLORA_8B} == QLORA_8B, "the job itself is unchanged"


def test_a_value_the_job_cannot_take_is_left_out_and_said(catalog: Catalog) -> None:
    """ "-100M tokens" keeps the conversation's 200M, the other stated values apply, and the
    answer's notices name the words and the field."""
    first = ctx_for("Llama 3.1 8B with QLoRA on 200M tokens", "en", catalog)
    second = ctx_for("actually -100M tokens and batch 4", "en", catalog, first.state)
    assert second.state.tokens == 200_000_000.0 and second.state.micro_batch_size == 4
    assert second.plan is not None
    assert [(n.kind, n.field, n.value) for n in second.plan.notices] == [
        ("value_ignored", "tokens", "-100m tokens")
    ]
    step = next_step(second, [])
    assert isinstance(step, list) and step[1].args["tokens"] == 200_000_000.0


def test_an_amendment_with_only_a_refused_value_still_answers(catalog: Catalog) -> None:
    first = ctx_for("Llama 3.1 8B with QLoRA on 200M tokens", "en", catalog)
    second = ctx_for("and with batch 0?", "en", catalog, first.state)
    assert second.state == first.state
    assert second.plan is not None
    assert [n.kind for n in second.plan.notices] == ["value_ignored"]
    step = next_step(second, [])
    assert isinstance(step, list) and [c.name for c in step][:2] == [
        "estimate_memory",
        "rank_instances",
    ], "the job is answered again, with the note, not a clarifying question"


def test_spot_plan_searches_for_the_checkpoint_caveat(
    catalog: Catalog, knowledge_base: Any
) -> None:
    ctx = ctx_for("QLoRA Llama 3.1 8B on 200M tokens, spot is fine", "en", catalog)
    assert ctx.state.spot == "allowed"
    first = next_step(ctx, [])
    assert isinstance(first, list) and [c.name for c in first] == [
        "estimate_memory",
        "rank_instances",
    ]
    messages = [HumanMessage(ctx.text), *run_tools(first, catalog, knowledge_base)]
    second = next_step(ctx, turn_outcomes(messages))
    assert second == [
        PlannedCall("search_knowledge", {"query": CAVEAT_QUERIES["spot"], "lang": "en", "k": 2})
    ]


def test_missing_model_asks_one_question(catalog: Catalog) -> None:
    ctx = ctx_for("I want to fine-tune with QLoRA on 200M tokens", "de", catalog)
    step = next_step(ctx, [])
    assert isinstance(step, AIMessage) and not step.tool_calls
    assert step.text == i18n_message("de", "clarify.model")
    assert step.text.count("?") == 1


def test_guidance_searches_in_the_users_language(catalog: Catalog) -> None:
    text = "hoe vaak moet ik een checkpoint maken op spot-instanties?"
    ctx = ctx_for(text, "nl", catalog)
    assert ctx.intent == "guidance"
    assert next_step(ctx, []) == [
        PlannedCall("search_knowledge", {"query": text, "lang": "nl", "k": 3})
    ]


def test_mixed_question_uses_tools_and_knowledge(catalog: Catalog) -> None:
    text = "is spot safe for my 70B QLoRA run?"
    ctx = ctx_for(text, "en", catalog)
    assert (ctx.intent, ctx.kind) == ("guidance", "mixed")
    step = next_step(ctx, [])
    assert isinstance(step, list)
    assert [c.name for c in step] == ["estimate_memory", "rank_instances", "search_knowledge"]
    assert step[0].args["model"] == "70B"
    assert step[2].args == {"query": text, "lang": "en", "k": 3, "job_method": "qlora"}


def test_a_tool_error_becomes_one_sentence(catalog: Catalog) -> None:
    ctx = ctx_for("Llama 3.1 8B QLoRA", "fr", catalog)
    error = {
        "error": {
            "type": "UnknownNameError",
            "message": "unknown GPU 'X'",
            "kind": "GPU",
            "name": "X",
            "suggestions": ["H100-SXM"],
        }
    }
    messages = [
        HumanMessage(ctx.text),
        AIMessage(
            "",
            tool_calls=[
                {"type": "tool_call", "name": "lookup_gpu", "args": {"name": "X"}, "id": "e1"}
            ],
        ),
        ToolMessage(json.dumps(error), tool_call_id="e1", status="error"),
    ]
    step = next_step(ctx, turn_outcomes(messages))
    assert isinstance(step, AIMessage) and not step.tool_calls
    assert "X" in step.text and "H100-SXM" in step.text
    assert step.text.count("\n") == 0, "one short sentence"


@pytest.mark.parametrize(
    ("text", "lang", "prior"),
    [
        ("does gradient checkpointing slow training down a lot?", "en", QLORA_8B),
        ("c'est quoi la difference entre bf16 et fp16 pour l'entrainement ?", "fr", QLORA_8B),
        ("was genau macht QLoRA anders als LoRA beim Speicher?", "de", {}),
    ],
)
def test_a_general_question_sets_no_setting_it_asks_about(
    text: str, lang: str, prior: dict[str, Any], catalog: Catalog
) -> None:
    ctx = ctx_for(text, lang, catalog, JobSpec.model_validate(prior))
    assert ctx.intent == "guidance"
    assert ctx.update.given(), "the message does name a technique"
    assert ctx.state == JobSpec.model_validate(prior), "the job keeps what it had"


def test_the_sizes_of_gpus_compared_are_no_filter(catalog: Catalog) -> None:
    ctx = ctx_for("L40S vs A100 80GB for lora on mistral 7b?", "en", catalog)
    assert ctx.intent == "compare"
    assert ctx.state.max_vram_gib is None and ctx.state.gpus is None


def test_a_fit_check_runs_on_the_variant_the_message_narrows_to(catalog: Catalog) -> None:
    """'two A100s with 40 GB' is the 40 GB A100 twice, not every A100 size."""
    from assistant.agent.routes import calls_for

    text = "we have two A100 with 40 GB, enough for a full fine-tune of Qwen2.5 7B?"
    ctx = ctx_for(text, "en", catalog)
    assert ctx.intent == "fit_check" and ctx.state.method == "full"
    calls = calls_for(ctx, [])
    assert [(c.args["gpu_memory_gib"], c.args["num_gpus"]) for c in calls] == [(40.0, 2)]
    every = calls_for(ctx_for("is an A100 enough for LoRA on Qwen2.5 7B?", "en", catalog), [])
    assert [c.args["gpu_memory_gib"] for c in every] == [40.0, 80.0]


def test_folded_messages_keep_the_rules_of_each_turn(catalog: Catalog) -> None:
    """The policy without a planned turn folds the history turn by turn: a general question's
    topic sets nothing in the job, as in the conversation itself."""
    from assistant.agent.turn import fold_messages

    history = [
        HumanMessage("QLoRA on Llama 3.1 8B, 100M tokens"),
        AIMessage("..."),
        HumanMessage("does gradient checkpointing slow training down a lot?"),
        AIMessage("..."),
        HumanMessage("and with a sequence length of 4096?"),
    ]
    ctx = fold_messages(history, catalog)
    assert ctx.prior.gradient_checkpointing is None and ctx.state.gradient_checkpointing is None
    assert (ctx.state.method, ctx.state.seq_len) == ("qlora", 4096)
