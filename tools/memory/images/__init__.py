"""Training memory of image models: diffusion pipelines (`diffusion`, with the denoiser's
activations in `diffusion_acts`) and vision-language models (`vision`); `jobs` turns either
into the `MemoryEstimate` every interface shows."""
