"""`[tool.neuron-migrator]` in pyproject.toml, validated into one frozen `Settings`.

The file is found by walking up from the working directory; the first pyproject.toml that has
the table wins (no cascade). Precedence: command-line flags, then the file, then defaults.

    [tool.neuron-migrator]
    target = "neuron"                 # portable | neuron | xla | inf1
    select = ["NRN1", "NRN2"]         # id prefixes; empty = all
    ignore = ["NRN210"]
    per-file-ignores = {"tests/**" = ["NRN1"]}
    exclude = ["third_party/"]        # replaces the default excludes (none today)
    extend-exclude = ["build-*/"]
    fail-on = "warning"               # error | warning | info | never
    unsafe-fixes = false
    extend-rules = ["tools/nrn-rules"]  # folders of team rules (NRN9xx), relative to the file
    test-files = "lower"              # scan (default: marked as tests) | lower (one severity down) | exclude
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Settings", "SettingsError", "load_settings", "find_config"]

TARGETS = ("portable", "neuron", "xla", "inf1")
FAIL_ON = ("error", "warning", "info", "never")


class SettingsError(ValueError):
    """A bad configuration; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    """Everything a run is configured with (see the module docstring for the keys)."""

    target: str = "portable"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    fail_on: str = "error"
    unsafe_fixes: bool = False
    extend_rules: tuple[Path, ...] = ()
    test_files: str = "scan"
    source: Path | None = None
    root: Path | None = None

    def override(self, **flags: Any) -> "Settings":
        """Apply command-line values; None means "not given"."""
        given = {k: v for k, v in flags.items() if v is not None and v != ()}
        return replace(self, **given)


def find_config(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml (walking up) that has a [tool.neuron-migrator] table."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
                raise SettingsError(f"{candidate}: cannot read: {exc}") from None
            if "neuron-migrator" in data.get("tool", {}):
                return candidate
    return None


def _strings(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{path}: key '{key}': expected a list of strings, got {value!r}")
    return tuple(value)


def _codes(value: Any, key: str, path: Path) -> tuple[str, ...]:
    codes = _strings(value, key, path)
    for code in codes:
        if not code.upper().startswith("NRN") or not code[3:].isdigit():
            raise SettingsError(f"{path}: key '{key}': '{code}' is not a rule id or prefix such as NRN1 or NRN101")
    return tuple(c.upper() for c in codes)


def load_settings(config: Path | None = None, start: Path | None = None) -> Settings:
    """Read the configuration (explicit `config`, else the nearest one) into Settings.

    Raises:
        SettingsError: unreadable TOML, an unknown key or a bad value (names file and key).
    """
    path = config or find_config(start)
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    table = data.get("tool", {}).get("neuron-migrator", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.neuron-migrator] must be a table")
    out: dict[str, Any] = {"source": Path(path), "root": Path(path).parent}
    for key, value in table.items():
        if key == "target":
            if value not in TARGETS:
                raise SettingsError(f"{path}: key 'target': '{value}' is not one of {', '.join(TARGETS)}")
            out["target"] = value
        elif key in ("select", "ignore"):
            out[key] = _codes(value, key, path)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise SettingsError(f"{path}: key 'per-file-ignores': expected a table of pattern = [codes]")
            out["per_file_ignores"] = tuple((pattern, _codes(codes, f"per-file-ignores.{pattern}", path))
                                            for pattern, codes in value.items())
        elif key in ("exclude", "extend-exclude"):
            out[key.replace("-", "_")] = _strings(value, key, path)
        elif key == "fail-on":
            if value not in FAIL_ON:
                raise SettingsError(f"{path}: key 'fail-on': '{value}' is not one of {', '.join(FAIL_ON)}")
            out["fail_on"] = value
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: key 'unsafe-fixes': expected true or false, got {value!r}")
            out["unsafe_fixes"] = value
        elif key == "test-files":
            if value not in ("scan", "lower", "exclude"):
                raise SettingsError(f"{path}: key 'test-files': '{value}' is not one of scan, lower, exclude")
            out["test_files"] = value
        elif key == "extend-rules":
            folders = tuple(Path(path).parent / p for p in _strings(value, key, path))
            for folder in folders:
                if not folder.is_dir():
                    raise SettingsError(f"{path}: key 'extend-rules': folder '{folder}' does not exist")
            out["extend_rules"] = folders
        else:
            known = ("target, select, ignore, per-file-ignores, exclude, extend-exclude, fail-on, unsafe-fixes, "
                     "extend-rules, test-files")
            raise SettingsError(f"{path}: unknown key '{key}' in [tool.neuron-migrator] (known: {known})")
    return Settings(**out)
