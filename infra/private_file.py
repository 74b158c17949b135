"""Writing a secret-bearing file: mode 0600 from its first byte, whole or not at all.

The text goes to a temp file beside the target (created 0600, fsynced), which then either
replaces the target (``os.replace``) or, ``exclusive``, is hard-linked to it so that processes
starting together agree on the first one written. The directory is fsynced so the rename
survives a crash. Used by the sealed keyring, the legacy master-key file and the webhook
signing keys.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_private(path: str | os.PathLike[str], text: str, *, exclusive: bool = False) -> bool:
    """Write ``text`` to ``path`` atomically with mode 0600.

    Returns ``False`` (and leaves the file alone) when ``exclusive`` and it exists already.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if exclusive:
            try:
                os.link(tmp, target)
            except FileExistsError:
                return False
        else:
            os.replace(tmp, target)
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)
