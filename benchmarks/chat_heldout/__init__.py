"""Held-out conversations of the chat, run through the whole offline turn (`run`).

`conversations.yaml` was written apart from the routing bank and the dev corpus and is never
used to tune them; `run` reports per language: intent accuracy, exact job state, answer
language, grounding and turn latency (wall and CPU).
"""
