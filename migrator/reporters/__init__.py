"""Reporters: functions from findings (plus run figures) to text. Name -> reporter."""

from __future__ import annotations

from .github import render_github
from .json import render_json
from .junit import render_junit
from .sarif import render_sarif
from .text import render_text

REPORTERS = {"text": render_text, "json": render_json, "sarif": render_sarif, "github": render_github,
             "junit": render_junit}

__all__ = ["REPORTERS", "render_text", "render_json", "render_sarif", "render_github", "render_junit"]
