"""GPU Advisor's models against published, measured GPU training runs.

The ground truth lives outside the project, in ../shared/calibration (read-only): measured peak
memory and fit/OOM outcomes (`gpu_memory_published.json`) and measured throughput
(`training_throughput_published.json`), each case with its source repository, commit and quote.
`cases` loads either file and reads what a case says about its run (stack, mechanisms, model
config); `memory` runs the memory estimator over the memory file
(`python -m benchmarks.published_runs.memory`).
"""
