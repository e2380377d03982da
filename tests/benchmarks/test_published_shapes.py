"""The ranking reaches the shapes published runs ran on (../shared; skipped without it)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.published_runs.time_shapes import verdicts


def test_published_shapes_are_offered(shared_dir: Path) -> None:
    rows = verdicts(shared_dir)
    assert len(rows) >= 60, f"runs checked: {len(rows)}"
    # every run ran on its shape: none may be refused for memory (the ranking sizes each plan
    # with the run's stack and mechanisms, and judges it by what the card must hold)
    refused = [run for run, verdict in rows if verdict.startswith("refused (memory)")]
    assert refused == [], f"refused for memory: {refused}"
    offload = [run for run, verdict in rows if "[offload" in verdict]
    assert offload == [], f"CPU offload chosen where the run had none: {offload}"
    skipped = [run for run, verdict in rows if verdict.startswith("skipped")]
    assert skipped == [], f"runs not checked: {skipped}"
