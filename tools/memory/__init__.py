"""Building blocks of the training-memory estimator (`tools.memory.estimator`).

`constants` holds the byte counts with their sources, `inventory` lists a model's parameter tensors
and LoRA adapters, `model_states` counts weights, gradients and optimizer state per GPU, and
`activations` counts the tensors autograd keeps for the backward pass.
"""
