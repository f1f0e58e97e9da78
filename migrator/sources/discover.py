"""Find the files to scan: walk folders, honour `.gitignore`, classify each file by kind."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pathspec

from migrator.core.fsutil import is_inside

__all__ = ["file_kind", "discover", "is_test_path", "gitignore_spec", "SKIP_DIRS", "framework_root"]

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
    "build", "dist", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages-skip",
    ".ipynb_checkpoints", ".neuron-migrator-cache",
}
# Test files: under tests/, testing/ or test_utils/, test_*.py, *_test.py, conftest.py, and the test
# helpers the Hugging Face libraries keep beside their code (transformers/testing_utils.py).
_TEST_RE = re.compile(r"(^|/)(tests?|testing|test_utils)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)(conftest|testing_utils)\.py$")


def file_kind(path: Path) -> str | None:
    """`python`, `notebook`, `shell`, `dockerfile`, `requirements`, `conda`, `pyproject`,
    `setupcfg`, `cuda` (.cu/.cuh sources), `yaml` (other YAML files: read as text, and only
    those that are Lightning CLI, accelerate or Hugging Face training configs by their keys are
    matched; see sources/text.py), or None (not scanned)."""
    return _kind(path.name, path.parent.name)


def _kind(name: str, parent: str) -> str | None:
    """`file_kind` of a file called `name` in a folder called `parent` (no Path per file: the walk
    of a large tree is most of a warm scan)."""
    lower = name.lower()
    if lower.endswith((".py", ".pyi")):
        return "python"
    if lower.endswith(".ipynb"):
        return "notebook"
    # Batch-scheduler job scripts (Slurm's `sbatch`, PBS) are shell scripts.
    if lower.endswith((".sh", ".bash", ".zsh", ".sbatch", ".slurm", ".pbs", ".qsub")) or lower in {".bashrc", ".profile"}:
        return "shell"
    # As the hooks' `files` pattern: Dockerfile, Dockerfile.gpu, Dockerfile-cuda, x.dockerfile.
    if lower.startswith(("dockerfile", "containerfile")) or lower.endswith((".dockerfile", ".containerfile")):
        return "dockerfile"
    if lower.endswith((".txt", ".in")) and (lower.startswith(("requirements", "constraints")) or parent == "requirements"):
        return "requirements"
    if lower in {"environment.yml", "environment.yaml", "conda.yml", "conda.yaml"} or lower.startswith("environment-") and lower.endswith((".yml", ".yaml")):
        return "conda"
    if lower == "pyproject.toml":
        return "pyproject"
    if lower == "setup.cfg":
        return "setupcfg"
    if lower.endswith((".cu", ".cuh")):
        return "cuda"
    if lower.endswith((".yml", ".yaml")):
        return "yaml"
    return None


# pathspec turns each `*` into `.*`-like regex parts, and `re` backtracks exponentially on a
# pattern such as `*a*a*a...*b` against a long name: a committed .gitignore could hang the run.
MAX_WILDCARDS = 8


def gitignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """Gitignore-style patterns, matched by pathspec's own `re` backend.

    pathspec picks google-re2 or hyperscan when either is installed (cel-python pulls in re2),
    and those encode every path as UTF-8: a file name that is not valid UTF-8 (surrogate
    escapes) would stop the whole run. The `re` backend takes any str.
    """
    return pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")


def too_many_wildcards(pattern: str) -> bool:
    """True for a gitignore-style pattern with more than MAX_WILDCARDS `*` (a `**` counts once)."""
    return pattern.replace("**", "*").count("*") > MAX_WILDCARDS


def is_test_path(path: str) -> bool:
    return bool(_TEST_RE.search(path.replace(os.sep, "/")))


def framework_root(path: str | os.PathLike[str], names: frozenset[str], known: dict[str, str | None]) -> str | None:
    """The folder of the top-level package named in `names` that `path` lies under, or None.

    A top-level package is a folder with an `__init__.py` whose parent has none
    (`site-packages/torch`, `third_party/torch`); every file below it counts, Python or not
    (`torch/include/ATen/cuda/*.cuh`). A subpackage of another package (`mylib/torch`) is not
    one. Only names are looked at, nothing is read; `known` caches the answer per folder.
    """
    folder = os.path.dirname(os.path.abspath(path))
    walked: list[str] = []
    found: str | None = None
    while folder not in known:
        walked.append(folder)
        if os.path.basename(folder) in names and os.path.isfile(os.path.join(folder, "__init__.py")):
            parent = os.path.dirname(folder)
            if parent == folder or not os.path.isfile(os.path.join(parent, "__init__.py")):
                found = folder
                break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    else:
        found = known[folder]
    for inner in walked:
        known[inner] = found
    return found


def _gitignore(root: Path) -> pathspec.GitIgnoreSpec | None:
    ignore = root / ".gitignore"
    try:
        if not ignore.is_file() or ignore.stat().st_size > 1024 * 1024:
            return None
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return gitignore_spec([line for line in lines if not too_many_wildcards(line)])


def discover(paths: Iterable[str | os.PathLike[str]], exclude: Iterable[str] = (), *, force_exclude: bool = False,
             root: Path | None = None, errors: list[tuple[Path, str]] | None = None,
             classify: Callable[[Path], str | None] = file_kind) -> Iterator[tuple[Path, str]]:
    """Yield `(path, kind)` for every scannable file under `paths`, in sorted order.

    `classify` names a file's kind, or None to leave it (default `file_kind`; `assess` also
    reads model configuration files).

    A file named directly is yielded when its kind is known, whatever the excludes say (as ruff
    does), unless `force_exclude` (ruff's `--force-exclude`; pre-commit names every file): then
    `exclude` applies to it too, matched relative to `root` (the configuration's folder, else
    the working directory). Folders are walked with `.gitignore` files honoured at every level,
    and `.git`, virtual environments and build folders skipped; symbolic links to folders are not
    followed, not even when named (a repository may commit a link to the user's home), and a
    linked file whose target lies outside the walked folder is not read. `exclude` holds
    gitignore-style patterns. What is skipped for these reasons, and a folder that cannot be
    listed, is added to `errors` (path, message) when given, and the walk goes on. Special files (FIFOs, devices) are yielded by
    name; reading them is `fsutil.read_limited`'s job, which refuses them.

    Raises:
        FileNotFoundError: a path does not exist.
    """
    excluded = gitignore_spec(list(exclude))
    base = (root or Path.cwd()).resolve()
    for raw in paths:
        given = Path(raw)
        if not os.path.lexists(given):
            raise FileNotFoundError(f"{raw}: no such file or directory")
        is_dir = given.is_dir()
        if force_exclude and _named_excluded(given, is_dir, excluded, base):
            continue
        if is_dir and given.is_symlink():
            if errors is not None:
                errors.append((given, "not scanned: a symbolic link to a folder (not followed)"))
            continue
        if not is_dir:
            kind = classify(given) or (_shebang_kind(given) if classify is file_kind else None)
            if kind:
                yield given, kind
            continue
        yield from _walk(given, excluded, errors, classify)


_SHEBANG = re.compile(rb"#![ \t]*(?:\S*/)?(?:env[ \t]+(?:-\S+[ \t]+)*)?(?P<interpreter>[\w.+-]+)")


def _shebang_kind(path: Path) -> str | None:
    """A file named directly with no known name (`train_job`, `launch.slurm.j2`): its `#!` line
    says `shell` or `python`, as ruff reads a named file's shebang. Only the first 256 bytes of a
    regular file are read."""
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return None
    found = _SHEBANG.match(head)
    if found is None:
        return None
    interpreter = found.group("interpreter").decode("ascii", "replace")
    if interpreter in ("sh", "bash", "zsh", "dash", "ksh"):
        return "shell"
    return "python" if re.fullmatch(r"python[\d.]*", interpreter) else None


def _named_excluded(path: Path, is_dir: bool, excluded: pathspec.GitIgnoreSpec, base: Path) -> bool:
    """Does an exclude pattern match `path` (relative to `base`) or a folder above it?"""
    try:
        rel = path.resolve().relative_to(base)
    except (ValueError, OSError):
        rel = Path(os.path.normpath(path))
    parts = rel.as_posix().split("/")
    for i in range(1, len(parts) + 1):
        folder = i < len(parts) or is_dir
        if excluded.match_file("/".join(parts[:i]) + ("/" if folder else "")):
            return True
    return False


def _walk(root: Path, excluded: pathspec.GitIgnoreSpec, errors: list[tuple[Path, str]] | None,
          classify: Callable[[Path], str | None] = file_kind) -> Iterator[tuple[Path, str]]:
    # Paths are handled as strings relative to `root` ("a/b"; "" is `root`): a Path per file
    # costs more than the rest of a warm scan of a large tree.
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def unreadable(exc: OSError) -> None:
        if errors is not None:
            errors.append((Path(exc.filename or root), f"folder not scanned: cannot list it: {exc.strerror}"))

    real_root = os.path.realpath(root)
    top = os.fspath(root)
    exclude_any = bool(excluded.patterns)
    by_name = classify is file_kind

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        here_rel = dirpath[len(top):].lstrip(os.sep).replace(os.sep, "/")
        specs = [(base, spec) for base, spec in specs if base == "" or here_rel == base or here_rel.startswith(base + "/")]
        if ".gitignore" in filenames:
            spec = _gitignore(Path(dirpath))
            if spec is not None:
                specs.append((here_rel, spec))

        def ignored(name: str, is_dir: bool) -> bool:
            rel = f"{here_rel}/{name}" if here_rel else name
            suffix = "/" if is_dir else ""
            if exclude_any and excluded.match_file(rel + suffix):
                return True
            for base, s in specs:
                if s.match_file((rel[len(base) + 1:] if base else rel) + suffix):
                    return True
            return False

        # os.path.isfile is False on any OSError (a folder without the x bit: os.walk reports it).
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not d.endswith(".egg-info") and not os.path.isfile(os.path.join(dirpath, d, "pyvenv.cfg"))
            and not ignored(d, True)
        )
        here: Path | None = None
        parent = os.path.basename(dirpath)
        for name in sorted(filenames):
            if by_name:
                kind = _kind(name, parent)
            else:
                here = here or Path(dirpath)
                kind = classify(here / name)
            if kind and not ignored(name, False):
                here = here or Path(dirpath)
                p = here / name
                if os.path.islink(p) and not is_inside(os.path.realpath(p), real_root):
                    if errors is not None:
                        errors.append((p, "file not scanned: a symbolic link to outside the scanned folder"))
                    continue
                yield p, kind
