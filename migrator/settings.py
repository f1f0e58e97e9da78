"""`[tool.neuron-migrator]` in pyproject.toml, validated into one frozen `Settings`.

The file is found by walking up from the first path given on the command line (the working
directory when none is given, as for `rules`), as ruff does; the first pyproject.toml that has
the table wins (no cascade). An explicit `--config FILE` wins over the search. Precedence: command-line flags, then the file, then defaults.

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
    force-exclude = true              # apply the excludes to files named on the command line too
    max-file-size = 5242880           # bytes; larger files get one NRN000 finding instead of a scan
    torch-version = "2.9"             # the PyTorch the project runs: fixes needing a newer one are left
    framework-source = false          # also scan PyTorch's own source (a vendored copy); NRN002 otherwise
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from migrator.core.catalogue import TARGETS
from migrator.core.findings import FAIL_ON

__all__ = ["Settings", "SettingsError", "load_settings", "find_config"]

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
    force_exclude: bool = False
    max_file_size: int = 5 * 1024 * 1024
    torch_version: str | None = None
    framework_source: bool = False
    source: Path | None = None
    root: Path | None = None

    def override(self, **flags: Any) -> "Settings":
        """Apply command-line values; None means "not given"."""
        given = {k: v for k, v in flags.items() if v is not None and v != ()}
        return replace(self, **given)


def _table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """`[tool.neuron-migrator]` of a parsed pyproject.toml, None when absent.

    Raises:
        SettingsError: `tool` or the table is not a table.
    """
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        if "neuron-migrator" not in str(tool):
            return None
        raise SettingsError(f"{path}: 'tool' must be a table")
    if "neuron-migrator" not in tool:
        return None
    table = tool["neuron-migrator"]
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.neuron-migrator] must be a table, got {type(table).__name__}")
    return table


def _read_toml(path: Path) -> dict[str, Any] | None:
    """A parsed pyproject.toml; None when it cannot be parsed and does not name the tool (a
    broken pyproject.toml of some other tool is not ours to stop on).

    Raises:
        SettingsError: it names the tool but cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        try:
            mentioned = b"neuron-migrator" in path.read_bytes()
        except OSError:
            mentioned = False
        if not mentioned:
            return None
        raise SettingsError(f"{path}: cannot read: {exc}") from None


def find_config(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml that has a [tool.neuron-migrator] table, walking up from
    `start` (a file or folder; default: the working directory)."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:  # the working directory was removed
        return None
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        try:
            found = candidate.is_file()
        except OSError:  # a folder above that this user may not enter holds no settings for it
            continue
        if found:
            data = _read_toml(candidate)
            if data is not None and _table(data, candidate) is not None:
                return candidate
    return None


def _strings(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{path}: key '{key}': expected a list of strings, got {value!r}")
    return tuple(value)


def _pattern(pattern: str, key: str, path: Path) -> None:
    from migrator.sources.discover import MAX_WILDCARDS, too_many_wildcards

    if any(ord(c) < 32 for c in pattern):
        raise SettingsError(f"{path}: key '{key}': {pattern!r} holds a control character")
    if too_many_wildcards(pattern):
        raise SettingsError(f"{path}: key '{key}': {pattern!r} has more than {MAX_WILDCARDS} wildcards")


def is_rule_code(code: str) -> bool:
    """True for a rule id or id prefix: `NRN`, `NRN1`, `NRN101` (any case)."""
    return re.fullmatch(r"NRN[0-9]{0,3}", code, re.IGNORECASE) is not None


def _codes(value: Any, key: str, path: Path) -> tuple[str, ...]:
    codes = _strings(value, key, path)
    for code in codes:
        if not is_rule_code(code):
            raise SettingsError(f"{path}: key '{key}': '{code}' is not a rule id or prefix such as NRN1 or NRN101")
    return tuple(c.upper() for c in codes)


def load_settings(config: Path | None = None, start: Path | None = None) -> Settings:
    """Read the configuration (explicit `config`, else the nearest one up from `start`) into Settings.

    Raises:
        SettingsError: unreadable TOML, an unknown key or a bad value (names file and key).
    """
    path = config or find_config(start)
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    table = _table(data, Path(path)) or {}
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
            for pattern in value:
                _pattern(pattern, "per-file-ignores", path)
            out["per_file_ignores"] = tuple((pattern, _codes(codes, f"per-file-ignores.{pattern}", path))
                                            for pattern, codes in value.items())
        elif key in ("exclude", "extend-exclude"):
            for pattern in _strings(value, key, path):
                _pattern(pattern, key, path)
            out[key.replace("-", "_")] = _strings(value, key, path)
        elif key == "fail-on":
            if value not in FAIL_ON:
                raise SettingsError(f"{path}: key 'fail-on': '{value}' is not one of {', '.join(FAIL_ON)}")
            out["fail_on"] = value
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: key 'unsafe-fixes': expected true or false, got {value!r}")
            out["unsafe_fixes"] = value
        elif key == "force-exclude":
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: key 'force-exclude': expected true or false, got {value!r}")
            out["force_exclude"] = value
        elif key == "framework-source":
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: key 'framework-source': expected true or false, got {value!r}")
            out["framework_source"] = value
        elif key == "max-file-size":
            if type(value) is not int or value < 1:
                raise SettingsError(f"{path}: key 'max-file-size': expected a positive number of bytes, got {value!r}")
            out["max_file_size"] = value
        elif key == "torch-version":
            if not (isinstance(value, str) and re.fullmatch(r"[0-9]{1,6}\.[0-9]{1,6}(\.[0-9]{1,6})?", value)):
                raise SettingsError(f"{path}: key 'torch-version': expected a version such as \"2.9\", got {value!r}")
            out["torch_version"] = value
        elif key == "test-files":
            if value not in ("scan", "lower", "exclude"):
                raise SettingsError(f"{path}: key 'test-files': '{value}' is not one of scan, lower, exclude")
            out["test_files"] = value
        elif key == "extend-rules":
            folders = tuple(Path(path).parent / p for p in _strings(value, key, path))
            home = Path(path).parent.resolve()
            for folder in folders:
                if not folder.is_dir():
                    raise SettingsError(f"{path}: key 'extend-rules': folder '{folder}' does not exist")
                # The configuration comes with the repository: its rules live in it too.
                if folder.resolve() != home and home not in folder.resolve().parents:
                    raise SettingsError(f"{path}: key 'extend-rules': folder '{folder}' is outside {home}")
            out["extend_rules"] = folders
        else:
            known = ("target, select, ignore, per-file-ignores, exclude, extend-exclude, fail-on, unsafe-fixes, "
                     "extend-rules, test-files, force-exclude, max-file-size, torch-version, framework-source")
            raise SettingsError(f"{path}: unknown key '{key}' in [tool.neuron-migrator] (known: {known})")
    return Settings(**out)
