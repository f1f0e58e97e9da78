"""Signed JSON files in the user's cache folder: the one store of data kept between runs.

Used by the scan's result cache (`migrator.scan.cache`) and the catalogue cache. A scanned
repository is hostile input, so nothing is trusted unless it carries this user's signature:
each file is signed with HMAC-SHA256 under a per-user secret kept in the cache folder (mode
0600); a file written by anyone else, corrupt or truncated, reads back as None. The folder
holds a `CACHEDIR.TAG` (https://bford.info/cachedir/) and a `.gitignore` of `*`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from migrator.core.fsutil import replace_file, write_temp

__all__ = ["user_cache_dir", "signed_dump", "signed_load"]

CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by neuron-migrator.\n"
                "# For information about cache directory tags, see https://bford.info/cachedir/\n")


def user_cache_dir() -> Path:
    """The per-user cache folder (`NRN_CACHE_DIR` overrides it, for tests and CI caches)."""
    override = os.environ.get("NRN_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("neuron-migrator", appauthor=False))


def _secret() -> bytes:
    """The per-user signing key (created on first use, 32 random bytes, mode 0600)."""
    folder = user_cache_dir()
    path = folder / "secret.key"
    try:
        data = path.read_bytes()
        if len(data) == 32:
            return data
    except OSError:
        pass
    key = secrets.token_bytes(32)
    try:
        _prepare(folder)
        tmp = write_temp(folder, key, mode=0o600)
        try:
            os.link(tmp, path)  # first writer wins; a concurrent run reads the winner's key
        except FileExistsError:
            os.unlink(tmp)
            data = path.read_bytes()
            return data if len(data) == 32 else key
        os.unlink(tmp)
    except OSError:
        pass  # no writable cache folder: this run's key signs nothing that is read back
    return key


def _prepare(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# created by neuron-migrator\n*\n")):
        if not (folder / name).exists():
            (folder / name).write_text(text, encoding="utf-8")


def signed_dump(path: Path, payload: Any) -> None:
    """Write `payload` as signed JSON, atomically. Raises OSError."""
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode()
    mac = hmac.new(_secret(), body, hashlib.sha256).hexdigest()
    _prepare(path.parent)
    replace_file(path, mac.encode() + b"\n" + body)


def signed_load(path: Path, limit: int = 512 * 1024 * 1024) -> Any:
    """The payload of a file `signed_dump` wrote with this user's key, else None (never raises)."""
    try:
        if not path.is_file() or path.stat().st_size > limit:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    mac, _, body = raw.partition(b"\n")
    expected = hmac.new(_secret(), body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(mac, expected):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None
