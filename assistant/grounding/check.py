"""Grounding: every figure an answer shows must trace to a tool artifact, a retrieved passage or
the user's own messages.

`check_grounding(answer_text, sources)` reads the figures in the answer
(`assistant.grounding.figures.shown_figures`: separators, decimal commas, money and percent signs,
magnitude suffixes, dates, in the six languages) and looks each one up among the source values.

Source values are collected by walking the artifacts (pydantic models, dataclasses, mappings,
sequences, strings) and reading the figures in every text. Each number also stands for the forms
an answer may display it in, kept apart by kind:
- size: an integer of at least 2^20 (a byte count) in GiB and GB, and in MiB, MB, TiB or TB
  where that gives 1 to 1023 of them; a field named `*_gib` / `*_gb` in GB / GiB;
- percent: a float x 100 (a fraction shown as a percentage);
- time: a field named `*hours` in minutes (x 60) and days (/ 24);
- a sequence's length is a value too (a count such as "top 3" or "137 excluded").
Counts written with a magnitude ("70B", "200 milyon") are scaled on the answer side instead.
- money: a field named for a price, cost, budget or amount (`price_per_hour`, `total_cost`,
  `budget`, Money's `amount`) and a figure a source text writes with a currency.
A shown figure matches a source value within half a unit of its last written digit; signs are
ignored. A figure written as money matches only values as computed, never a size, percentage
or time form; one written with a size unit (GiB, GB, Go) or a time unit only those forms or
values as computed. Beyond that matching is by value: a price equal to another computed figure
passes, except an amount below one unit ("$0.01/h"), which only a money value matches (any
fraction in the sources would otherwise ground it).
A figure past float range ("1e309", a value the user wrote that the job refused) has no value
to compare: only a source text that writes it the same way grounds it.

Artifacts are walked on demand (`SourceIndex.defer`): a lookup that finds its figure among the
values walked so far stops there, and one that does not walks on (twice as many parts each
time) until it does or nothing is left. A turn's answer shows the estimate and the first ranked
rows, which come first, so the ranking's other rows and its excluded list are seldom walked.
The outcome is the same as an index built whole: a figure is found exactly when some source
value matches it.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from enum import Enum
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assistant.grounding.figures import (
    MONEY,
    PERCENT,
    RAW,
    SIZE,
    SOURCE_KINDS,
    TIME,
    Candidate,
    ShownDate,
    ShownNumber,
    shown_figures,
)

__all__ = ["GroundingReport", "GroundingSources", "SourceIndex", "check_grounding"]

_BYTES_MIN = 1 << 20
_BYTE_DIVISORS = (1 << 30, 1e9, 1 << 20, 1e6, 1 << 40, 1e12)
_ALWAYS_SHOWN = (1 << 30, 1e9)  # GiB and GB; MiB, MB, TiB, TB only from 1 to 1023 of them
_GIB_PER_GB = 1e9 / (1 << 30)
_REL_EPS = 1e-9
# Field names that hold money (tools/ranking/models.py, tools/catalog/instances.py,
# tools/job/money.py).
_MONEY_KEY = re.compile(r"price|cost|budget|usd|(?:^|_)(?:amount|eur|try|money)(?:_|$)", re.I)


class GroundingSources(BaseModel):
    """Where an answer's figures may come from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    artifacts: list[Any] = Field(
        default_factory=list,
        description="tool results: pydantic models, dataclasses, dicts, lists, strings",
    )
    passages: list[str] = Field(
        default_factory=list, description="retrieved passage texts (and titles) shown to the model"
    )
    user_messages: list[str] = Field(
        default_factory=list, description="what the user wrote in this conversation"
    )

    def index(self) -> SourceIndex:
        """Every source value, with its displayed forms, ready for lookups (the artifacts
        walked as lookups need them)."""
        index = SourceIndex()
        for artifact in self.artifacts:
            index.defer(artifact)
        for text in (*self.passages, *self.user_messages):
            index.add_text(text)
        return index


class GroundingReport(BaseModel):
    """The outcome of a check: grounded when no shown figure is left untraced."""

    grounded: bool
    ungrounded_numbers: list[str] = Field(description="figures as written, in order, deduplicated")
    checked: int = Field(ge=0, description="figures looked up")


class SourceIndex:
    """Source values by kind (absolute, sorted on first lookup) and source dates."""

    def __init__(self) -> None:
        self._values: dict[str, list[float]] = {kind: [] for kind in SOURCE_KINDS}
        self._sorted = True
        self._dates: set[tuple[int, int, int | None]] = set()
        # Figures past float range as a source text writes them ("1e309"): only the same
        # writing grounds one (a value comparison cannot).
        self._unbounded: set[str] = set()
        # Parts of deferred artifacts not walked yet, in order: (object, field name, depth).
        self._pending: deque[tuple[object, str, int]] = deque()
        self._step = _FIRST_STEP

    def copy(self) -> SourceIndex:
        """An independent index holding the same values, dates and deferred parts (to extend
        without walking the sources again)."""
        twin = SourceIndex()
        twin._values = {kind: list(values) for kind, values in self._values.items()}
        twin._sorted = self._sorted
        twin._dates = set(self._dates)
        twin._unbounded = set(self._unbounded)
        twin._pending = deque(self._pending)
        twin._step = self._step
        return twin

    def defer(self, obj: object) -> None:
        """Add an artifact to be walked when a lookup needs it (as `add_object` would)."""
        self._pending.append((obj, "", 0))

    def _walk_on(self) -> bool:
        """Walk the next deferred parts, twice as many as the time before; False when none was
        left. A part is split into its fields or items down to `_SPLIT_DEPTH` (a ranking, then
        its lists, then their rows), so a lookup stops after the rows it needed."""
        budget = self._step
        self._step *= 2
        walked = False
        while self._pending and budget > 0:
            obj, key, depth = self._pending.popleft()
            parts = _parts(obj, key) if depth < _SPLIT_DEPTH else None
            if parts is None:
                self.add_object(obj, key)
                budget -= 1
            else:
                length, children = parts
                if length is not None:
                    self.add_value(length)
                self._pending.extendleft((c, k, depth + 1) for c, k in reversed(children))
            walked = True
        return walked

    # -- collecting

    def add_value(self, value: float, key: str = "") -> None:
        """A number and the forms it may be displayed in (see the module docstring); one that is
        not a finite float (an int beyond 1e308 included) grounds nothing."""
        try:
            if not math.isfinite(value):
                return
        except OverflowError:
            return
        self._add(RAW, value)
        if isinstance(value, int) and abs(value) >= _BYTES_MIN:
            for divisor in _BYTE_DIVISORS:
                shown = value / divisor
                if divisor in _ALWAYS_SHOWN or 1 <= abs(shown) < 1024:
                    self._add(SIZE, shown)
        if isinstance(value, float):
            self._add(PERCENT, value * 100)
        money, unit, hours = _key_forms(key)
        if money:
            self._add(MONEY, value)
        if unit == "gib":
            self._add(SIZE, value / _GIB_PER_GB)
        elif unit == "gb":
            self._add(SIZE, value * _GIB_PER_GB)
        if hours:
            self._add(TIME, value * 60)
            self._add(TIME, value / 24)

    def _add(self, kind: str, value: float) -> None:
        """Record a source value; one that is not a finite float (a figure such as "1e309")
        grounds nothing and is left out."""
        value = abs(float(value))
        if math.isfinite(value):
            self._values[kind].append(value)
            self._sorted = False

    def add_date(self, day: date) -> None:
        self._dates |= {(day.year, day.month, day.day), (day.year, day.month, None)}
        self.add_value(day.year)

    def add_text(self, text: str) -> None:
        """Every figure of a text, in every reading, at the value written."""
        raw, money, dates, unbounded = _text_entries(text)
        self._unbounded.update(unbounded)
        if raw:
            self._values[RAW].extend(raw)
            self._sorted = False
        if money:
            self._values[MONEY].extend(money)
        for year, month, day in dates:
            self._dates |= {(year, month, day), (year, month, None)}
            self._add(RAW, year)

    def add_object(self, obj: object, key: str = "") -> None:
        """Walk an artifact: models, dataclasses, mappings, sequences, strings, numbers, dates."""
        exact = type(obj)  # the common leaves first (a walk visits about a thousand per turn)
        if exact is str:
            self.add_text(obj)  # type: ignore[arg-type]
            return
        if exact is float or exact is int:
            self.add_value(obj, key)  # type: ignore[arg-type]
            return
        if obj is None or isinstance(obj, bool):
            return
        if isinstance(obj, Enum):
            obj = obj.value
        if isinstance(obj, int | float):
            self.add_value(obj, key)
        elif isinstance(obj, str):
            self.add_text(obj)
        elif isinstance(obj, datetime | date):
            self.add_date(obj if not isinstance(obj, datetime) else obj.date())
        else:
            parts = _parts(obj, key)
            if parts is None:
                return
            length, children = parts
            if length is not None:
                self.add_value(length)
            for child, name in children:
                self.add_object(child, name)

    # -- looking up

    def has(self, candidate: Candidate) -> bool:
        """A source value of the candidate's kinds within its tolerance (equal when exact)."""
        while not self._holds(candidate):
            if not self._walk_on():
                return False
        return True

    def _holds(self, candidate: Candidate) -> bool:
        """Whether a value walked so far matches the candidate."""
        if not self._sorted:
            for values in self._values.values():
                values.sort()
            self._sorted = True
        value = abs(candidate.value)
        slack = _REL_EPS * max(1.0, value)
        tol = slack if candidate.exact else candidate.tol + slack
        for kind in candidate.kinds:
            values = self._values[kind]
            i = bisect.bisect_left(values, value - tol)
            if i < len(values) and values[i] <= value + tol:
                return True
        return False

    def has_number(self, number: ShownNumber) -> bool:
        if _unbounded(number):  # "1e309", quoted back from the user's message
            while number.text not in self._unbounded:
                if not self._walk_on():
                    return False
            return True
        return any(all(self.has(c) for c in reading) for reading in number.readings)

    def has_date(self, shown: ShownDate) -> bool:
        while not any(option in self._dates for option in shown.options):
            if not self._walk_on():
                return False
        return True


_FIRST_STEP = 8  # deferred parts walked by a lookup's first miss
_SPLIT_DEPTH = 3  # an artifact, its fields, their items: split; anything deeper walked whole


def _parts(obj: object, key: str) -> tuple[int | None, list[tuple[object, str]]] | None:
    """The fields or items of a model, dataclass, mapping or other iterable, each with the
    field name its numbers are read under, and a sequence's length (a value too); None for a
    leaf (a number, text, date, None or a bool)."""
    if obj is None or isinstance(obj, bool | int | float | str | Enum | date):
        return None
    if isinstance(obj, BaseModel):
        return None, [(getattr(obj, name), name) for name in type(obj).model_fields]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return None, [(getattr(obj, item.name), item.name) for item in dataclasses.fields(obj)]
    if isinstance(obj, Mapping):
        return None, [(value, str(name)) for name, value in obj.items()]
    if isinstance(obj, Iterable):
        items = list(obj)
        return len(items), [(item, key) for item in items]
    return None


@lru_cache(maxsize=1024)
def _key_forms(key: str) -> tuple[bool, str | None, bool]:
    """What a field named `key` adds to each of its numbers: a money value, a size form from
    its unit ("gib", "gb" or None) and time forms (hours)."""
    name = key.lower()
    unit = "gib" if name.endswith("_gib") else "gb" if name.endswith("_gb") else None
    return bool(_MONEY_KEY.search(name)), unit, name.endswith("hours")


def _unbounded(number: ShownNumber) -> bool:
    """Whether a figure reads as a value past float range ("1e309")."""
    return any(not math.isfinite(c.value) for reading in number.readings for c in reading)


@lru_cache(maxsize=4096)
def _text_entries(
    text: str,
) -> tuple[
    tuple[float, ...], tuple[float, ...], tuple[tuple[int, int, int | None], ...], tuple[str, ...]
]:
    """What a source text adds to an index: its figures' values in every reading (absolute,
    finite), those written as money, its dates' readings, and its figures past float range as
    written. Kept: the same catalog names, passages and earlier messages are walked again on
    every turn."""
    numbers, dates = shown_figures(text)
    unbounded = tuple(number.text for number in numbers if _unbounded(number))
    raw: list[float] = []
    money: list[float] = []
    for number in numbers:
        for reading in number.readings:
            for candidate in reading:
                value = abs(float(candidate.value))
                if math.isfinite(value):
                    raw.append(value)
                    if number.money:
                        money.append(value)
    options = tuple(option for shown in dates for option in shown.options)
    return tuple(raw), tuple(money), options, unbounded


def check_grounding(
    answer_text: str, sources: GroundingSources | SourceIndex, lang: str | None = None
) -> GroundingReport:
    """Whether every figure in `answer_text` traces to `sources`, and the ones that do not.
    `lang`, the answer's language when known, reads a lone "1,234" by its number marks."""
    index = sources if isinstance(sources, SourceIndex) else sources.index()
    numbers, dates = shown_figures(answer_text, lang)
    missing = [(n.start, n.text) for n in numbers if not index.has_number(n)]
    missing += [(d.start, d.text) for d in dates if not index.has_date(d)]
    seen: dict[str, None] = {}
    for _, text in sorted(missing):
        seen.setdefault(text, None)
    return GroundingReport(
        grounded=not seen, ungrounded_numbers=list(seen), checked=len(numbers) + len(dates)
    )
