"""The notes a senior engineer adds under the ranked options: stale prices grouped by provider,
marketplace offers, GPUs without bf16, AMD's ROCm caveat."""

from __future__ import annotations

from datetime import date

import pytest

from assistant.answers.job import recommendation_notes
from assistant.answers.parts import Text
from tests.fakes.artifacts import make_option, make_ranking
from tools.languages import LANGUAGES
from tools.ranking.models import RankedOption


def _vast(rank: int, as_of: date, days: int) -> RankedOption:
    return make_option(
        rank, instance_id=f"vast/{rank}x-RTX_4090", provider="vast",
        instance_type=f"{rank}x-RTX_4090", gpu="RTX4090", as_of=as_of,
        price_age_days=days, stale=True,
    )  # fmt: skip


def test_stale_prices_of_one_provider_make_one_note_dated_by_the_oldest() -> None:
    options = [_vast(1, date(2026, 4, 29), 217), _vast(2, date(2026, 3, 1), 276)]
    notes = recommendation_notes(Text("en"), make_ranking(options))
    stale = [n for n in notes if "out of date" in n]
    assert stale == [
        "The prices of the 2 vast options shown date from Mar 1, 2026 (276 days ago) and may be"
        " out of date: check them before renting, or refresh the catalog (in the app:"
        " “Refresh prices” at the top; on the command line: `gpu-advisor catalog refresh`)."
    ], "the web's button first: web users have no command line (issue 26, defect 8)"


def test_a_single_stale_option_is_named_and_a_fresh_one_gets_no_note() -> None:
    fresh = make_option(2, price_age_days=0, stale=False)
    notes = recommendation_notes(
        Text("en"), make_ranking([_vast(1, date(2026, 4, 29), 217), fresh])
    )
    stale = [n for n in notes if "out of date" in n]
    assert len(stale) == 1 and "vast 1x-RTX_4090" in stale[0] and "(217 days ago)" in stale[0]
    assert "aws" not in stale[0]


def test_no_clock_no_stale_note() -> None:
    notes = recommendation_notes(Text("en"), make_ranking([make_option(1)]))
    assert not [n for n in notes if "out of date" in n]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_stale_note_in_every_language_carries_count_date_and_age(lang: str) -> None:
    options = [_vast(1, date(2026, 4, 29), 217), _vast(2, date(2026, 4, 29), 217)]
    t = Text(lang)
    notes = recommendation_notes(t, make_ranking(options))
    dated = [n for n in notes if t.date(date(2026, 4, 29)) in n]
    assert len(dated) == 1, notes
    assert "217" in dated[0] and "vast" in dated[0] and "gpu-advisor catalog refresh" in dated[0]
