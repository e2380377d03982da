"""Memory calibration: real training steps measured by category, beside the estimator's figures.

`cases` lists the configurations, `build` turns one into a real (randomly initialised) model,
`measure` runs optimizer steps under PyTorch's MemTracker (CPU) or the CUDA allocator's
statistics, `compare` maps the measurement onto the estimator's categories, and `run` is the
command line. See README.md in this folder.
"""
