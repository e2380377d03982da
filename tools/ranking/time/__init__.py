"""How long a training run takes on a cluster under a parallel plan, from its mechanisms.

`flops` counts FLOPs per token by kernel kind (matmuls, LM head, adapters, attention,
recomputation); `kernels` turns them and the memory-bound traffic into seconds per token at each
kernel's rate on a GPU generation and precision; `comm` times the data-, tensor- and
pipeline-parallel collectives from message sizes and link bandwidths; `step` adds the pipeline
bubble, QLoRA's de-quantization and the optimizer step into the run's hours; `setup` is what a run
pays before its first step; `goodput` the hardware-failure rate of long runs; `work` what a job
asks of any cluster; `assumptions` every constant, with its source.
"""
