"""The bare training setup the estimator's and the ranking's mechanism tests start from.

The job defaults (`tools.job.defaults`) are what a user gets; a test of one mechanism states
every setting it relies on instead, so a changed default cannot move its golden figures: every
weight trained, no recomputation, plain AdamW, unless the test says otherwise.
"""

from __future__ import annotations

from typing import Any

from tools.memory import EstimateInput

BARE: dict[str, Any] = {"method": "full", "gradient_checkpointing": "none", "optimizer": "adamw"}


def bare_input(**settings: Any) -> EstimateInput:
    """An EstimateInput of `settings` over the bare setup."""
    return EstimateInput(**{**BARE, **settings})


# Llama 3.1 8B's published config.json dimensions (meta-llama/Llama-3.1-8B), as a user uploads
# them: 8,030,261,248 parameters; `_name_or_path` names the upload.
LLAMA_8B_CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "_name_or_path": "my-llama",
}
