"""Fit checks: the verdict against the card, and tight where the ranking's margin is not kept."""

from __future__ import annotations

import pytest

from tools.fit import check_fit
from tools.job import JobSpec
from tools.units import GIB

JOB = JobSpec(model="meta-llama/Llama-3.1-8B", method="lora", seq_len=2048, micro_batch_size=2)


@pytest.mark.parametrize(
    ("scale", "fits", "tight"),
    [(1.20, True, False), (1.05, True, True), (0.95, False, False)],
)
def test_the_verdict_follows_the_need_and_the_margin(scale: float, fits: bool, tight: bool) -> None:
    need = check_fit(JOB, 1000).need_bytes
    check = check_fit(JOB, need * scale / GIB)
    assert check.need_bytes == need, "the need does not depend on the card"
    assert (check.fits, check.tight, check.margin) == (fits, tight, 0.10)
    assert check.spare_bytes == check.vram_bytes - need


def test_the_margin_is_the_callers() -> None:
    need = check_fit(JOB, 1000).need_bytes
    assert not check_fit(JOB, need * 1.05 / GIB, margin=0.04).tight
