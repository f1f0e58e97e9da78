"""Reporters: functions from findings (plus run figures) to text. Name -> reporter."""

from __future__ import annotations

from .json import render_json
from .text import render_text

REPORTERS = {"text": render_text, "json": render_json}

__all__ = ["REPORTERS", "render_text", "render_json"]
