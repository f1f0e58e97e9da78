"""Reporters: functions from findings (plus run figures) to text. Name -> reporter."""

from __future__ import annotations

from migrator.report.github import render_github
from migrator.report.json import render_json
from migrator.report.junit import render_junit
from migrator.report.sarif import render_sarif
from migrator.report.text import render_text

REPORTERS = {"text": render_text, "json": render_json, "sarif": render_sarif, "github": render_github,
             "junit": render_junit}

__all__ = ["REPORTERS", "render_text", "render_json", "render_sarif", "render_github", "render_junit"]
