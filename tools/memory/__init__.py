"""The training-memory estimator: `estimate(EstimateInput(...)) -> MemoryEstimate`.

`inputs` defines `EstimateInput` (one resolved training setup, checked), `estimator` the
estimate itself, `results` what it returns. The rule modules count one part each, every constant
with its source: `constants` byte counts, `dtypes` saved-tensor types, `inventory` a model's
parameter tensors and LoRA adapters, `model_states` weights, gradients and optimizer state per
GPU, `optimizer_step` the step's temporaries, `activations` what autograd keeps, `peak` the
moments of a step, `assemble` the glue, `assumptions` the sentences, `calibration` the band.
"""

from tools.memory.estimator import estimate, estimate_for
from tools.memory.inputs import LORA_METHODS, EstimateInput
from tools.memory.results import MemoryBreakdown, MemoryEstimate

__all__ = [
    "LORA_METHODS",
    "EstimateInput",
    "MemoryBreakdown",
    "MemoryEstimate",
    "estimate",
    "estimate_for",
]
