"""The job panel's form: drawn from the job's fields, mirrors the JobSpec and amends it."""

from __future__ import annotations

from typing import get_args

import pytest

from assistant.web.form import (
    FORM_FIELDS,
    FormValues,
    assumed_defaults,
    changed_fields,
    form_hints,
    form_values,
    form_widgets,
    spec_from_form,
    values_from_widgets,
)
from tools.enums import Method, Precision, SpotPolicy
from tools.errors import InvalidInputError
from tools.job import JobSpec, Money
from tools.memory import EstimateInput

LLAMA_8B = "meta-llama/Llama-3.1-8B"


def test_widgets_come_from_the_job_fields() -> None:
    widgets = {w.field: w for w in form_widgets()}
    assert list(widgets) == list(FORM_FIELDS), "one widget per form field, in order"
    assert widgets["method"].choices == get_args(Method), "the job's own vocabulary"
    assert widgets["precision"].choices == get_args(Precision)
    assert widgets["spot"].choices == get_args(SpotPolicy)
    assert (widgets["seq_len"].kind, widgets["num_gpus"].kind) == ("count", "count")
    assert (widgets["budget"].kind, widgets["max_price_per_hour"].kind) == ("money", "money")
    assert (widgets["tokens"].kind, widgets["tokens"].scale) == ("number", 1_000_000)


def test_state_shows_in_the_form_with_tokens_in_millions_and_money_as_named() -> None:
    state = JobSpec(
        model="70B",
        method="qlora",
        tokens=2e8,
        spot="allowed",
        budget=Money(amount=50, currency="EUR"),
        providers=["aws"],
    )
    form = form_values(state)
    assert [form.values[name] for name in FORM_FIELDS] == [
        "70B",
        "qlora",
        None,
        None,
        None,
        None,
        200.0,
        50.0,
        None,
        "allowed",
    ], f"fields in {FORM_FIELDS} order"
    assert form.currency == "EUR", "money keeps the currency it was given in"


def test_widget_values_treat_blank_and_zero_as_open_and_round_counts() -> None:
    form = values_from_widgets(
        {
            "model": "  llama 3.1 8b ",
            "method": None,
            "precision": "",
            "seq_len": 4096.0,
            "micro_batch_size": 0,
            "num_gpus": 2.4,
            "tokens": 0,
            "budget": None,
            "max_price_per_hour": 2.5,
            "spot": "never",
        },
        currency=None,
    )
    assert form == FormValues(
        values={
            "model": "llama 3.1 8b",
            "method": None,
            "precision": None,
            "seq_len": 4096,
            "micro_batch_size": None,
            "num_gpus": 2,
            "tokens": None,
            "budget": None,
            "max_price_per_hour": 2.5,
            "spot": "never",
        },
        currency="USD",
    )


def test_form_amends_the_state_and_keeps_fields_it_does_not_show() -> None:
    before = JobSpec(
        model="70B",
        method="qlora",
        samples=10_000,
        providers=["runpod"],
        budget=Money(amount=40),
        seq_len=1024,
    )
    raw = {
        **form_values(before).values,
        "method": "full",
        "tokens": 50,
        "budget": None,
        "seq_len": None,
        "max_price_per_hour": 3,
    }
    after = spec_from_form(values_from_widgets(raw, "eur"), before)
    assert after.method == "full" and after.tokens == 50_000_000
    assert after.samples is None, "tokens replace samples"
    assert after.max_price_per_hour == Money(amount=3, currency="EUR"), "never converted"
    assert after.budget is None and after.seq_len is None, "cleared fields are open again"
    assert after.providers == ["runpod"], "fields the form does not show are kept"


def test_a_samples_workload_survives_a_form_without_tokens() -> None:
    before = JobSpec(model="7B", samples=5000)
    after = spec_from_form(form_values(before), before)
    assert after == before, "round trip through the form changes nothing"


def test_invalid_widget_values_name_the_field() -> None:
    with pytest.raises(InvalidInputError, match=r"^method: got 'sgd'"):
        spec_from_form(values_from_widgets({"method": "sgd"}, "USD"), JobSpec())


def test_open_fields_stay_blank_and_name_the_default_beside_them() -> None:
    state = JobSpec(model=LLAMA_8B, method="qlora", seq_len=1024)
    defaults = assumed_defaults(state)
    assert defaults["precision"] == "bf16-mixed" and defaults["spot"] == "never"
    assert "seq_len" not in defaults and "method" not in defaults, "given fields are not assumed"
    values = form_values(state).values
    assert [values[name] for name in FORM_FIELDS] == [
        LLAMA_8B,
        "qlora",
        None,
        1024,
        None,
        None,
        None,
        None,
        None,
        None,
    ], "only what the job holds: nothing anybody did not enter"
    assert form_hints(state, defaults, "en") == {
        "precision": "assumed: bf16 mixed precision",
        "micro_batch_size": "assumed: 1",
        "tokens": "assumed: 100",
        "spot": "assumed: no spot",
    }, "the defaults beside their fields, tokens in millions; no GPU count is assumed"
    assert form_hints(state, defaults, "tr")["spot"] == "varsayılan: spot yok"
    assert assumed_defaults(JobSpec(method="lora")) == {}, "no model: nothing is assumed"
    assert assumed_defaults(JobSpec(model="no such model xyz")) == {}, "invalid: blank"


def test_a_value_typed_equal_to_the_default_is_the_users() -> None:
    state = JobSpec(model=LLAMA_8B, method="qlora")
    untouched = spec_from_form(form_values(state), state)
    assert untouched == state, "a round trip through the form changes nothing"
    typed = FormValues(values={**form_values(state).values, "seq_len": 2048}, currency="USD")
    assert spec_from_form(typed, state).seq_len == 2048, "kept although it is the default"


def test_changed_fields_lists_what_a_form_edit_or_upload_changed() -> None:
    before = JobSpec(model="7B", method="lora", tokens=1e8)
    after = JobSpec(model="7B", method="full", seq_len=4096)
    assert changed_fields(before, after) == [
        ("method", "full"),
        ("seq_len", 4096),
        ("tokens", None),
    ]
    assert changed_fields(before, before) == []


def test_an_uploaded_model_stays_while_the_form_shows_its_name() -> None:
    arch = EstimateInput(model=LLAMA_8B).model.model_copy(
        update={"name": "your config", "source": "uploaded config.json"}
    )
    state = JobSpec(model=arch, method="lora")
    shown = form_values(state)
    assert shown.values["model"] == "your config", "the upload's name in the model field"
    assert spec_from_form(shown, state).model == arch, "the architecture itself is kept"
    renamed = FormValues(values={**shown.values, "model": "llama 3.1 70b"}, currency="USD")
    assert spec_from_form(renamed, state).model == "llama 3.1 70b", "a typed name replaces it"


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("num_gpus", float("inf"), "a finite number"),
        ("seq_len", float("nan"), "a finite number"),
        ("tokens", [1, 2], "a number"),
        ("micro_batch_size", True, "a number"),
        ("method", 3, "text"),
    ],
)
def test_a_widget_value_of_the_wrong_kind_is_refused_naming_the_field(
    field: str, value: object, valid: str
) -> None:
    """The fuzz test found an infinite GPU count and a numeric currency crashing the form
    handler; each is now a refusal that names the field."""
    with pytest.raises(InvalidInputError) as caught:
        values_from_widgets({field: value}, "USD")
    assert (caught.value.field, caught.value.valid) == (field, valid)
    with pytest.raises(InvalidInputError, match="currency: got -1"):
        values_from_widgets({}, -1)  # type: ignore[arg-type]
