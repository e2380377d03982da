"""Diffusion fine-tuning memory against published statements (cases.json)."""
