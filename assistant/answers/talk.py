"""Short answers that need no tool: what GPU Advisor covers (out of scope), an introduction
(small talk), what an amendment changed, and the question when an amendment said nothing the
job could take. None of them writes a figure of its own.
"""

from __future__ import annotations

from assistant.answers.job import field_value
from assistant.answers.parts import Answer, Text
from tools.advice import ResolvedJob
from tools.job import JOB_FIELDS, JobSpec

__all__ = ["changes_line", "compose_amend_unclear", "compose_hello", "compose_scope"]

_SKIPPED = frozenset({"lora_alpha", "lora_dropout", "lora_targets"})


def compose_scope(lang: str, serving: bool, model: str | None) -> Answer:
    """What GPU Advisor covers and does not, and the nearest thing it can do."""
    t = Text(lang)
    lead = t.msg("scope.serving" if serving else "scope.other")
    offer = t.msg("scope.offer_model", model=model) if model else t.msg("scope.offer")
    return t.answer([lead, t.msg("scope.covers"), offer])


def compose_hello(lang: str) -> Answer:
    """Two lines about GPU Advisor, and example requests (with no figures)."""
    t = Text(lang)
    examples = "\n".join(f"- {t.msg(f'hello.example_{i}')}" for i in (1, 2, 3, 4))
    return t.answer([t.msg("hello.intro"), f"{t.msg('hello.try')}\n{examples}"])


def compose_amend_unclear(lang: str) -> Answer:
    """Nothing the job could take was understood: say so, ask one question."""
    t = Text(lang)
    return t.answer([t.msg("amend.unclear")])


def changes_line(t: Text, before: JobSpec, after: JobSpec, prior_plan: ResolvedJob | None) -> str:
    """'Changed: method QLoRA → LoRA; sequence length 2,048 → 8,192.' (old values the user gave,
    or the default the previous answer assumed, said so)."""
    assumed = prior_plan.assumed_values() if prior_plan is not None else {}
    items = []
    for name in JOB_FIELDS:
        old, new = getattr(before, name), getattr(after, name)
        if old == new or name in _SKIPPED:
            continue
        was = _value(t, name, old) if old is not None else _default(t, name, assumed)
        now = _value(t, name, new) if new is not None else t.msg("amend.open")
        items.append(t.msg("amend.item", field=t.label("field", name), old=was, new=now))
    return t.msg("amend.changed", items=t.join(items)) if items else ""


def _value(t: Text, name: str, value: object) -> str:
    if name == "model":
        return str(value if isinstance(value, str) else getattr(value, "name", value))
    return field_value(t, name, value)


def _default(t: Text, name: str, assumed: dict[str, object]) -> str:
    if name in assumed and not isinstance(assumed[name], int | float):
        return f"{field_value(t, name, assumed[name])} ({t.msg('amend.default')})"
    return t.msg("amend.default")
