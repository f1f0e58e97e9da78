"""Scan results kept between runs, keyed so that they are never wrong after an edit.

One pickle per configuration under the cache folder, named by a hash of the tool version, the
catalogue (every rule file's content and targets.yaml), the target, the selection and the
noqa mode; inside, per path: the file's content hash, its findings and its line count. A file
is reused only when its content hash matches. The folder holds a `.gitignore` of `*` and is
safe to delete.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .findings import Finding

if TYPE_CHECKING:
    from .api import ScanOptions
    from .catalogue import Catalogue

__all__ = ["ResultCache", "DEFAULT_CACHE_DIR"]

DEFAULT_CACHE_DIR = ".neuron-migrator-cache"


def _catalogue_digest(catalogue: "Catalogue") -> str:
    from .resources import rules_dir

    h = hashlib.sha256()
    for rule in catalogue.rules:
        h.update(rule.id.encode())
        h.update(rule.path.read_bytes())
    h.update((rules_dir() / "targets.yaml").read_bytes())
    return h.hexdigest()


class ResultCache:
    """Per-file results for one configuration (see the module docstring)."""

    def __init__(self, file: Path, entries: dict[str, tuple[str, list[Finding], int]]) -> None:
        self.file = file
        self.entries = entries
        self.dirty = False

    @classmethod
    def open(cls, folder: Path, catalogue: "Catalogue", options: "ScanOptions") -> "ResultCache":
        key = hashlib.sha256("\0".join([
            __version__, _catalogue_digest(catalogue), options.target, ",".join(options.select),
            ",".join(options.ignore), str(options.report_unused_noqa),
        ]).encode()).hexdigest()[:24]
        file = Path(folder) / f"scan-{key}.pickle"
        entries: dict[str, Any] = {}
        try:
            with open(file, "rb") as handle:
                entries = pickle.load(handle)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError, TypeError):
            entries = {}  # missing or unreadable: start afresh
        return cls(file, entries if isinstance(entries, dict) else {})

    def get(self, path: str, digest: str) -> tuple[list[Finding], int] | None:
        entry = self.entries.get(path)
        if entry is None or entry[0] != digest or not digest:
            return None
        return list(entry[1]), entry[2]

    def put(self, path: str, digest: str, findings: list[Finding], lines: int) -> None:
        self.entries[path] = (digest, findings, lines)
        self.dirty = True

    def save(self) -> None:
        """Write atomically; a cache that cannot be written is skipped silently (it is optional)."""
        if not self.dirty:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.file.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by neuron-migrator\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(self.entries, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.file)
        except OSError:
            pass
