"""The job panel's form mirrors the JobState and amends it."""

from __future__ import annotations

import pytest

from assistant.agent.state import JobState, Money
from assistant.web.form import (
    FORM_FIELDS,
    JobForm,
    assumed_defaults,
    form_from_state,
    form_from_values,
    form_values,
    state_from_form,
)


def test_state_shows_in_the_form_with_tokens_in_millions_and_money_as_named() -> None:
    state = JobState(model="70B", method="qlora", dataset_tokens=2e8, spot="allowed",
                     budget=Money(amount=50, currency="EUR"), providers=["aws"])  # fmt: skip
    form = form_from_state(state)
    assert form_values(form) == (
        "70B", "qlora", None, None, None, None, 200.0, 50.0, None, "EUR", "allowed",
    ), f"fields in {FORM_FIELDS} order"  # fmt: skip


def test_widget_values_treat_blank_and_zero_as_open_and_round_counts() -> None:
    form = form_from_values(model="  llama 3.1 8b ", method=None, precision="", seq_len=4096.0,
                            micro_batch_size=0, num_gpus=2.4, tokens_millions=0, budget=None,
                            max_price_per_hour=2.5, currency=None, spot="never")  # fmt: skip
    assert form == JobForm(model="llama 3.1 8b", seq_len=4096, num_gpus=2,
                           max_price_per_hour=2.5, spot="never")  # fmt: skip


def test_form_amends_the_state_and_keeps_slots_it_does_not_show() -> None:
    before = JobState(model="70B", method="qlora", dataset_samples=10_000, providers=["runpod"],
                      budget=Money(amount=40, currency="USD"), seq_len=1024)  # fmt: skip
    form = JobForm(model="70B", method="full", tokens_millions=50, max_price_per_hour=3,
                   currency="EUR")  # fmt: skip
    after = state_from_form(form, before)
    assert after.method == "full" and after.dataset_tokens == 50_000_000
    assert after.dataset_samples is None, "tokens replace samples"
    assert after.max_price_per_hour == Money(amount=3, currency="EUR"), "never converted"
    assert after.budget is None and after.seq_len is None, "cleared fields are open again"
    assert after.providers == ["runpod"], "slots the form does not show are kept"


def test_a_samples_workload_survives_a_form_without_tokens() -> None:
    before = JobState(model="7B", dataset_samples=5000)
    after = state_from_form(form_from_state(before), before)
    assert after == before, "round trip through the form changes nothing"


def test_invalid_widget_values_raise() -> None:
    with pytest.raises(ValueError, match="method"):
        form_from_values(method="sgd")


def test_open_slots_show_the_defaults_the_plan_used() -> None:
    state = JobState(model="meta-llama/Llama-3.1-8B", method="qlora", seq_len=1024)
    defaults = assumed_defaults(state)
    assert defaults["precision"] == "bf16-mixed" and defaults["spot"] == "never"
    assert "seq_len" not in defaults and "method" not in defaults, "given slots are not assumed"
    form = form_from_state(state, defaults)
    assert (form.method, form.precision, form.seq_len, form.spot) == (
        "qlora", "bf16-mixed", 1024, "never",
    ), "state first, then the plan's defaults"  # fmt: skip
    assert form.tokens_millions == 100.0, "the default 100M tokens, in millions"
    assert assumed_defaults(JobState(method="lora")) == {}, "no model: nothing is assumed"
    assert assumed_defaults(JobState(model="no such model xyz")) == {}, "invalid: blank"


def test_fields_still_showing_assumed_defaults_leave_their_slots_open() -> None:
    state = JobState(model="meta-llama/Llama-3.1-8B", method="qlora")
    defaults = assumed_defaults(state)
    shown = form_from_state(state, defaults)
    untouched = state_from_form(shown, state, defaults)
    assert untouched == state, "showing the defaults does not make them the user's choice"
    edited = state_from_form(shown.model_copy(update={"seq_len": 4096}), state, defaults)
    assert edited == state.model_copy(update={"seq_len": 4096}), "only the edited slot is set"
    chosen = JobState(model="7B", seq_len=2048)
    kept = state_from_form(form_from_state(chosen, assumed_defaults(chosen)), chosen, defaults)
    assert kept.seq_len == 2048, "a value the user gave stays even when it equals the default"
