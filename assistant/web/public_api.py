"""The functions the app publishes as API endpoints and MCP tools.

`estimate_memory`, `rank_instances` and `search_knowledge` take the arguments of the chat's own
tools (`assistant.agent.tool_args`, generated from `tools.job.JobSpec`), as typed keyword
parameters: each function's signature, type hints and docstring are built from that schema, and
Gradio reads them to publish the endpoint and the MCP tool. They run the chat's own tool
functions (`assistant.agent.toolbox.run_*`) and return the same JSON text (figures with units in
the key names), which MCP clients read as it is.

A bad argument or a domain error raises the `AdvisorError` the command line prints ("seq_len:
got 0; valid: ..."); the app's edge (`assistant.web.blocks.demo.endpoint`) turns it into an
error MCP clients receive as a tool error (`isError: true`) and HTTP clients as the endpoint's.

`refresh_prices` (published when the app has a `PriceRefresher`) runs the Catalog tab's price
refresh: the same lock (a refresh already running is an error saying so), the same reload of the
catalog afterwards, and JSON with each provider's outcome.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from assistant.agent.tool_args import EstimateMemoryArgs, RankInstancesArgs, SearchKnowledgeArgs
from assistant.agent.toolbox import (
    KnowledgeSearch,
    run_estimate_memory,
    run_rank_instances,
    run_search_knowledge,
)
from assistant.web.prices import PriceRefresher, report_json
from tools.catalog.instances import Catalog
from tools.catalog.refresh.models import SourceChoice
from tools.errors import invalid_input
from tools.job.limits import VALID

__all__ = ["PublicApi"]

_SUMMARIES = {
    "estimate_memory": "Estimate peak GPU memory per GPU to train or fine-tune a model: weights,"
    " gradients, optimizer state, activations and overhead, in GiB and bytes, with the defaults"
    " assumed for what is omitted and every modelling assumption.",
    "rank_instances": "Rank cloud GPU instances for a training job: which fit in memory,"
    " expected hours, USD per hour and total USD, best first, with the reasons, the prices'"
    " sources and the defaults assumed for what is omitted.",
    "search_knowledge": "Search the multilingual knowledge base (guides and FAQs on GPUs,"
    " memory, fine-tuning, spot instances, providers) for passages answering a question.",
}
_RETURNS = {
    "estimate_memory": "JSON text: per_gpu_gib and per_gpu_bytes by part, parameters, assumed"
    " defaults, assumptions",
    "rank_instances": "JSON text: ranked rows (USD/h, hours, total USD, why), exclusions by"
    " reason, assumed defaults",
    "search_knowledge": "JSON text: passages with topic, lang, title, text and source",
}


def _docstring(name: str, schema: type[BaseModel]) -> str:
    args = "\n".join(
        f"    {field}: {info.description or field}" for field, info in schema.model_fields.items()
    )
    return f"{_SUMMARIES[name]}\n\nArgs:\n{args}\n\nReturns:\n    {_RETURNS[name]}\n"


def _endpoint(
    name: str, schema: type[BaseModel], run: Callable[[Any], tuple[str, object]]
) -> Callable[..., str]:
    """A function whose parameters are `schema`'s fields (required ones first), that validates
    them with `schema`, runs the tool and returns its JSON text."""
    required = [(f, i) for f, i in schema.model_fields.items() if i.is_required()]
    optional = [(f, i) for f, i in schema.model_fields.items() if not i.is_required()]
    parameters = [
        inspect.Parameter(
            field, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=info.annotation
        )
        for field, info in required
    ] + [
        inspect.Parameter(
            field,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=info.default,
            annotation=info.annotation,
        )
        for field, info in optional
    ]
    signature = inspect.Signature(parameters, return_annotation=str)

    def endpoint(*args: Any, **kwargs: Any) -> str:
        bound = signature.bind(*args, **kwargs)
        values = {k: v for k, v in bound.arguments.items() if v is not None}
        try:
            content, _artifact = run(schema.model_validate(values))
        except ValidationError as exc:
            raise invalid_input(exc, VALID) from None
        return content

    endpoint.__name__ = endpoint.__qualname__ = name
    endpoint.__doc__ = _docstring(name, schema)
    endpoint.__signature__ = signature  # type: ignore[attr-defined]
    endpoint.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
    return endpoint


def _refresh_endpoint(prices: PriceRefresher, catalog: Callable[[], Catalog]) -> Callable[..., str]:
    def refresh_prices(providers: list[str] | None = None, source: SourceChoice = "all") -> str:
        """Download current cloud GPU prices from the public catalogs of gpuhunt and SkyPilot,
        each provider on its own (timeouts, retries; a provider that fails keeps its last good
        copy); rank_instances then uses the new prices. A copy checked within its refresh
        interval is not downloaded again. One refresh runs at a time.

        Args:
            providers: provider names, e.g. ["aws", "lambda", "vast"]; empty = every provider
                the chosen source publishes offline
            source: "gpuhunt", "skypilot" or "all" (each provider from the first that has it)

        Returns:
            JSON text: per provider its status (updated, unchanged, fresh, failed), the
            instance types in use, as_of (download time), url, version and error; the number
            of instance types in the catalog now
        """
        report = prices.run(providers or None, source)
        return report_json(report, len(catalog()))

    return refresh_prices


class PublicApi:
    """The published functions, bound to the app's catalog and knowledge base (opened lazily)
    and, when given, its price refresher."""

    def __init__(
        self,
        catalog: Callable[[], Catalog],
        knowledge: Callable[[], KnowledgeSearch],
        prices: PriceRefresher | None = None,
    ) -> None:
        self.estimate_memory = _endpoint("estimate_memory", EstimateMemoryArgs, run_estimate_memory)
        self.rank_instances = _endpoint(
            "rank_instances", RankInstancesArgs, lambda a: run_rank_instances(a, catalog())
        )
        self.search_knowledge = _endpoint(
            "search_knowledge", SearchKnowledgeArgs, lambda a: run_search_knowledge(a, knowledge())
        )
        self.refresh_prices = None if prices is None else _refresh_endpoint(prices, catalog)

    def functions(self) -> list[Callable[..., str]]:
        found = [self.estimate_memory, self.rank_instances, self.search_knowledge]
        return found if self.refresh_prices is None else [*found, self.refresh_prices]
