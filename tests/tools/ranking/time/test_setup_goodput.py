"""Setup hours before the first step and the hardware-failure rate, by hand."""

from __future__ import annotations

import pytest

from tools.ranking.costs import SpotAssumptions, expected_spot_run
from tools.ranking.time.goodput import GoodputAssumptions, failure_rate_per_node_hour
from tools.ranking.time.setup import SetupAssumptions, setup_hours

N7 = 6_738_415_616


def test_setup_hours_by_hand() -> None:
    a = SetupAssumptions()
    # 5 + 10 min = 900 s; weights 2 B x N = 13,476,831,232 B and data 4 B x 1e8 tokens = 4e8 B
    # at 2 Gbit/s = 2.5e8 B/s: 55.50732493 s; 955.50732493 s = 0.26541870 h
    assert setup_hours(N7, 1e8, 1, False, a) == pytest.approx(955.50732493 / 3600), "fine-tune"
    # pretraining downloads no weights; four nodes stage a quarter of the data each
    assert setup_hours(N7, 1e8, 4, True, a) == pytest.approx((900 + 1e8 / 2.5e8) / 3600)
    bare = SetupAssumptions(provisioning_minutes=0, environment_minutes=0,
                            weight_bytes_per_param=0, data_bytes_per_token=0)  # fmt: skip
    assert setup_hours(N7, 1e8, 1, False, bare) == 0.0, "everything can be switched off"


def test_failure_rate_and_goodput() -> None:
    # Llama 3: 419 unexpected interruptions in 54 days x 24 h x 16,384 GPUs
    rate = 419 / (54 * 24 * 16_384)
    assert GoodputAssumptions().failures_per_gpu_hour == pytest.approx(rate), "per GPU-hour"
    assert failure_rate_per_node_hour(8, GoodputAssumptions()) == pytest.approx(8 * rate)
    # A 2,048-node run (16,384 GPUs) of 100 h writing a 5.7 TB checkpoint over all nodes keeps
    # about 93 % of its time training, near Llama 3's ">90% effective training time".
    terms = SpotAssumptions(preemption_rate_per_hour=0.0)
    run = expected_spot_run(100.0, 5.7e12, 2048, terms, extra_rate_per_hour=8 * rate)
    assert 0.90 < 100.0 / run.wall_hours < 0.95, f"goodput {100.0 / run.wall_hours:.3f}"
    one = expected_spot_run(10.0, 1e10, 1, terms, extra_rate_per_hour=8 * rate)
    assert one.wall_hours - 10.0 < 0.01, "a day's run on one node barely notices failures"
