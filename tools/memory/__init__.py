"""The training-memory estimator: `estimate(EstimateInput(...)) -> MemoryEstimate`.

`inputs` defines `EstimateInput` (one resolved training setup, checked), `estimator` the
estimate itself, `results` what it returns. The rule modules count one part each, every constant
with its source: `constants` byte counts, `dtypes` saved-tensor types, `states/` the model states
(a model's parameter tensors and LoRA adapters, weights, gradients and optimizer state per GPU,
the optimizer step's temporaries), `layers` what one transformer layer saves, `activations`
what autograd keeps for the whole model, `peak` the moments of a step, `assemble` the glue,
`assumptions` the sentences, `bands/` the uncertainty band (from published GPU runs, and the CPU
calibration's). `stacks/` holds how each training stack allocates (its profile of mechanisms,
loss implementations, checkpointing policies, DeepSpeed's buffers, QLoRA's 4-bit layers, the
reported figures); `images/` diffusion and vision-language fine-tuning.
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
