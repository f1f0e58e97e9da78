"""Atomic, faithful file writes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "digest", "ChangedOnDisk"]


class ChangedOnDisk(RuntimeError):
    """The file changed between our read and our write; it was left alone."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes, expected_digest: str | None = None) -> None:
    """Replace `path` with `data` atomically, keeping its mode.

    Writes a temporary file in the same folder, fsyncs it, then renames it over `path`. A
    symbolic link is followed: its target is rewritten and the link stays a link.

    Raises:
        ChangedOnDisk: `expected_digest` is given and the file no longer has it.
        OSError: the folder is not writable.
    """
    path = Path(os.path.realpath(path))
    if expected_digest is not None and digest(path.read_bytes()) != expected_digest:
        raise ChangedOnDisk(f"{path}: changed on disk since it was read; not written")
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".nrn-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
