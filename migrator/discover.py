"""Find the files to scan: walk folders, honour `.gitignore`, classify each file by kind."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Iterator

import pathspec

__all__ = ["file_kind", "discover", "is_test_path", "SKIP_DIRS"]

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
    "build", "dist", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages-skip",
    ".ipynb_checkpoints", ".neuron-migrator-cache",
}
_TEST_RE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")


def file_kind(path: Path) -> str | None:
    """`python`, `notebook`, `shell`, `dockerfile`, `requirements`, `conda`, `pyproject`,
    `setupcfg`, `cuda` (.cu/.cuh sources), or None (not scanned)."""
    name = path.name
    lower = name.lower()
    if lower.endswith((".py", ".pyi")):
        return "python"
    if lower.endswith(".ipynb"):
        return "notebook"
    if lower.endswith((".sh", ".bash", ".zsh")) or lower in {".bashrc", ".profile"}:
        return "shell"
    if lower in {"dockerfile", "containerfile"} or lower.startswith("dockerfile.") or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.endswith((".txt", ".in")) and (lower.startswith(("requirements", "constraints")) or path.parent.name == "requirements"):
        return "requirements"
    if lower in {"environment.yml", "environment.yaml", "conda.yml", "conda.yaml"} or lower.startswith("environment-") and lower.endswith((".yml", ".yaml")):
        return "conda"
    if lower == "pyproject.toml":
        return "pyproject"
    if lower == "setup.cfg":
        return "setupcfg"
    if lower.endswith((".cu", ".cuh")):
        return "cuda"
    return None


def is_test_path(path: str) -> bool:
    return bool(_TEST_RE.search(path.replace(os.sep, "/")))


def _is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def _gitignore(root: Path) -> pathspec.GitIgnoreSpec | None:
    ignore = root / ".gitignore"
    if not ignore.is_file():
        return None
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def discover(paths: Iterable[str | os.PathLike[str]], exclude: Iterable[str] = ()) -> Iterator[tuple[Path, str]]:
    """Yield `(path, kind)` for every scannable file under `paths`, in sorted order.

    A file named directly is always yielded when its kind is known (as ruff does); folders are
    walked with `.gitignore` files honoured at every level, and `.git`, virtual environments and
    build folders skipped. `exclude` holds gitignore-style patterns.

    Raises:
        FileNotFoundError: a path does not exist.
    """
    excluded = pathspec.GitIgnoreSpec.from_lines(list(exclude))
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise FileNotFoundError(f"{raw}: no such file or directory")
        if root.is_file():
            kind = file_kind(root)
            if kind:
                yield root, kind
            continue
        yield from _walk(root, excluded)


def _walk(root: Path, excluded: pathspec.GitIgnoreSpec) -> Iterator[tuple[Path, str]]:
    specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        specs = [(base, spec) for base, spec in specs if base == here or base in here.parents]
        spec = _gitignore(here)
        if spec is not None:
            specs.append((here, spec))

        def ignored(p: Path, is_dir: bool) -> bool:
            rel_root = p.relative_to(root).as_posix() + ("/" if is_dir else "")
            if excluded.match_file(rel_root):
                return True
            for base, s in specs:
                rel = p.relative_to(base).as_posix() + ("/" if is_dir else "")
                if s.match_file(rel):
                    return True
            return False

        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not d.endswith(".egg-info") and not _is_venv(here / d) and not ignored(here / d, True)
        )
        for name in sorted(filenames):
            p = here / name
            kind = file_kind(p)
            if kind and not ignored(p, False):
                yield p, kind
