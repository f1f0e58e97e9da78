"""What a scan or fix is asked to do (`ScanOptions`), shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["ScanOptions"]


@dataclass(frozen=True)
class ScanOptions:
    """What to scan for.

    Attributes:
        target: `portable` (default), `neuron`, `xla` or `inf1`.
        select/ignore: rule id prefixes (`NRN2` = every runtime rule).
        exclude: gitignore-style patterns of paths to skip.
        test_files: `scan` (default; findings are marked `is_test`), `lower` (one severity lower
            in test files) or `exclude` (test files are not reported).
        per_file_ignores: (gitignore-style pattern, rule id prefixes) pairs; patterns are
            relative to `root` (the folder of the configuration file).
        extend_rules: extra rule folders (team rules, NRN9xx).
        report_unused_noqa: report `# noqa` codes that suppress nothing (NRN001).
        jobs: worker processes (1 = in process; never more than the CPUs or the files).
        force_exclude: apply `exclude` to files named in `paths` too (pre-commit names each file).
        cache_dir: where to keep results between runs (None = no cache; the CLI uses the
            user cache folder, see `cache.user_cache_dir`).
        max_file_size: files larger than this many bytes are not read (one NRN000 finding
            instead); parsing costs about 500 bytes of memory per byte of Python source.
        torch_version: the PyTorch version the project runs (`"2.9"`; the `torch-version`
            setting). A fix that needs a newer one (`requires_torch` in its target) is left for
            a person; None: no limit beyond the target's own minimum (rules/targets.yaml).
        fix_edits: give each fixable finding its fix as edits (`Fix.edits`; JSON and SARIF
            carry them). Costs one in-memory `fix` of each file that has fixable findings.
        framework_source: also scan and fix PyTorch's own source (files of the packages named
            `framework_packages` in rules/vocabulary.yaml). By default a path scan reports one
            NRN002 finding per such package instead (rules/tool/NRN002-framework-source.yaml).
        progress: callback(done, total) after each file, for progress bars.
    """

    target: str = "portable"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: Path | None = None
    extend_rules: tuple[Path, ...] = ()
    report_unused_noqa: bool = False
    jobs: int = 1
    cache_dir: Path | None = None
    force_exclude: bool = False
    max_file_size: int = 5 * 1024 * 1024  # the largest .py file in PyTorch 2.13 is 1.3 MiB
    test_files: str = "scan"
    torch_version: str | None = None
    fix_edits: bool = False
    framework_source: bool = False
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)
