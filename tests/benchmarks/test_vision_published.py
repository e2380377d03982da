"""The image-model memory estimators against the published figures in vision_published."""

from __future__ import annotations

import pytest

from benchmarks.vision_published.run import evaluate, load_cases, main, summary
from tools.architectures.multimodal import find_multimodal
from tools.architectures.vision import VisionLanguageModel


def test_cases_are_cited_and_well_formed() -> None:
    cases = load_cases()
    assert len({c["id"] for c in cases}) == len(cases)
    assert len(cases) >= 20
    for case in cases:
        assert case["kind"] in ("fits", "exceeds", "measured")
        source = case["source"]
        assert source["repo"] and source["path"] and source["quote"]
        assert case["gib"] > 0 and case["figure"] and case["gpu"]
        if case["kind"] == "measured":
            assert case["stated"], case["id"]


def test_fit_statements_agree_and_measured_figures_meet_the_target() -> None:
    results = [evaluate(case) for case in load_cases()]
    checks = [r["id"] for r in results if r["kind"] != "measured" and not r["agrees"]]
    assert not checks, f"estimates that contradict a published fit statement: {checks}"
    total = summary(results)
    assert total["measured"] >= 10
    assert total["measured_within_20pct"] >= 0.8 * total["measured"]
    assert total["measured_within_10pct"] <= total["measured_within_20pct"]
    assert 0.8 <= total["median_ratio"] <= 1.2
    assert 0.8 <= total["median_measured_ratio"] <= 1.2


def test_vlm_and_diffusion_cases_both_run() -> None:
    cases = load_cases()
    vlm = [c for c in cases if isinstance(find_multimodal(c["model"]), VisionLanguageModel)]
    assert vlm and len(vlm) < len(cases)
    assert all(evaluate(c)["estimate_gib"] > 0 for c in vlm)


def test_runner_prints_a_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    cases = load_cases()
    assert sum(line.startswith(("ok ", "NO ")) for line in lines) == len(cases)
    agree = sum(line.startswith("ok ") for line in lines)
    assert lines[-1].startswith(f"{agree} of {len(cases)} agree")
    assert "within +-10 %" in lines[-1]
