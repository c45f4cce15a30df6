"""A kept group's members packed in one file (engine/rundir/pack.py): the same bytes for the same members,
read back as directories, and an archive that is not one we wrote refused with one line."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from engine.config import ConfigError
from engine.rundir.pack import PACK, pack_members, unpacked
from tests.conftest import grok


def _members(root: Path) -> list[str]:
    for name, acc in (("m000-a-s0", 0.5), ("m001-a-s1", 0.75)):
        (root / name).mkdir(parents=True)
        (root / name / "summary.json").write_text(json.dumps({"final_val_acc": acc}))
        (root / name / "metrics.csv").write_text(f"step,val_acc\n0,0.01\n100,{acc}\n")
    return ["m001-a-s1", "m000-a-s0"]


def test_a_pack_is_the_same_bytes_for_the_same_members_and_reads_back(tmp_path: Path) -> None:
    names = _members(tmp_path / "src")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pack_members(tmp_path / "src", names, a / PACK)
    (tmp_path / "src" / "m000-a-s0" / "metrics.csv").touch()  # a later date changes nothing
    pack_members(tmp_path / "src", list(reversed(names)), b / PACK)
    assert (a / PACK).read_bytes() == (b / PACK).read_bytes()
    out = unpacked(a)
    assert sorted(p.name for p in out.iterdir()) == ["m000-a-s0", "m001-a-s1"]
    assert (out / "m001-a-s1" / "metrics.csv").read_text() == "step,val_acc\n0,0.01\n100,0.75\n"
    assert unpacked(a) == out  # once per process


def test_a_pack_refuses_members_outside_the_group(tmp_path: Path) -> None:
    _members(tmp_path / "src")
    with pytest.raises(ConfigError, match="outside their group"):
        pack_members(tmp_path / "src", ["../m000-a-s0"], tmp_path / PACK)


def _foreign(path: Path, add: object) -> None:
    with tarfile.open(path / PACK, mode="w:xz") as tar:
        add(tar)  # type: ignore[operator]


@pytest.mark.parametrize("kind", ["link", "absolute", "parent"])
def test_an_archive_with_links_or_paths_out_is_refused(tmp_path: Path, kind: str) -> None:
    def add(tar: tarfile.TarFile) -> None:
        if kind == "link":
            info = tarfile.TarInfo("m000/summary.json")
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
        else:
            data = b"{}"
            info = tarfile.TarInfo("/tmp/evil.json" if kind == "absolute" else "m000/../../evil.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

    _foreign(tmp_path, add)
    with pytest.raises(ConfigError, match="not a plain file or folder"):
        unpacked(tmp_path)
    assert not (tmp_path.parent / "evil.json").exists()


def test_an_archive_claiming_more_than_a_kept_group_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.rundir.pack as pack

    _members(tmp_path / "src")
    pack_members(tmp_path / "src", ["m000-a-s0"], tmp_path / PACK)
    monkeypatch.setattr(pack, "MAX_UNPACKED", 10)  # the two small files are more than 10 bytes
    with pytest.raises(ConfigError, match="more than 10 bytes unpacked"):
        unpacked(tmp_path)


def test_a_broken_pack_is_one_line_and_exit_2(tmp_path: Path) -> None:
    group = Path(__file__).resolve().parents[2] / "docs" / "data" / "fig7_hessian"
    kept = tmp_path / "kept"
    kept.mkdir()
    for f in group.iterdir():
        (kept / f.name).write_bytes(f.read_bytes())
    assert grok("report", str(kept)).returncode == 0
    (kept / PACK).write_bytes((group / PACK).read_bytes()[:200])  # cut short, as by a full disk
    r = grok("report", str(kept))
    assert r.returncode == 2 and "unreadable kept members" in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {kept / PACK}") and "group file" not in r.stderr
