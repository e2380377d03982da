"""The six tool wrappers: schema snapshots, JSON content = artifact figures, the error contract."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from assistant.agent.tool_args import SearchKnowledgeArgs
from assistant.agent.toolbox import (
    ARTIFACT_ROWS,
    TOOL_NAMES,
    AdvisorToolError,
    InstanceList,
    KnowledgeResult,
    ModelInfo,
    ToolResources,
    build_tools,
)
from knowledge.retrieval import Passage
from tools.catalog import builtin_catalog
from tools.catalog.instances import Catalog
from tools.errors import UnknownNameError
from tools.gpus import GPUSpec, matching_gpu_ids
from tools.memory import EstimateInput, estimate
from tools.ranking import rank
from tools.ranking.models import Constraints, RankRequest, RankResult, Workload
from tools.units import to_gib

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools.json"


class ListKnowledge:
    """A knowledge base that returns fixed passages and records the searches it got."""

    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages
        self.searches: list[tuple[str, str | None, int]] = []
        self.jobs: list[str | None] = []

    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        self.searches.append((query, lang, k))
        self.jobs.append(job)
        return self.passages[:k]


def _passage(topic: str, lang: str, title: str, text: str) -> Passage:
    return Passage(
        topic=topic, lang=lang, title=title, text=text, source=f"{lang}/{topic}.md", score=0.5,
        chunk_id=f"{topic}#{lang}#0", query_lang=lang, lang_fallback=False,
    )  # fmt: skip


PASSAGES = [
    _passage("faq/training-spot", "nl", "Is spot veilig?", "Ja, met checkpoints elke 30 minuten."),
    _passage("provider/egress", "nl", "Uitgaand verkeer", "Egress kost geld."),
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return builtin_catalog()


@pytest.fixture
def knowledge() -> ListKnowledge:
    return ListKnowledge(PASSAGES)


@pytest.fixture
def tools(catalog: Catalog, knowledge: ListKnowledge) -> dict[str, BaseTool]:
    built = build_tools(ToolResources(lambda: catalog, lambda: knowledge))
    return {tool.name: tool for tool in built}


def call(tool: BaseTool, args: dict[str, Any]) -> ToolMessage:
    message = tool.invoke({"type": "tool_call", "name": tool.name, "args": args, "id": "c1"})
    assert isinstance(message, ToolMessage), f"{tool.name} returned {type(message)}"
    return message


def _schemas(tools: dict[str, BaseTool]) -> dict[str, Any]:
    return {name: convert_to_openai_tool(tools[name])["function"] for name in TOOL_NAMES}


def test_tool_names_in_order(tools: dict[str, BaseTool]) -> None:
    assert list(tools) == list(TOOL_NAMES), "build_tools keeps the TOOL_NAMES order"
    assert TOOL_NAMES == (
        "estimate_memory", "rank_instances", "search_knowledge",
        "lookup_model", "lookup_gpu", "list_instances", "check_fit",
    )  # fmt: skip


def test_schemas_match_snapshot(tools: dict[str, BaseTool]) -> None:
    """Name, description and JSON args schema of every tool, as a model receives them.
    Regenerate after an intended change with UPDATE_SNAPSHOTS=1."""
    current = _schemas(tools)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for name in TOOL_NAMES:
        assert current[name] == expected[name], f"{name}: schema changed; see {SNAPSHOT.name}"


def _leaf_fields(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(dotted path, field schema) of every property, nested objects included."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, field in schema.get("properties", {}).items():
        out.append((name, field))
        for option in [field, *field.get("anyOf", [])]:
            if option.get("type") == "object":
                out.extend((f"{name}.{sub}", f) for sub, f in _leaf_fields(option))
    return out


UNITS = ("GiB", "USD", "hours", "tokens", "count", "parameters", "epochs", "samples",
         "sequences", "dimensions", "stage", "fraction", "probability", "factor")  # fmt: skip


def _is_numeric(field: dict[str, Any]) -> bool:
    types = {option.get("type") for option in [field, *field.get("anyOf", [])]}
    return bool(types & {"integer", "number"})


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_every_field_is_described_and_numbers_name_their_unit(
    tools: dict[str, BaseTool], name: str
) -> None:
    schema = convert_to_openai_tool(tools[name])["function"]["parameters"]
    fields = _leaf_fields(schema)
    assert fields, f"{name} has no arguments"
    for path, field in fields:
        text = field.get("description", "")
        assert len(text) >= 10, f"{name}.{path} has no real description: {text!r}"
        if _is_numeric(field):
            assert any(unit in text for unit in UNITS), (
                f"{name}.{path}: numeric field described as {text!r} names no unit"
            )


def test_estimate_memory_content_is_the_artifact(tools: dict[str, BaseTool]) -> None:
    message = call(tools["estimate_memory"], {"model": "llama 3.1 8b", "method": "qlora"})
    expected = estimate(EstimateInput(model="llama 3.1 8b", method="qlora"))
    assert message.status == "success"
    assert message.artifact == expected, "the artifact is the estimator's own result"
    content = json.loads(message.content)  # type: ignore[arg-type]
    assert content["model_id"] == "meta-llama/Llama-3.1-8B"
    assert content["per_gpu_bytes"]["total"] == expected.per_gpu.total
    assert content["per_gpu_gib"]["total"] == round(to_gib(expected.per_gpu.total), 2)
    assert content["trainable_params"] == expected.trainable_params
    assert content["assumptions"] == expected.assumptions


def test_estimate_memory_omitted_fields_take_estimator_defaults(tools: dict[str, BaseTool]) -> None:
    message = call(tools["estimate_memory"], {"model": "7B"})
    assert message.artifact == estimate(EstimateInput(model="7B")), "defaults are the estimator's"


def test_rank_instances_filters_and_trims_content(
    tools: dict[str, BaseTool], catalog: Catalog
) -> None:
    args = {
        "model": "llama 3.1 8b", "method": "lora", "tokens": 2e8,
        "spot": "allowed", "gpus": ["A100 80GB", "H100"],
        "max_vram_gib": 80, "top": 2,
    }  # fmt: skip
    message = call(tools["rank_instances"], args)
    allowed = matching_gpu_ids("A100 80GB") | matching_gpu_ids("H100")
    expected = rank(
        RankRequest(
            job=EstimateInput(model="llama 3.1 8b", method="lora"),
            workload=Workload(tokens=2e8),
            constraints=Constraints(spot="allowed", gpus=["A100 80GB", "H100"], max_vram_gib=80),
            top=ARTIFACT_ROWS,
        ),
        catalog.instances,
    )
    assert isinstance(message.artifact, RankResult)

    def rows(result: RankResult) -> list[tuple[str, str, float, float]]:
        return [(r.instance_id, r.plan, r.hours, r.total_cost) for r in result.ranked]

    got = message.artifact
    assert (got.job, rows(got), got.excluded) == (expected.job, rows(expected), expected.excluded)
    assert all(r.price_age is not None for r in message.artifact.ranked), "each price's age"
    assert {row.gpu for row in message.artifact.ranked} <= allowed
    excluded = {e.kind for e in expected.excluded}
    assert {"gpu", "vram"} <= excluded, "GPU and memory limits are exclusions, with reasons"
    content = json.loads(message.content)  # type: ignore[arg-type]
    assert [r["instance_id"] for r in content["ranked"]] == [
        r.instance_id for r in expected.ranked[:2]
    ], "content lists the top 2 rows, best first"
    first = expected.ranked[0]
    assert content["ranked"][0]["total_cost_usd"] == round(first.total_cost, 2)
    assert content["ranked"][0]["price_per_hour_usd"] == round(first.price_per_hour, 2)
    assert content["considered"] == len(catalog)
    assert len(message.artifact.ranked) == min(ARTIFACT_ROWS, expected.feasible)
    assert sum(content["excluded_by_reason"].values()) == len(expected.excluded)
    assert content["assumed"] == {
        "precision": "bf16-mixed", "optimizer": "adamw", "lora_rank": 16, "micro_batch_size": 1,
        "seq_len": 2048, "gradient_checkpointing": "full", "epochs": 1.0, "objective": "cost",
    }, "the defaults the tool used, for the model to state"  # fmt: skip


def test_search_knowledge_passes_lang_and_k(
    tools: dict[str, BaseTool], knowledge: ListKnowledge
) -> None:
    message = call(tools["search_knowledge"], {"query": "is spot veilig?", "lang": "nl", "k": 1})
    assert knowledge.searches == [("is spot veilig?", "nl", 1)]
    assert message.artifact == KnowledgeResult(query="is spot veilig?", lang="nl",
                                               passages=PASSAGES[:1])  # fmt: skip
    content = json.loads(message.content)  # type: ignore[arg-type]
    assert content["passages"][0]["title"] == "Is spot veilig?"
    assert content["passages"][0]["text"] == "Ja, met checkpoints elke 30 minuten."


def test_search_knowledge_passes_the_job_method(
    tools: dict[str, BaseTool], knowledge: ListKnowledge
) -> None:
    call(tools["search_knowledge"], {"query": "hoeveel geheugen?", "job_method": "qlora"})
    call(tools["search_knowledge"], {"query": "hoeveel geheugen?"})
    assert knowledge.jobs == ["qlora", None]
    with pytest.raises(ValidationError):
        SearchKnowledgeArgs(query="x", job_method="sft")  # type: ignore[arg-type]


def test_lookup_tools(tools: dict[str, BaseTool]) -> None:
    gpu = call(tools["lookup_gpu"], {"name": "h100"})
    assert isinstance(gpu.artifact, GPUSpec) and gpu.artifact.id == "H100-SXM"
    assert json.loads(gpu.content)["vram_gib"] == gpu.artifact.vram_gib  # type: ignore[arg-type]
    model = call(tools["lookup_model"], {"name": "llama 3.1 8b"})
    assert isinstance(model.artifact, ModelInfo)
    assert model.artifact.total_params == 8_030_261_248, "Llama 3.1 8B's published count"


def test_list_instances_cheapest_first(tools: dict[str, BaseTool], catalog: Catalog) -> None:
    message = call(tools["list_instances"], {"gpu": ["H100"], "limit": 3})
    assert isinstance(message.artifact, InstanceList)
    expected = sorted(catalog.filter(gpu="H100"), key=lambda i: (i.price_per_hour, i.id))
    assert message.artifact.instances == expected
    assert message.artifact.matched == len(expected)
    content = json.loads(message.content)  # type: ignore[arg-type]
    assert [row["id"] for row in content["instances"]] == [i.id for i in expected[:3]]


@pytest.mark.parametrize(
    ("name", "args", "fragment"),
    [
        ("lookup_gpu", {"name": "H200x"}, r"unknown GPU 'H200x'; closest known: H200"),
        ("estimate_memory", {"model": "gpt-9"}, r"unknown model 'gpt-9'"),
        ("estimate_memory", {"model": "7B", "method": "full", "lora_rank": 8},
         r"lora_rank: got 8; valid: only with method lora or qlora"),
        ("list_instances", {"providers": ["nope"]}, r"unknown provider 'nope'"),
        ("rank_instances", {"model": "7B", "tokens": 1e8, "samples": 10},
         r"give exactly one of tokens or samples"),
        ("rank_instances", {"model": "7B", "tokens": 1e8, "min_gpus": 4, "max_gpus": 2},
         r"min_gpus 4 is above max_gpus 2"),
        ("estimate_memory", {"model": "7B", "seq_len": -1}, r"seq_len: got -1"),
    ],
)  # fmt: skip
def test_errors_go_back_to_the_model_as_json(
    tools: dict[str, BaseTool], name: str, args: dict[str, Any], fragment: str
) -> None:
    message = call(tools[name], args)
    assert message.status == "error", "the error is the tool result, not an exception"
    assert message.artifact is None
    error = json.loads(message.content)["error"]  # type: ignore[arg-type]
    assert set(error) >= {"type", "message"}
    assert re.search(fragment, error["message"]), error["message"]


def test_unknown_name_error_lists_suggestions(tools: dict[str, BaseTool]) -> None:
    error = json.loads(call(tools["lookup_gpu"], {"name": "H200x"}).content)["error"]  # type: ignore[arg-type]
    assert error["type"] == "UnknownNameError"
    assert error["kind"] == "GPU" and error["name"] == "H200x"
    assert error["suggestions"][0] == "H200"


@pytest.mark.parametrize("spec", ["/etc/hostname", "config.json", "~/models/config.json"])
def test_local_files_are_never_read_for_a_model(tools: dict[str, BaseTool], spec: str) -> None:
    error = json.loads(call(tools["estimate_memory"], {"model": spec}).content)["error"]  # type: ignore[arg-type]
    assert error["field"] == "model"
    assert error["valid"] == "a model name or a parameter count such as '7B'"


def test_tool_error_class_keeps_the_domain_error() -> None:
    domain = UnknownNameError("GPU", "X1", ["H100-SXM"])
    exc = AdvisorToolError(domain)
    assert exc.error is domain
    assert json.loads(exc.args[0]) == {"error": {
        "type": "UnknownNameError", "message": "unknown GPU 'X1'; closest known: H100-SXM",
        "kind": "GPU", "name": "X1", "suggestions": ["H100-SXM"],
    }}  # fmt: skip


def test_bugs_propagate(catalog: Catalog) -> None:
    class Broken:
        def search(
            self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
        ) -> list[Passage]:
            raise RuntimeError("index exploded")

    tools = {t.name: t for t in build_tools(ToolResources(lambda: catalog, Broken))}
    with pytest.raises(RuntimeError, match="index exploded"):
        call(tools["search_knowledge"], {"query": "spot?"})


def test_resources_load_once(catalog: Catalog) -> None:
    loads: list[str] = []

    def load() -> Catalog:
        loads.append("catalog")
        return catalog

    resources = ToolResources(load, lambda: ListKnowledge([]))
    assert resources.catalog() is resources.catalog()
    assert loads == ["catalog"], "the catalog is loaded on first use, once"


def test_the_injected_runtime_reaches_the_tool_but_is_never_dumped(
    tools: dict[str, BaseTool],
) -> None:
    """LangChain dumps a call's validated arguments to list their fields and then reads each
    back from the model: the runtime (the whole graph state) must be read back, never dumped."""

    class Runtime:
        def __init__(self) -> None:
            self.state = {"messages": ["a long conversation"] * 3}

    schema = tools["estimate_memory"].args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    runtime = Runtime()
    args = schema.model_validate({"model": "7B", "runtime": runtime})
    assert args.model_dump()["runtime"] is None
    assert getattr(args, "runtime") is runtime  # noqa: B009 - a field of a generated model


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_langchain_reads_one_injected_argument_from_plain_annotations(
    tools: dict[str, BaseTool], name: str
) -> None:
    """LangChain reads the schema's signature at every call to find injected arguments: it
    sees `runtime` as injected and every other field as Any (nothing to rebuild per call),
    while validation keeps the fields' real types."""
    from langchain_core.tools.base import _is_injected_arg_type, get_all_basemodel_annotations

    schema = tools[name].args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    seen = get_all_basemodel_annotations(schema)
    assert set(seen) == set(schema.model_fields)
    assert [k for k, v in seen.items() if _is_injected_arg_type(v)] == ["runtime"]
    assert {v for k, v in seen.items() if k != "runtime"} <= {Any}
    typed = [f for f in schema.model_fields.values() if f.annotation is not Any]
    assert len(typed) == len(schema.model_fields) - 1, "only runtime is untyped"


def test_a_wrongly_typed_argument_is_still_refused(tools: dict[str, BaseTool]) -> None:
    call = {"name": "rank_instances", "args": {"model": "7B", "tokens": "lots"},
            "id": "c1", "type": "tool_call"}  # fmt: skip
    message = tools["rank_instances"].invoke(call)
    assert isinstance(message, ToolMessage)
    error = json.loads(str(message.content))["error"]
    assert error["type"] == "InvalidInputError" and error["field"] == "tokens"
