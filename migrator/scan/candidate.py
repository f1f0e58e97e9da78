"""A rule matched at one node (`Candidate`), before it becomes a `Finding`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from migrator.core.catalogue import RuleSpec

__all__ = ["Candidate", "ParseFailure"]


class ParseFailure(Exception):
    """The source could not be decoded or parsed; the message says where."""


@dataclass
class Candidate:
    """A rule that matched one node, with what its message and fix need."""

    rule: RuleSpec
    node: cst.CSTNode
    values: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
