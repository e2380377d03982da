"""Ranking cloud instances for a training job: plans, hours, billed cost and exclusions.

`models` holds the request and result types, `rank` the entry point, `prepare` what a request
computes once, `plans` the parallel plan search per machine shape, `screen` the constraint
checks, `throughput` hours from FLOPs and utilisation, `costs` billing rounding and the spot
interruption model, and `text` the one-line reasons.
"""
