"""How training stacks allocate: their profiles and the mechanisms the estimator counts per stack.

`profiles` holds each stack's mechanism defaults with their sources and resolves a job's
mechanisms (`resolve_mechanisms`); `loss` the bytes a cross-entropy implementation keeps per
logit; `checkpointing` what selective recomputation keeps; `deepspeed` what DeepSpeed's ZeRO
allocates beyond the ZeRO paper's accounting; `quantized` what QLoRA's 4-bit layers keep and
dequantize; `reporting` which figure (allocated, reserved, device) a measurement holds;
`describe` the sentences an estimate states about its stack.
"""
