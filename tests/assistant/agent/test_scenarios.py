"""Multi-turn conversations with the offline policy, two per language.

After every turn: the whole job state, the exact tool calls and arguments, the answer language
(the turn's language and a heading from that language's message catalog), and grounding.
The tool calls carry what the conversation said; the tools resolve the rest with the job's stated
defaults (`tools.job.defaults`), as the turn's plan did. Everything here is literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant.agent.conversation import Assistant, Session
from assistant.agent.events import ToolCallRecord, TurnResult
from assistant.agent.turn import CAVEAT_QUERIES
from assistant.answers.i18n import message as i18n_message
from assistant.settings import Settings
from tools.catalog import builtin_catalog
from tools.job import DEFAULTS

LLAMA_8B = "meta-llama/Llama-3.1-8B"
A100S = ["A100-40GB-SXM", "A100-80GB-SXM", "A100-40GB-PCIe", "A100-80GB-PCIe"]
USD_40 = {"amount": 40.0, "currency": "USD"}


def job(model: str, method: str, **given: Any) -> dict[str, Any]:
    """estimate_memory arguments: the fields the conversation gave."""
    return {"model": model, "method": method} | given


def rank(job_args: dict[str, Any], **given: Any) -> dict[str, Any]:
    """rank_instances arguments: the job, and the data and limits the conversation gave."""
    return job_args | given


@dataclass
class Step:
    message: str
    state: dict[str, Any]
    calls: list[tuple[str, dict[str, Any]]]
    search: bool = False  # the message itself is also searched (guidance or mixed)


def expected_calls(step: Step, lang: str, result: TurnResult) -> list[tuple[str, dict[str, Any]]]:
    """The step's calls, the question's own search, and the caveat searches the policy owes the
    ranking it got (spot policy; multi-GPU full fine-tune)."""
    calls = list(step.calls)
    searched = step.search
    ranking = _artifact(result, "rank_instances")
    if ranking is not None and ranking["ranked"] and not searched:
        if step.state.get("spot") in ("allowed", "required"):
            calls.append(_caveat("spot", lang))
        top = ranking["ranked"][0]
        if step.state.get("method") in ("full", "pretrain") and top["gpu_count"] > 1:
            calls.append(_caveat("multi_gpu_full", lang))
    if searched:
        args: dict[str, Any] = {"query": step.message, "lang": lang, "k": 3}
        method = step.state.get("method") or (
            DEFAULTS["method"].value if "model" in step.state else None
        )
        if method is not None:
            args["job_method"] = method  # the conversation's job picks between twin entries
        calls.append(("search_knowledge", args))
    return calls


def _caveat(kind: str, lang: str) -> tuple[str, dict[str, Any]]:
    return ("search_knowledge", {"query": CAVEAT_QUERIES[kind], "lang": lang, "k": 2})


def _artifact(result: TurnResult, name: str) -> Any:
    record: ToolCallRecord | None = next((c for c in result.tool_calls if c.name == name), None)
    return None if record is None else record.result


def _heading(result: TurnResult) -> str:
    if _artifact(result, "check_fit") is not None:
        return "fit.ways_heading"
    ranking = _artifact(result, "rank_instances")
    if ranking is not None:
        return "options.heading" if ranking["ranked"] else "none.heading"
    return "citations.heading"


def first_conversation(lang: str, texts: list[str]) -> list[Step]:
    """A Llama 3.1 8B QLoRA job, amended three times, then a guidance question."""
    qlora, full = job(LLAMA_8B, "qlora"), job(LLAMA_8B, "full")
    tokens = {"tokens": 2e8}
    s1 = {"model": LLAMA_8B, "method": "qlora", "tokens": 2e8}
    s2 = s1 | {"method": "full"}
    s3 = s2 | {"spot": "required"}
    s4 = s3 | {"max_price_per_hour": USD_40}
    return [
        Step(texts[0], s1, [("estimate_memory", qlora), ("rank_instances", rank(qlora, **tokens))]),
        Step(texts[1], s2, [("estimate_memory", full), ("rank_instances", rank(full, **tokens))]),
        Step(
            texts[2],
            s3,
            [("estimate_memory", full), ("rank_instances", rank(full, **tokens, spot="required"))],
        ),
        Step(
            texts[3],
            s4,
            [
                ("estimate_memory", full),
                ("rank_instances", rank(full, **tokens, spot="required", max_price_per_hour=40.0)),
            ],
        ),
        Step(texts[4], s4, [], search=True),
    ]


def second_conversation(lang: str, texts: list[str]) -> list[Step]:
    """A 70B model by size with LoRA; a fit check against the 24 GB one has (hardware to check,
    not a catalog filter); narrowed to A100s; then a mixed question."""
    lora = job("70B", "lora")
    s1 = {"model": "70B", "method": "lora"}
    s2 = s1 | {"seq_len": 4096}
    s4 = s2 | {"gpus": A100S}
    s5 = s4 | {"method": "qlora"}
    long = lora | {"seq_len": 4096}
    qlora = job("70B", "qlora", seq_len=4096)
    fit = long | {"num_gpus": 1, "gpu_memory_gib": 24.0}
    return [
        Step(texts[0], s1, [("estimate_memory", lora), ("rank_instances", rank(lora))]),
        Step(texts[1], s2, [("estimate_memory", long), ("rank_instances", rank(long))]),
        Step(texts[2], s2, [("check_fit", fit)]),
        Step(texts[3], s4, [("estimate_memory", long), ("rank_instances", rank(long, gpus=A100S))]),
        Step(
            texts[4],
            s5,
            [("estimate_memory", qlora), ("rank_instances", rank(qlora, gpus=A100S))],
            search=True,
        ),
    ]


MESSAGES: dict[str, list[list[str]]] = yaml.safe_load(
    (Path(__file__).parents[1] / "data" / "conversations.yaml").read_text("utf-8")
)

SCENARIOS = [
    pytest.param(lang, builder(lang, texts[i]), id=f"{lang}-{i + 1}")
    for lang, texts in MESSAGES.items()
    for i, builder in enumerate((first_conversation, second_conversation))
]


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory, knowledge_base: Any) -> Assistant:
    data: Path = tmp_path_factory.mktemp("scenarios")
    return Assistant(Settings(data_dir=data), knowledge=knowledge_base, catalog=builtin_catalog())


@pytest.mark.parametrize(("lang", "steps"), SCENARIOS)
def test_conversation(assistant: Assistant, lang: str, steps: list[Step]) -> None:
    session = Session()
    for n, step in enumerate(steps, start=1):
        where = f"{lang} turn {n} ({step.message!r})"
        result = assistant.respond(step.message, session).result
        assert result.state == step.state, f"{where}: job state"
        calls = [(c.name, c.args) for c in result.tool_calls]
        assert calls == expected_calls(step, lang, result), f"{where}: tool calls"
        assert all(c.status == "success" for c in result.tool_calls), f"{where}: tool errors"
        assert result.language == lang, f"{where}: answer language"
        heading = i18n_message(lang, _heading(result))
        assert heading in result.answer, f"{where}: {heading!r} missing from the answer"
        assert result.grounded and result.ungrounded_numbers == [], f"{where}: not grounded"
        assert result.brain == "offline" and result.error_id is None, where
        expected_intent = (
            "guidance" if step.search else "fit_check" if step.calls[0][0] == "check_fit"
            else "job" if n == 1 else "amend"
        )  # fmt: skip
        assert result.intent == expected_intent, f"{where}: intent"
