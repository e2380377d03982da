"""The ranking reaches the shapes published runs ran on (../shared; skipped without it)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.published_runs.time_shapes import verdicts

# Runs the estimator still sizes above their card (the memory side's to close, not the plan
# search's): an 8B full fine-tune on one 24 GB card (torchtune's optimizer-in-backward and
# 8-bit paged AdamW), and 8B LoRA on 24 GB cards (estimates 1-3 GiB above the usable memory).
ESTIMATOR_REFUSALS = {
    "torchtune_llama31_8b_full_1x4090",
    "torchtune_llama31_8b_full_4090",
    "torchtune_llama31_8b_lora_1x4090",
    "torchtune_llama31_8b_lora_4090",
    "litgpt_llama31_8b_lora",
    "litgpt_mistral7b_lora",
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
