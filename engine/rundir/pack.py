"""A kept group's member directories in one file, `members.tar.xz`, and read back as directories.

`grok report GROUP --keep DIR` (engine/rundir/keep.py) writes group.json, results.csv and kept.json as text,
and packs every member's thinned config.json, summary.json and metrics.csv into PACK: a fork study's hundreds
of small files take a tenth of their size there. The pack is written byte for byte the same for the same
members (sorted names, no dates or owners), so keeping a group again changes it only where a number did. A
reader never sees the pack: `Group.open` (engine/records/group_dir.py) finds the member directories unpacked
into a temporary directory that lives as long as the process. An archive is data, never code: only plain files
and directories with relative names inside it are unpacked, anything else refused with one line.
"""

from __future__ import annotations

import atexit
import io
import lzma
import shutil
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Final

from engine.config import ConfigError
from engine.rundir.atomic import replace_atomic

PACK = "members.tar.xz"
XZ_PRESET: Final = 9  # the smallest file; a kept group is written once and read many times
MAX_UNPACKED = 2**30  # bytes: a kept group unpacks to a few MB; an archive claiming more is not one of ours

_unpacked: dict[tuple[str, int, int], Path] = {}  # (pack, mtime_ns, size) -> the directory it was unpacked into
_lock = threading.Lock()


def pack_members(root: Path, names: list[str], dst: Path) -> int:
    """Write the directories `names` under `root` (plain files only) into `dst` (PACK); its size in bytes."""
    odd = [n for n in names if Path(n).name != n or n in ("", ".", "..")]
    if odd:
        raise ConfigError(f"cannot keep members outside their group: {', '.join(odd[:3])}")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=XZ_PRESET, format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(names):
            tar.addfile(_entry(name, tarfile.DIRTYPE, 0o755))
            for f in sorted(p for p in (root / name).iterdir() if p.is_file()):
                data = f.read_bytes()
                tar.addfile(_entry(f"{name}/{f.name}", tarfile.REGTYPE, 0o644, len(data)), io.BytesIO(data))
    replace_atomic(dst, lambda tmp: tmp.write_bytes(buf.getvalue()))
    return len(buf.getvalue())


def _entry(name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
    """A tar entry with nothing of the machine in it: no date, owner or group."""
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size, info.mtime = kind, mode, size, 0
    return info


def unpacked(group_dir: Path) -> Path:
    """The directory holding `group_dir`'s members unpacked from its PACK (once per process and version of the
    pack); ConfigError naming the pack if it is not one this module wrote."""
    pack = group_dir / PACK
    st = pack.stat()
    key = (str(pack.resolve()), st.st_mtime_ns, st.st_size)
    with _lock:
        if key not in _unpacked:
            _unpacked[key] = _unpack(pack)
        return _unpacked[key]


def _unpack(pack: Path) -> Path:
    out = Path(tempfile.mkdtemp(prefix="grok-kept-"))
    atexit.register(shutil.rmtree, out, True)
    try:
        with tarfile.open(pack, mode="r:xz") as tar:
            entries = tar.getmembers()
            for e in entries:
                parts = Path(e.name).parts
                if not (e.isfile() or e.isdir()) or Path(e.name).is_absolute() or ".." in parts or not parts:
                    raise ConfigError(f"{pack}: not a kept group's members ({e.name!r} is not a plain file or folder)")
            if sum(e.size for e in entries) > MAX_UNPACKED:
                raise ConfigError(f"{pack}: not a kept group's members (more than {MAX_UNPACKED:,} bytes unpacked)")
            if hasattr(tarfile, "data_filter"):  # the standard library's own check too (3.11.4 and later)
                tar.extractall(out, members=entries, filter="data")
            else:
                tar.extractall(out, members=entries)
    except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as e:
        shutil.rmtree(out, ignore_errors=True)
        raise ConfigError(f"{pack}: unreadable kept members ({e})") from None
    return out
