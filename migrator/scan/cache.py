"""Scan results kept between runs: checked JSON in the user's cache folder, never in the tree.

A scanned repository is hostile input, so nothing it contains is ever trusted as a cache:

- The default folder is the user cache directory (platformdirs: `~/.cache/neuron-migrator` on
  Linux), not the scanned tree; `--cache-dir` may name another folder.
- Entries are JSON, read back field by field into `Finding`s (no pickle, nothing executable).
- Each file is signed with HMAC-SHA256 under a per-user secret kept in the user cache folder
  (mode 0600). A file written by anyone else (committed to a repository, copied from another
  machine) fails the check and is ignored, as is a corrupt or truncated one.
- One file per project root and configuration, named by a hash of the absolute root, the tool
  version, the catalogue (every rule file and targets.yaml), the target, the selection and the
  noqa mode; inside, per absolute path: the content hash, its findings and its line count. A
  file is reused only when its content hash matches.

The folder holds a `CACHEDIR.TAG` (https://bford.info/cachedir/) and a `.gitignore` of `*`;
it is safe to delete.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.core.findings import Finding
from migrator.core.store import signed_dump, signed_load, user_cache_dir
from migrator.core.version import __version__

if TYPE_CHECKING:
    from migrator.core.catalogue import Catalogue
    from migrator.core.options import ScanOptions

__all__ = ["ResultCache", "user_cache_dir", "signed_dump", "signed_load"]

FORMAT = 3


def _code_digest() -> str:
    """Size and mtime of every module of the tool: a development checkout's edits invalidate
    the cache although the version stays the same."""
    h = hashlib.sha256()
    for module in sorted(Path(__file__).parent.parent.rglob("*.py")):  # the whole package
        info = module.stat()
        h.update(f"{module.name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _catalogue_digest(catalogue: "Catalogue") -> str:
    from migrator.core.resources import rules_dir

    h = hashlib.sha256()
    for rule in catalogue.rules:
        h.update(rule.id.encode())
        h.update(rule.path.read_bytes())
    for name in ("targets.yaml", "vocabulary.yaml", "operators.yaml"):
        h.update((rules_dir() / name).read_bytes())
    return h.hexdigest()


class ResultCache:
    """Per-file results for one project root and configuration (see the module docstring)."""

    def __init__(self, file: Path, key: str, entries: dict[str, tuple[str, list[Finding], int]]) -> None:
        self.file = file
        self.key = key
        self.entries = entries
        self.dirty = False

    @classmethod
    def open(cls, folder: Path | None, catalogue: "Catalogue", options: "ScanOptions") -> "ResultCache":
        """The cache for `options` under `folder` (None = `user_cache_dir()`); never raises."""
        root = str((options.root or Path.cwd()).resolve())
        key = hashlib.sha256("\0".join([
            str(FORMAT), __version__, _code_digest(), root, _catalogue_digest(catalogue), options.target, ",".join(options.select),
            ",".join(options.ignore), str(options.report_unused_noqa), str(options.max_file_size),
            str(options.fix_edits), str(options.torch_version),
        ]).encode()).hexdigest()
        base = Path(folder) if folder is not None else user_cache_dir() / "scan"
        file = base / f"scan-{key[:32]}.json"
        payload = signed_load(file)
        entries: dict[str, tuple[str, list[Finding], int]] = {}
        if isinstance(payload, dict) and payload.get("key") == key and isinstance(payload.get("files"), dict):
            for path, entry in payload["files"].items():
                try:
                    digest, found, lines = entry
                    if not isinstance(digest, str) or not isinstance(lines, int) or not isinstance(found, list):
                        continue
                    entries[path] = (digest, [Finding.from_dict(f) for f in found], lines)
                except (TypeError, ValueError, KeyError):
                    continue  # a foreign or damaged entry is ignored, the file is scanned again
        return cls(file, key, entries)

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
        files = {path: [digest, [f.to_record() for f in found], lines]
                 for path, (digest, found, lines) in self.entries.items()}
        try:
            signed_dump(self.file, {"key": self.key, "files": files})
        except OSError:
            pass
