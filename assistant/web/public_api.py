"""The three functions the app publishes as API endpoints and MCP tools.

`estimate_memory`, `rank_instances` and `search_knowledge` take plain typed arguments (their type
hints and docstrings become the endpoint schema), run the assistant's own tool functions
(`assistant.agent.toolbox.run_*`, the same code the chat uses) and return the JSON text those tools
give the model (figures with units in the key names), which MCP clients read as it is. A domain
error returns {"error": {...}} naming the field, the value given and what is valid, as the chat's
tools do.

No `from __future__ import annotations` here: the endpoint schemas are read from real types.
"""

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from assistant.agent.tool_args import EstimateMemoryArgs, RankInstancesArgs, SearchKnowledgeArgs
from assistant.agent.toolbox import (
    KnowledgeSearch,
    error_payload,
    run_estimate_memory,
    run_rank_instances,
    run_search_knowledge,
)
from tools.catalog.instances import Catalog
from tools.errors import AdvisorError, InvalidInputError

Method = Literal["pretrain", "full", "lora", "qlora"]
Precision = Literal["bf16-mixed", "fp16-mixed", "bf16", "fp32"]
Spot = Literal["never", "allowed", "required"]
Objective = Literal["cost", "time", "price"]


def _call(schema: type[BaseModel], run: Callable[[Any], tuple[str, object]], **raw: Any) -> str:
    """Validate `raw` (None = omitted) with `schema`, run the tool, return its JSON text."""
    args = {key: value for key, value in raw.items() if value is not None}
    try:
        content, _artifact = run(schema.model_validate(args))
    except AdvisorError as exc:
        return _error(exc)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "input"
        message = str(err["msg"]).removeprefix("Value error, ")
        return _error(InvalidInputError(field, err.get("input"), message))
    return content


def _error(exc: AdvisorError) -> str:
    return json.dumps({"error": error_payload(exc)}, ensure_ascii=False)


class PublicApi:
    """The published functions, bound to the app's catalog and knowledge base (opened lazily)."""

    def __init__(
        self, catalog: Callable[[], Catalog], knowledge: Callable[[], KnowledgeSearch]
    ) -> None:
        self._catalog = catalog
        self._knowledge = knowledge

    def functions(self) -> list[Callable[..., Any]]:
        return [self.estimate_memory, self.rank_instances, self.search_knowledge]

    def estimate_memory(
        self,
        model: str,
        method: Method | None = None,
        precision: Precision | None = None,
        seq_len: int | None = None,
        micro_batch_size: int | None = None,
        num_gpus: int | None = None,
        lora_rank: int | None = None,
    ) -> str:
        """Estimate peak GPU memory per GPU to train or fine-tune a model: weights, gradients,
        optimizer state, activations and overhead, in GiB and bytes, with every assumption.

        Args:
            model: model name such as 'llama 3.1 8b' or a parameter count such as '70B'
            method: pretrain, full, lora (16-bit base) or qlora (4-bit base); default full
            precision: bf16-mixed, fp16-mixed, bf16 or fp32; default bf16-mixed
            seq_len: tokens per training sequence; default 2048
            micro_batch_size: sequences per GPU per step; default 1
            num_gpus: data-parallel GPUs the memory is estimated for; default 1
            lora_rank: LoRA rank r (lora and qlora only); default 16

        Returns:
            JSON text: per_gpu_gib and per_gpu_bytes by part, parameters, assumptions
        """
        return _call(
            EstimateMemoryArgs,
            run_estimate_memory,
            model=model,
            method=method,
            precision=precision,
            seq_len=seq_len,
            micro_batch_size=micro_batch_size,
            num_gpus=num_gpus,
            lora_rank=lora_rank,
        )

    def rank_instances(
        self,
        model: str,
        method: Method | None = None,
        tokens: float | None = None,
        epochs: float | None = None,
        spot: Spot | None = None,
        max_price_per_hour: float | None = None,
        budget: float | None = None,
        providers: list[str] | None = None,
        objective: Objective | None = None,
        top: int = 5,
    ) -> str:
        """Rank cloud GPU instances for a training job: which fit in memory, expected hours,
        USD per hour and total USD, best first, with the reasons and the prices' sources.

        Args:
            model: model name such as 'llama 3.1 70b' or a parameter count such as '7B'
            method: pretrain, full, lora or qlora; default full
            tokens: training tokens per epoch, e.g. 2e8; default 1e8
            epochs: passes over the data; default 1
            spot: never (on-demand only), allowed or required; default never
            max_price_per_hour: most USD per hour for the whole cluster
            budget: most USD for the whole run
            providers: only these provider keys, e.g. ['aws', 'runpod']
            objective: cost (cheapest total), time (fastest) or price (lowest USD/h)
            top: ranked rows returned, 1 to 20

        Returns:
            JSON text: ranked rows (USD/h, hours, total USD, why), exclusions by reason
        """
        if tokens is None:
            tokens = 1e8
        return _call(
            RankInstancesArgs,
            lambda args: run_rank_instances(args, self._catalog()),
            model=model,
            method=method,
            tokens=tokens,
            epochs=epochs,
            spot=spot,
            max_price_per_hour=max_price_per_hour,
            budget=budget,
            providers=providers,
            objective=objective,
            top=top,
        )

    def search_knowledge(self, query: str, lang: str | None = None, k: int = 3) -> str:
        """Search the multilingual knowledge base (guides and FAQs on GPUs, memory, fine-tuning,
        spot instances, providers) for passages answering a question.

        Args:
            query: the question, in English, Dutch, French, Turkish, German or Spanish
            lang: language wanted: en, nl, fr, tr, de or es; default: the query's
            k: passages to return, one per topic, 1 to 8

        Returns:
            JSON text: passages with topic, lang, title, text and source
        """
        return _call(
            SearchKnowledgeArgs,
            lambda args: run_search_knowledge(args, self._knowledge()),
            query=query,
            lang=lang,
            k=k,
        )
