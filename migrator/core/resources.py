"""The one place that locates `rules/` and `templates/`.

An installed wheel carries them as `migrator/_data/{rules,templates}`; a checkout (or an
editable install) has them at the repository root, beside `migrator/`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["rules_dir", "templates_dir", "data_dir", "package_file"]

_PACKAGE = Path(__file__).resolve().parent.parent  # migrator/ (this file is in migrator/core/)


def data_dir(name: str) -> Path:
    """Return the folder `name` (`rules` or `templates`).

    Raises:
        FileNotFoundError: when neither the installed nor the checkout copy exists.
    """
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"neuron-migrator data folder '{name}' is missing from the installation")


def rules_dir() -> Path:
    return data_dir("rules")


def templates_dir() -> Path:
    return data_dir("templates")


def package_file(relative: str) -> Path:
    """A data file shipped inside the package (`assess/data/…`, `schemas/…`)."""
    return _PACKAGE / relative
