"""Regular expressions from rule files, with a time limit for those a repository supplies.

The built-in catalogue's patterns are ours and run on `re`. Team rules (`extend-rules`) come
from the scanned repository's configuration, so a catastrophic pattern such as `(a+)+$` could
hang the run; they are compiled with the `regex` package and every search has a time limit.
A search that runs out of time counts as no match and is recorded in `timeouts`, which the
scan turns into one NRN000 finding for the file; the rule is then skipped for the rest of that
file, so one file costs a rule at most one time limit.
"""

from __future__ import annotations

from typing import Iterator

__all__ = ["TimedPattern", "SEARCH_SECONDS"]

SEARCH_SECONDS = 0.5


class TimedPattern:
    """`search`/`finditer` like `re.Pattern`, each call limited to `SEARCH_SECONDS`."""

    def __init__(self, pattern: str, rule_id: str) -> None:
        import regex

        self._regex = regex.compile(pattern, flags=regex.V0)
        self.pattern = pattern
        self.rule_id = rule_id
        self.timeouts: list[str] = []

    def search(self, text: str):
        if self.timeouts:  # out of time once in this file: the rest of the file is skipped too
            return None
        try:
            return self._regex.search(text, timeout=SEARCH_SECONDS)
        except TimeoutError:
            self.timeouts.append(self.rule_id)
            return None

    def match(self, text: str, pos: int = 0):
        if self.timeouts:
            return None
        try:
            return self._regex.match(text, pos, timeout=SEARCH_SECONDS)
        except TimeoutError:
            self.timeouts.append(self.rule_id)
            return None

    def finditer(self, text: str) -> Iterator:
        if self.timeouts:
            return
        try:
            yield from self._regex.finditer(text, timeout=SEARCH_SECONDS)
        except TimeoutError:
            self.timeouts.append(self.rule_id)
