"""Answers in the user's language, composed from tool results with the message catalogs.

`compose` writes every kind of answer, `job` the sections of a job answer, `parts` the shared
pieces (citations, text in a language), and `i18n` the message catalogs (`messages/*.yaml`) and
locale formatting of numbers, money and sizes.
"""
