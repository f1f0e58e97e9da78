"""Atomic, faithful file writes."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "replace_file", "is_inside", "digest", "read_limited", "ChangedOnDisk", "Unreadable", "WriteRefused"]


class ChangedOnDisk(RuntimeError):
    """The file changed between our read and our write; it was left alone."""


class Unreadable(OSError):
    """Not read: not a regular file (FIFO, device, socket) or larger than the limit."""


def read_limited(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    Opened without blocking (a FIFO does not hang the run) and checked after opening, so a
    symlink to `/dev/zero` or a FIFO is refused rather than read forever.

    Raises:
        Unreadable: not a regular file, or over `limit` bytes (the message says which).
        OSError: it cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise Unreadable(f"{info.st_size / 2**20:.1f} MiB is over the {limit / 2**20:.1f} MiB limit (max-file-size)")
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:  # the file grew while it was read
                raise Unreadable(f"over the {limit / 2**20:.1f} MiB limit (max-file-size)")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a special file"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_temp(folder: Path, data: bytes, *, mode: int | None = None, sync: bool = False) -> Path:
    """Write `data` to a new temporary file in `folder`, ready to be renamed over a target
    there (the one way every output of the tool is written: fix, baselines, caches, configs).

    The name is short (`.nrn-XXXX.tmp`), so a target with a 255-byte name still has room; the
    file is created exclusively (never through a planted link). `mode` defaults to what a new
    file gets under the umask; `sync` flushes it to disk first.

    Raises:
        OSError: the folder is not writable (no temporary file is left).
    """
    fd, tmp = tempfile.mkstemp(prefix=".nrn-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def replace_file(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write an output file of ours (a baseline, a cache) atomically. A symbolic link at `path`
    is replaced, never followed (a repository may commit one pointing at the user's files).

    Raises:
        WriteRefused: `path` is a folder or another non-regular file.
        OSError: the folder is not writable.
    """
    path = Path(path)
    if os.path.lexists(path) and not path.is_symlink() and not path.is_file():
        raise WriteRefused(f"{path}: not a regular file; not written")
    tmp = write_temp(path.parent, data, mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class WriteRefused(OSError):
    """A rewrite that would escape the scanned folders or lose a property of the file."""


def is_inside(path: str, root: str) -> bool:
    """True when real path `path` is `root` or lies under it (both already resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def atomic_write(path: Path, data: bytes, expected_digest: str | None = None,
                 roots: "list[str | os.PathLike[str]] | None" = None) -> None:
    """Replace `path` with `data` atomically, keeping its mode, owner and links.

    Writes a temporary file in the same folder, fsyncs it, gives it the file's mode and owner,
    then renames it over `path`. A symbolic link is followed: its target is rewritten and the
    link stays a link, but only when the target lies inside one of `roots` (the real paths of
    the folders being fixed). A file with more than one hard link, a read-only file, and a file
    whose owner cannot be kept are refused rather than silently changed.

    Raises:
        ChangedOnDisk: `expected_digest` is given and the file no longer has it.
        WriteRefused: the write would leave `roots`, split hard links, ignore a read-only mode
            or change the owner (the message says which; nothing was written).
        OSError: the folder is not writable.
    """
    real = os.path.realpath(path)
    if roots is not None and not any(is_inside(real, os.path.realpath(r)) for r in roots):
        raise WriteRefused(f"{path}: links to {real}, outside the folders being fixed; not written")
    info = os.stat(real)
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"{path}: not a regular file; not written")
    if info.st_nlink > 1:
        raise WriteRefused(f"{path}: has {info.st_nlink} hard links and a rewrite would split them; not written")
    if not info.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise WriteRefused(f"{path}: is read-only; not written")
    target = Path(real)
    if expected_digest is not None and digest(target.read_bytes()) != expected_digest:
        raise ChangedOnDisk(f"{path}: changed on disk since it was read; not written")
    tmp = write_temp(target.parent, data, mode=0o600, sync=True)
    try:
        mine = os.stat(tmp)
        if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except PermissionError:
                raise WriteRefused(f"{path}: owned by another user (uid {info.st_uid}); a rewrite would change "
                                   "the owner; not written") from None
        os.chmod(tmp, info.st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
