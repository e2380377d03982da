"""The diffusion memory model against the published statements of benchmarks/vision_published."""

from __future__ import annotations

import pytest

from benchmarks.vision_published.run import evaluate, load_cases, main, summary


def test_cases_are_cited_and_well_formed() -> None:
    cases = load_cases()
    assert len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        assert case["kind"] in ("fits", "exceeds", "measured")
        assert case["source"]["repo"] and case["source"]["path"] and case["source"]["quote"]
        assert case["gib"] > 0


def test_every_published_statement_agrees() -> None:
    results = [evaluate(case) for case in load_cases()]
    disagree = [r["id"] for r in results if not r["agrees"]]
    assert not disagree, f"estimates that contradict a published statement: {disagree}"
    total = summary(results)
    assert total["agree"] == total["cases"]


def test_runner_prints_a_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith(("ok ", "NO ")) for line in lines) == len(load_cases())
    assert lines[-1].startswith(f"{len(load_cases())} of {len(load_cases())} agree")
