"""Other calculators' formulas, restated so the same cases can be run through them.

Neither is imported: Accelerate and DeepSpeed are not dependencies of GPU Advisor, and each
formula is a few lines, restated here in our own code with its source.
"""

from __future__ import annotations

from benchmarks.memory_calibration.cases import Case

FP32 = 4


def accelerate_training_peak(total_params: int, case: Case) -> int:
    """`accelerate estimate-memory`'s "Training using Adam (Peak vRAM)" for the case's dtype.

    Source: huggingface/accelerate, src/accelerate/commands/estimate.py (v1.15),
    `estimate_training_usage(bytes, mixed_precision)` with `bytes` the fp32 size of the model
    (4 bytes per parameter). For "float32" it returns model = gradients = 1x, optimizer = 2x and
    step = 4x that size; for "float16"/"bfloat16" model = 1x, gradients = 1.5x, optimizer = step =
    2x. `gather_data` shows the largest of the four, so the peak is 16 bytes per parameter in fp32
    and 8 in 16-bit. It knows nothing of LoRA, batch, sequence length or activations: every case
    gets the figure for its whole model.
    """
    fp32_size = FP32 * total_params
    return 4 * fp32_size if case.precision == "fp32" else 2 * fp32_size


def deepspeed_model_states(total_params: int, num_gpus: int = 1) -> int:
    """DeepSpeed's ZeRO-2 model-state estimate on the GPU, without CPU offload.

    Source: deepspeedai/DeepSpeed, deepspeed/runtime/zero/stage_1_and_2.py,
    `estimate_zero2_model_states_mem_needs(total_params, num_gpus_per_node, num_nodes,
    cpu_offload=False)`: 4 bytes per parameter (16-bit weights and gradients) plus 16 bytes per
    parameter of optimizer state (fp32 master, momentum, variance) split over the GPUs. Model
    states only: activations and temporaries are not part of it. On one GPU stages 0-2 coincide.
    """
    return 4 * total_params + int(16 * total_params / num_gpus)
