"""Model states: the parameter tensors and adapters as the byte rules see them (`inventory`),
weights, gradients and optimizer state per GPU under each precision, optimizer and sharding
(`model_states`), and what the optimizer step adds while it runs (`optimizer_step`)."""
