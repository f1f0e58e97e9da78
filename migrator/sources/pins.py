"""The PyTorch version a project pins, read from its dependency files, for `fix`.

A fix that needs a newer PyTorch than the project runs (`torch.accelerator`, PyTorch 2.9) would
break the program on the GPU it runs on today. Where no `torch-version` is configured, the
project's own exact pin (`torch==2.3.1`, as NRN804 reports it) stands for it: the lowest such
pin in the dependency files at the top of the project (or in its `requirements/` folder), so a
scan of the whole tree and the pre-commit hook on one file agree. Nothing is imported or run;
files are read as text, links are not followed, and large files are not read.
"""

from __future__ import annotations

import re
from pathlib import Path

from migrator.sources.codec import decode_text

__all__ = ["pinned_torch"]

# ASCII digits, at most 6 a part: `torch==٢.٣` is no pin pip reads, and a part of thousands
# of digits is no version (one such line must not end the read of the others).
_PIN = re.compile(r"(?<![\w.-])torch\s*==\s*[\"']?v?([0-9]{1,6})\.([0-9]{1,6})(?:\.[0-9]+)*(?:\+\w+)?(?![\w.])", re.ASCII)
_NAMES = re.compile(r"(?i)^(requirements[\w.-]*\.(txt|in)|pyproject\.toml|setup\.cfg|environment[\w.-]*\.ya?ml"
                    r"|dockerfile[\w.-]*|[\w.-]+\.dockerfile)$")
_MAX_BYTES = 1 << 20


def pinned_torch(root: Path) -> str | None:
    """The lowest `torch==X.Y` pin (as "X.Y") in the dependency files directly in `root` and in
    `root/requirements/`, or None when there is none."""
    found: list[tuple[int, int]] = []
    for folder in (root, root / "requirements"):
        try:
            # The root as the user named it (a link to the project is the project); a
            # `requirements/` link inside it may lead anywhere and is not read.
            entries = sorted(folder.iterdir()) if folder.is_dir() and (folder == root or not folder.is_symlink()) else []
        except OSError:
            continue
        for path in entries:
            wanted = _NAMES.match(path.name) or (folder != root and path.suffix in (".txt", ".in"))
            if not wanted or path.is_symlink():
                continue
            try:
                if not path.is_file() or path.stat().st_size > _MAX_BYTES:
                    continue
                text = decode_text(path.read_bytes())  # as the scan reads the file (UTF-16 with a BOM too)
            except OSError:
                continue
            for line in text.splitlines():
                code = line.split("#", 1)[0]  # a comment names no pin
                found.extend((int(m.group(1)), int(m.group(2))) for m in _PIN.finditer(code))
    if not found:
        return None
    major, minor = min(found)
    return f"{major}.{minor}"
