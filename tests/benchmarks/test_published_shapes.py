"""The ranking reaches the shapes published runs ran on (../shared; skipped without it)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.published_runs.time_shapes import verdicts

# Runs the ranking still sizes above their card, with the stack and mechanisms the memory
# benchmark reads from each case: torchtune's 8B full fine-tunes on one 24 GB card (the
# ranking sizes a single GPU as autocast over fp32 weights, where the run kept pure bf16 with
# the optimizer step in backward) and its 8B LoRA with the CPU-offload plan.
ESTIMATOR_REFUSALS = {
    "torchtune_llama31_8b_full_1x4090",
    "torchtune_llama31_8b_full_4090",
    "torchtune_llama31_8b_lora_1x4090",
}


def test_published_shapes_are_offered(shared_dir: Path) -> None:
    rows = verdicts(shared_dir)
    assert len(rows) >= 60, f"runs checked: {len(rows)}"
    refused = {run for run, verdict in rows if verdict.startswith("refused (memory)")}
    assert refused <= ESTIMATOR_REFUSALS, (
        f"newly refused for memory: {refused - ESTIMATOR_REFUSALS}"
    )
    offload = [run for run, verdict in rows if "[offload" in verdict]
    assert offload == [], f"CPU offload chosen where the run had none: {offload}"
    skipped = [run for run, verdict in rows if verdict.startswith("skipped")]
    assert skipped == [], f"runs not checked: {skipped}"
