"""The agent: one `create_agent` graph over the six tools, with either of two brains.

The graph's model is the offline policy (`assistant.agent.policy.OfflinePolicy`) or any tool-calling
chat model made by `init_chat_model` from Settings. `AdvisorMiddleware.wrap_model_call` is the
only place the two meet:

- the offline policy gets the turn's `TurnContext` bound to it;
- an LLM gets the system prompt (assistant/agent/prompts/system.md) in the turn's language; if its
  endpoint is unreachable, times out (`assistant.agent.endpoint.LLMTimeouts`), answers with an
  error status (5xx, 429, 401, ...) or with something that is not a reply, this and every later
  model step of the turn go to the offline policy, the turn carries a one-line notice, and one
  log line (credentials removed) names the cause;
- every final answer is checked against this turn's tool results, the passages they retrieved
  and the user's messages; an LLM answer also against the money-and-size guard that keeps a
  planted instruction from putting a price in it (`assistant.agent.evidence`). An LLM answer that
  fails is regenerated once, naming the offending numbers; if it fails again it is replaced by
  the offline policy's composition, and the state records that (for `TurnResult.grounded`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any, NotRequired, cast

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from assistant.agent.endpoint import LLMTimeouts, chat_model_kwargs
from assistant.agent.events import Brain
from assistant.agent.evidence import ground, turn_evidence
from assistant.agent.policy import OfflinePolicy
from assistant.agent.turn import TurnContext
from assistant.answers import compose
from assistant.answers.i18n import language_name
from assistant.grounding.check import GroundingReport
from assistant.settings import Settings
from tools.errors import InvalidInputError
from tools.redaction import redact

__all__ = [
    "AdvisorMiddleware",
    "AdvisorState",
    "build_agent",
    "endpoint_errors",
    "make_chat_model",
]

log = logging.getLogger("assistant.agent.graph")

LLM_MAX_RETRIES = 0  # a failed call falls back at once; a retry would double the wait
MAX_LOGGED_CAUSE = 300  # characters of an endpoint failure kept in its log line


class AdvisorState(AgentState[Any]):
    """The agent state plus what the turn records about its brain and its answer's grounding."""

    brain: NotRequired[Brain]
    grounding: NotRequired[dict[str, Any]]
    replaced: NotRequired[dict[str, Any]]
    notices: NotRequired[list[dict[str, str]]]
    repairs: NotRequired[int]


# --------------------------------------------------------------------------- prompts


@cache
def _prompt_file(name: str) -> str:
    return (
        resources.files("assistant.agent").joinpath(f"prompts/{name}").read_text(encoding="utf-8")
    )


def system_prompt(lang: str) -> str:
    """The LLM's system prompt for an answer in `lang`."""
    return _prompt_file("system.md").format(language_name=language_name(lang, "en"))


def repair_prompt(lang: str, numbers: Sequence[str]) -> str:
    """The request to rewrite an answer whose `numbers` trace to nothing."""
    return _prompt_file("repair.md").format(
        numbers=", ".join(numbers), language_name=language_name(lang, "en")
    )


# --------------------------------------------------------------------------- the chat model


@cache
def endpoint_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean 'the model endpoint did not serve this call': unreachable, timed
    out, an error status (5xx, 429, 401, 403, 404, ...) or a reply that is not one. LangChain's
    provider-neutral `ModelError` covers what the provider packages map; the SDKs' own base
    errors and httpx's cover the rest (the transport's `EndpointReplyError` is an httpx error)."""
    from langchain_core.exceptions import ModelError

    found: list[type[BaseException]] = [ConnectionError, TimeoutError, ModelError]
    for module, names in (
        ("httpx", ("HTTPError",)),
        ("httpx2", ("HTTPError",)),  # the fork openai 3 is built on
        ("openai", ("APIError",)),  # connection, timeout, status and validation errors
        ("anthropic", ("APIError",)),
    ):
        try:
            imported = __import__(module)
        except ImportError:
            continue
        found.extend(getattr(imported, name) for name in names if hasattr(imported, name))
    return tuple(found)


def describe_failure(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """One line naming an endpoint failure: the exception's type and first message line, then
    those of its root cause (what the SDK wrapped: a timeout, a refused connection, a reply that
    was not one), credentials removed, at most `MAX_LOGGED_CAUSE` characters."""
    text = _first_line(exc)
    root, seen = exc, 0
    while (root.__cause__ or root.__context__) is not None and seen < 10:
        root, seen = root.__cause__ or root.__context__ or root, seen + 1
    if root is not exc:
        text += f"; cause: {_first_line(root)}"
    text = redact(text, secrets)
    return text if len(text) <= MAX_LOGGED_CAUSE else text[: MAX_LOGGED_CAUSE - 1] + "…"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


LOCAL_ENDPOINT_KEY = "unused-by-local-endpoint"


def make_chat_model(
    settings: Settings,
    spec: str | None = None,
    *,
    timeouts: LLMTimeouts | None = None,
    max_retries: int = LLM_MAX_RETRIES,
) -> BaseChatModel | None:
    """The LLM that `spec` (or `settings.llm`) names, or None for the offline policy.

    `spec` is an init_chat_model spec such as 'openai:gpt-4o' or 'anthropic:claude-sonnet-4-5';
    an OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio) is 'openai:<model>' with
    `llm_base_url`. The provider packages are the optional extra `gpu-advisor[llm]`. Calls are
    bounded by `timeouts` (default: the Settings' `llm_*_timeout_s`) and streamed where the
    provider streams, so the first-byte bound holds however long the answer.
    """
    name = spec or settings.llm
    if not name or name == "offline":
        return None
    from langchain.chat_models import init_chat_model

    provider = name.split(":", 1)[0] if ":" in name else ""
    bounds = timeouts or settings.llm_timeouts()
    kwargs = chat_model_kwargs(provider, bounds, max_retries)
    if settings.llm_base_url:
        kwargs["base_url"] = settings.llm_base_url
    if settings.llm_api_key is not None:
        kwargs["api_key"] = settings.llm_api_key.get_secret_value()
    elif settings.llm_base_url:
        # Self-hosted OpenAI-compatible servers (vLLM, Ollama, llama.cpp, LM Studio) ignore the
        # key, but the client refuses to start without one.
        kwargs["api_key"] = LOCAL_ENDPOINT_KEY
    try:
        return init_chat_model(name, **kwargs)
    except ImportError as exc:
        raise InvalidInputError(
            "llm",
            name,
            f"a provider whose package is installed ({exc.name or exc}); "
            "install the extra: pip install 'gpu-advisor[llm]'",
        ) from None
    except ValueError:
        raise InvalidInputError(
            "llm", name, "'offline' or 'provider:model', e.g. 'openai:gpt-4o'"
        ) from None
    except Exception as exc:  # the provider's own configuration errors (a missing key, ...)
        said = redact(f"{type(exc).__name__}: {exc}", settings.secrets())
        raise InvalidInputError(
            "llm", name, f"a model the provider can set up; it said: {said}"
        ) from None


# --------------------------------------------------------------------------- grounding


def _final_message(response: ModelResponse[Any]) -> AIMessage | None:
    """The answer in a model response: an AIMessage without tool calls."""
    for message in reversed(response.result):
        if isinstance(message, AIMessage):
            return None if message.tool_calls else message
    return None


def _report(report: GroundingReport) -> dict[str, Any]:
    return {"grounded": report.grounded, "ungrounded_numbers": list(report.ungrounded_numbers)}


# --------------------------------------------------------------------------- the middleware

Handler = Callable[[ModelRequest[TurnContext]], ModelResponse[Any]]


class AdvisorMiddleware(AgentMiddleware[AdvisorState, TurnContext]):
    """Chooses the brain for each model step, falls back, and checks every final answer."""

    state_schema = AdvisorState

    def __init__(self, policy: OfflinePolicy, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.policy = policy
        self.secrets = [s for s in secrets if s]

    def wrap_model_call(
        self, request: ModelRequest[TurnContext], handler: Handler
    ) -> ExtendedModelResponse[Any]:
        ctx = _context(request)
        brain = _state(request).get("brain")
        if isinstance(request.model, OfflinePolicy) or brain == "fallback":
            return self._offline(request, handler, ctx, brain or "offline", {})
        llm_request = request.override(system_message=SystemMessage(system_prompt(ctx.lang)))
        try:
            response = handler(llm_request)
        except endpoint_errors() as exc:
            return self._fall_back(request, handler, ctx, exc)
        return self._checked_llm(request, llm_request, handler, ctx, response)

    def _offline(
        self,
        request: ModelRequest[TurnContext],
        handler: Handler,
        ctx: TurnContext,
        brain: Brain,
        update: dict[str, Any],
    ) -> ExtendedModelResponse[Any]:
        offline = request.override(
            model=self.policy, model_settings={"turn": ctx}, system_message=None
        )
        response = handler(offline)
        final = _final_message(response)
        update = {"brain": brain, **update}
        if final is not None:
            evidence = turn_evidence(request.messages)
            update["grounding"] = _report(ground(final.text, evidence, strict=False, lang=ctx.lang))
        return ExtendedModelResponse(response, Command(update=update))

    def _fall_back(
        self,
        request: ModelRequest[TurnContext],
        handler: Handler,
        ctx: TurnContext,
        exc: BaseException,
    ) -> ExtendedModelResponse[Any]:
        log.warning(
            "model endpoint failed (%s); answering offline", describe_failure(exc, self.secrets)
        )
        notices = [
            *_state(request).get("notices", []),
            {"kind": "fallback", "text": compose.compose_fallback_notice(ctx.lang)},
        ]
        return self._offline(request, handler, ctx, "fallback", {"notices": notices})

    def _checked_llm(
        self,
        request: ModelRequest[TurnContext],
        llm_request: ModelRequest[TurnContext],
        handler: Handler,
        ctx: TurnContext,
        response: ModelResponse[Any],
    ) -> ExtendedModelResponse[Any]:
        repairs = _state(request).get("repairs", 0)
        for attempt in range(2):
            final = _final_message(response)
            if final is None:
                return ExtendedModelResponse(
                    response, Command(update={"brain": "llm", "repairs": repairs})
                )
            report = ground(final.text, turn_evidence(request.messages), strict=True, lang=ctx.lang)
            if report.grounded:
                return ExtendedModelResponse(
                    response,
                    Command(
                        update={
                            "brain": "llm",
                            "repairs": repairs,
                            "grounding": _report(report),
                        }
                    ),
                )
            log.info(
                "ungrounded LLM answer (attempt %d): %s", attempt + 1, report.ungrounded_numbers
            )
            if repairs >= 1:
                return self._replace(request, handler, ctx, report)
            repairs += 1
            retry = llm_request.override(
                messages=[
                    *request.messages,
                    final,
                    HumanMessage(repair_prompt(ctx.lang, report.ungrounded_numbers)),
                ]
            )
            try:
                response = handler(retry)
            except endpoint_errors() as exc:
                return self._fall_back(request, handler, ctx, exc)
        raise AssertionError("unreachable: the second failure replaces the answer")

    def _replace(
        self,
        request: ModelRequest[TurnContext],
        handler: Handler,
        ctx: TurnContext,
        report: GroundingReport,
    ) -> ExtendedModelResponse[Any]:
        notices = [
            *_state(request).get("notices", []),
            {"kind": "grounding_replaced", "text": compose.compose_grounding_notice(ctx.lang)},
        ]
        update = {"notices": notices, "replaced": _report(report), "repairs": 1}
        return self._offline(request, handler, ctx, "fallback", update)


def _state(request: ModelRequest[TurnContext]) -> AdvisorState:
    return cast(AdvisorState, request.state)


def _context(request: ModelRequest[TurnContext]) -> TurnContext:
    ctx = request.runtime.context if request.runtime is not None else None
    if not isinstance(ctx, TurnContext):
        raise TypeError("the advisor graph runs with context=TurnContext(...)")
    return ctx


# --------------------------------------------------------------------------- the graph


def build_agent(
    tools: Sequence[BaseTool],
    policy: OfflinePolicy,
    chat_model: BaseChatModel | None = None,
    secrets: Iterable[str] = (),
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The one agent graph: `chat_model` (or the policy) as the model, the advisor middleware.
    `secrets` (`Settings.secrets()`) are removed from every log line the middleware writes."""
    return create_agent(
        model=chat_model or policy,
        tools=list(tools),
        middleware=[AdvisorMiddleware(policy, secrets)],
        context_schema=TurnContext,
        name="gpu_advisor",
    )
