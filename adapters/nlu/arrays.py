"""A model's arrays kept as .npy files and read memory-mapped: one copy per machine.

Each fitted model is a folder of .npy files named after a digest of what it was made from (the
banks' sentences, the model's files), so banks edited by hand or by a label make another folder
and never read a stale one. The files are opened read-only with numpy's memory map: the pages are
the operating system's page cache, shared by every worker on the machine that opens the same
folder, read from disk only where a message touches them, and given back under memory pressure
without swapping. A worker's private memory then holds the model's Python objects only (the
tokenizer, the vocabulary), not its arrays.

A folder is written whole or not at all (written beside, then renamed), so workers starting
together may each write one and the others read whichever landed; a damaged folder reads as
missing and is made again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import mmap
import os
import re
import shutil
from pathlib import Path

import numpy as np

KEPT = 4  # folders of one kind kept, the most recently used
log = logging.getLogger("agentbot.nlu")


def digest(*parts: object) -> str:
    """A name for what `parts` (JSON values) make: equal parts, equal name."""
    key = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class ArrayFolder:
    """Read and write one kind of model's arrays under `root` (made when first written).

    Args:
        root: the cache folder (the app's `var/models`).
        kind: the model's name, the prefix of its folders (`lexical`, `wordllama`).
    """

    def __init__(self, root: Path, kind: str):
        self.root = root
        self.kind = kind

    def path(self, key: str) -> Path:
        return self.root / f"{self.kind}-{key}"

    def load(self, key: str, names: tuple[str, ...], whole: tuple[str, ...] = ()) -> dict[str, np.ndarray] | None:
        """The arrays `names` kept under `key`, memory-mapped read-only; None when there are none
        or a file is unreadable (logged: the caller makes them again). Those named in `whole` are
        read whole by every message (read ahead), the others a few rows at a time."""
        folder = self.path(key)
        if not folder.is_dir():
            return None
        try:
            arrays = {name: _mapped(folder / f"{name}.npy", by_row=name not in whole) for name in names}
        except Exception as e:  # noqa: BLE001 - whatever a damaged file raises, the model is made again
            log.warning("making the %s model again: %s is unreadable (%s)", self.kind, folder, e)
            shutil.rmtree(folder, ignore_errors=True)  # so that it is written whole again
            return None
        with contextlib.suppress(OSError):
            os.utime(folder)  # used now: the last to go when the folder is pruned
        return arrays

    def save(self, key: str, arrays: dict[str, np.ndarray], whole: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
        """Keeps `arrays` under `key` and returns them memory-mapped from there, so the process
        that made them shares them too; when they cannot be written, returns them as given."""
        folder = self.path(key)
        part = folder.with_name(f"{folder.name}.{os.getpid()}.part")
        try:
            part.mkdir(parents=True, exist_ok=True)
            for name, array in arrays.items():
                np.save(part / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
            _uncache(part)
            try:
                os.rename(part, folder)  # whole or not at all
            except OSError:
                if not folder.is_dir():
                    raise
                shutil.rmtree(part, ignore_errors=True)  # another worker wrote the same arrays first
        except OSError as e:
            shutil.rmtree(part, ignore_errors=True)
            log.warning("the %s model is not kept (%s): the next start makes it again", self.kind, e)
            return arrays
        self._prune()
        return self.load(key, tuple(arrays), whole) or arrays

    def _prune(self) -> None:
        """Banks edited again and again leave a folder each: all but the `KEPT` most recently used go."""
        name = re.compile(rf"{re.escape(self.kind)}-[0-9a-f]{{32}}")
        with contextlib.suppress(OSError):
            kept = [p for p in self.root.iterdir() if name.fullmatch(p.name)]
            for old in sorted(kept, key=lambda p: p.stat().st_mtime, reverse=True)[KEPT:]:
                shutil.rmtree(old, ignore_errors=True)


def _mapped(path: Path, by_row: bool) -> np.ndarray:
    """The array in `path`, memory-mapped read-only.

    An array read `by_row` is marked as read at random (madvise): a message reads a few rows of a
    table, and the kernel's read-ahead would otherwise fill the page cache with large folios that
    every fault then maps whole (8 MB of the lexical weights mapped for one message, against 4 KB
    a row). One read whole is read ahead.
    """
    with path.open("rb") as file:
        major, minor = np.lib.format.read_magic(file)
        read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read_header(file)
        if fortran_order or dtype.hasobject:
            raise ValueError(f"{path.name} is not a plain C-ordered array")
        offset = file.tell()
        count = math.prod(shape)
        if count == 0:  # nothing to map
            return np.zeros(shape, dtype=dtype)
        if offset + count * dtype.itemsize > os.fstat(file.fileno()).st_size:
            raise ValueError(f"{path.name} is shorter than its header says")
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    mapped.madvise(mmap.MADV_RANDOM if by_row else mmap.MADV_WILLNEED)
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)


def _uncache(folder: Path) -> None:
    """Drops the just written files from the page cache: writing leaves them there in large
    folios, which the first reads would map whole; read again, they come in a page at a time."""
    for file in folder.iterdir():
        with contextlib.suppress(OSError), file.open("rb") as f:
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
