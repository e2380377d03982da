"""The job panel's form: a few fields of the job (`tools.job.JobSpec`), mirrored both ways.

The form shows the fields a person most often changes (`FORM_FIELDS`); each widget is described
by the job field itself (`form_widgets`: its vocabulary for a choice, whole numbers for counts,
money with the currency the conversation named), so the app draws the form from the job model.
Training tokens are shown in millions. A blank field (or 0) is a field left open; the job then
resolves it with its stated default, which the form names beside the field ("assumed: 2,048",
`form_hints`) without filling it in, so the form only ever holds what the user or the
conversation set. Money keeps its currency: the form shows it and never converts it.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from assistant.answers.job import field_value
from assistant.answers.parts import Text
from assistant.web.ui_strings import ui_format
from tools.advice import resolve_job
from tools.catalog.instances import Catalog
from tools.errors import AdvisorError, InvalidInputError
from tools.job import FieldName, JobSpec, JobUpdate, Money, apply_update

__all__ = [
    "FORM_FIELDS",
    "FormValues",
    "FormWidget",
    "assumed_defaults",
    "changed_fields",
    "edited_fields",
    "form_hints",
    "form_values",
    "form_widgets",
    "spec_from_form",
    "values_from_widgets",
]

TOKENS_UNIT = 1_000_000  # the form counts training tokens in millions
FORM_FIELDS: tuple[FieldName, ...] = (
    "model",
    "method",
    "precision",
    "seq_len",
    "micro_batch_size",
    "num_gpus",
    "tokens",
    "budget",
    "max_price_per_hour",
    "spot",
)
_NO_HINT = (
    "model",
    "num_gpus",
)  # no default to name: the model is asked for; GPUs are chosen per row
CURRENCIES = ("USD", "EUR", "GBP", "CHF", "TRY")  # offered by the form's currency choice
WidgetKind = Literal["model", "choice", "count", "number", "money"]


class FormWidget(BaseModel):
    """How the app draws one form field: the kind of widget, its choices, its scale."""

    model_config = ConfigDict(frozen=True)

    field: FieldName
    kind: WidgetKind
    choices: tuple[str, ...] = ()
    scale: int = Field(1, description="display unit: 1, or 1,000,000 for tokens in millions")


class FormValues(BaseModel):
    """The widgets' values: one per form field (display units), and the money's currency."""

    model_config = ConfigDict(frozen=True)

    values: dict[str, Any]
    currency: str = "USD"


def _inner(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def form_widgets() -> list[FormWidget]:
    """One widget per form field, in order, described by the job field it edits."""
    widgets = []
    for name in FORM_FIELDS:
        kind = _inner(JobSpec.model_fields[name].annotation)
        if name == "model":
            widgets.append(FormWidget(field=name, kind="model"))
        elif get_origin(kind) is Literal:
            widgets.append(FormWidget(field=name, kind="choice", choices=get_args(kind)))
        elif kind is Money:
            widgets.append(FormWidget(field=name, kind="money"))
        elif name == "tokens":
            widgets.append(FormWidget(field=name, kind="number", scale=TOKENS_UNIT))
        else:
            widgets.append(FormWidget(field=name, kind="count" if kind is int else "number"))
    return widgets


def _open(value: Any) -> bool:
    """Blank text, None and non-positive numbers mean 'left open'."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value <= 0


def values_from_widgets(raw: Mapping[str, Any], currency: str | None) -> FormValues:
    """Raw widget values (blank or 0 = open) as form values; counts rounded, text trimmed."""
    values: dict[str, Any] = {}
    for widget in form_widgets():
        value = raw.get(widget.field)
        if _open(value):
            values[widget.field] = None
            continue
        values[widget.field] = _widget_value(widget, value)
    if currency is not None and not isinstance(currency, str):
        raise InvalidInputError("currency", currency, "one of " + ", ".join(CURRENCIES))
    return FormValues(values=values, currency=(currency or "USD").strip().upper())


def _widget_value(widget: FormWidget, value: Any) -> Any:
    """One widget's raw value as the form's: text trimmed, numbers finite (counts rounded); a
    value of the wrong kind is refused naming the field (an API client can send anything)."""
    if widget.kind in ("model", "choice"):
        if not isinstance(value, str):
            raise InvalidInputError(widget.field, value, "text")
        return value.strip()
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidInputError(widget.field, value, "a number")
    try:
        number = float(value)
    except ValueError:
        raise InvalidInputError(widget.field, value, "a number") from None
    if not math.isfinite(number):
        raise InvalidInputError(widget.field, value, "a finite number")
    if widget.kind == "count":
        return round(number)
    return value.strip() if isinstance(value, str) else value


def form_values(spec: JobSpec) -> FormValues:
    """The form mirroring `spec`: each field what the job holds (blank when open; a samples
    workload shows no token count)."""
    shown = spec.filled()
    money = spec.budget or spec.max_price_per_hour
    values: dict[str, Any] = {}
    for widget in form_widgets():
        value = shown.get(widget.field)
        if widget.field == "model":
            value = spec.model_label()
        elif widget.kind == "money":
            value = value.amount if isinstance(value, Money) else None
        elif widget.scale != 1 and isinstance(value, int | float):
            value = round(value / widget.scale, 3)
        values[widget.field] = value
    return FormValues(values=values, currency=money.currency if money else "USD")


def form_hints(spec: JobSpec, defaults: Mapping[str, object], lang: str) -> dict[str, str]:
    """'assumed: 2,048' for each open form field the job resolves with a default (`defaults`,
    see `assumed_defaults`), worded as the answers word values, in `lang`."""
    t = Text(lang)
    hints: dict[str, str] = {}
    for widget in form_widgets():
        value = defaults.get(widget.field)
        if getattr(spec, widget.field) is not None or value is None or widget.field in _NO_HINT:
            continue
        if widget.scale != 1 and isinstance(value, int | float):
            value = round(value / widget.scale, 3)
        hints[widget.field] = ui_format(
            lang, "form_assumed", value=field_value(t, widget.field, value)
        )
    return hints


def edited_fields(before: JobSpec, now: JobSpec) -> dict[str, Any]:
    """Every job field (not only the form's) a form edit or upload changed since `before`, with
    its new value: what a turn that ran meanwhile applies over its own job."""
    if now == before:
        return {}
    return {name: getattr(now, name) for name in type(now).model_fields
            if getattr(now, name) != getattr(before, name)}  # fmt: skip


def spec_from_form(form: FormValues, previous: JobSpec) -> JobSpec:
    """`previous` amended by the form: filled fields set theirs, open fields clear theirs, and
    fields the form does not show (optimizer, providers, regions, ...) are kept. An uploaded
    model stays while the form shows its name. Bad values raise an InvalidInputError naming the
    field."""
    updates: dict[str, Any] = {}
    for widget in form_widgets():
        value = form.values.get(widget.field)
        if value is not None and widget.kind == "money":
            value = Money(amount=value, currency=form.currency)
        elif isinstance(value, int | float) and widget.scale != 1:
            value = round(value * widget.scale)
        updates[widget.field] = value
    if updates["model"] is not None and updates["model"] == previous.model_label():
        updates["model"] = previous.model  # the uploaded architecture the name stands for
    if updates["tokens"] is None and previous.samples is not None:
        del updates["tokens"]  # a samples workload has no token field to clear
    given = {k: v for k, v in updates.items() if v is not None}
    cleared = [k for k, v in updates.items() if v is None]
    return apply_update(previous, JobUpdate.parse({**given, "clear": cleared}))


def changed_fields(before: JobSpec, after: JobSpec) -> list[tuple[FieldName, object]]:
    """The form fields whose value differs between two jobs, with the new value (None when the
    field was cleared), in form order."""
    changes: list[tuple[FieldName, object]] = []
    for name in FORM_FIELDS:
        old, new = getattr(before, name), getattr(after, name)
        if name == "model":
            old, new = before.model_label(), after.model_label()
        if old != new:
            changes.append((name, new))
    return changes


def assumed_defaults(spec: JobSpec, catalog: Catalog | None = None) -> dict[str, object]:
    """The defaults the job uses for the fields `spec` leaves open (none without a model, or when
    the job is invalid: the form then shows the open fields blank)."""
    try:
        resolved = resolve_job(spec, catalog, strict=False)
    except AdvisorError:
        return {}
    return resolved.assumed_values() if resolved.ready else {}
