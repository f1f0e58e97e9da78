"""The one jinja2 environment: strict undefined, deterministic output, escaping filters."""

from __future__ import annotations

import json
import shlex
from functools import lru_cache
from typing import Any

import jinja2

from migrator.core.resources import templates_dir

__all__ = ["render_template", "environment"]


def _to_json(value: Any) -> str:
    """A JSON (and therefore YAML flow) literal: quotes, newlines, `${}` stay inert data."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def _to_hcl(value: Any) -> str:
    """An HCL literal: JSON escaping, plus `${`/`%{` escaped so a value can never interpolate."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True).replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_to_hcl(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_to_hcl(str(k))} = {_to_hcl(v)}" for k, v in sorted(value.items())) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as HCL")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["to_json"] = _to_json
    env.filters["hcl"] = _to_hcl
    env.filters["shell_quote"] = shlex.quote
    return env


def render_template(name: str, context: dict[str, Any]) -> str:
    """Render `templates/<name>`; a missing variable raises jinja2.UndefinedError."""
    return environment().get_template(name).render(**context)
