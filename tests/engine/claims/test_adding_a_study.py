"""docs/ENGINE.md's "Adding a study", followed on a tiny study: a preset, one module and one page, and nothing
else edited. Its status row, its reader and its place in the paper run come from the registry, and the
generator fills its page."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine.claims.studies as studies_package
from engine.claims import docs, paper_sweeps, readers, registry, status
from engine.config.presets import load_preset
from engine.records.group_dir import Member
from engine.rundir import keep_group
from tests.engine.sweep.fakegroup import fake_group

ROOT = Path(__file__).resolve().parents[3]
KEY = "tiny_study"

PRESET = (ROOT / "tests" / "data" / "tiny_sweep.toml").read_text()  # 2 arms × 2 ops × 2 seeds on p = 11

MODULE = '''"""Study: Adam-LR against Adam on the tiny sweep (ours)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, part, rows, seeds_by_tasks, select, sooner
from engine.records.group_dir import Group


def read(group: Group) -> Reading:
    """Adam-LR reaches 95% val in fewer steps than Adam, paired by seed."""
    rs = rows(group)
    o, _, _ = sooner(select(rs, "adamlr"), select(rs, "adam"))
    k = o.k_of_n("pairs fewer steps")
    return Reading([part("Adam-LR sooner", o, k)], f"Adam-LR sooner in {k}", k, seeds_by_tasks(group), {"k": k})


CLAIM = Claim(
    "tiny_study",
    "",
    "Adam-LR against Adam, tiny (ours)",
    "tiny_study",
    "inconclusive",
    "sooner in {k}",
    ours=True,
    read=read,
    row=10_000,
    paper=9,
    plan="(tiny) Adam-LR against Adam",
)
'''

PAGE = """# Adam-LR against Adam, tiny

<!-- table: tiny_study/command -->
<!-- end -->

<!-- table: tiny_study/verdict -->
<!-- end -->

Adam-LR is sooner in <!-- n: tiny_study/k --><!-- end -->.

## What the data do not show

Anything past 40 steps.

<!-- table: tiny_study/report -->
<!-- end -->

<!-- table: tiny_study/provenance -->
<!-- end -->
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch root with the pages outside docs/claims/ (docs.PAGES), and no kept data (every other claim is
    pending there, so the generator reads only the tiny study), plus a presets dir and a studies dir of its own."""
    for rel in docs.PAGES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    (tmp_path / "docs" / "claims").mkdir()
    shutil.copytree(ROOT / "presets", tmp_path / "presets")  # a pending claim's row names its preset's size
    (tmp_path / "studies").mkdir()
    import engine.config.presets

    monkeypatch.setattr(engine.config.presets, "presets_dir", lambda: tmp_path / "presets")
    monkeypatch.setattr(studies_package, "__path__", [*studies_package.__path__, str(tmp_path / "studies")])
    registry.every_study.cache_clear()
    yield tmp_path
    sys.modules.pop(f"engine.claims.studies.{KEY}", None)
    registry.every_study.cache_clear()
    status._read.cache_clear()


def _curve(m: Member) -> dict[str, list[float]]:
    return {"val_acc": [0.1, 0.5, 1.0 if m.arm == "adamlr" else 0.6]}


def test_a_study_is_a_preset_a_module_and_a_page(site: Path) -> None:
    before = {p: p.read_text() for p in site.rglob("*.md")}
    # 1. the preset, 2. the module, 3. the page: the three files the section names
    (site / "presets" / f"{KEY}.toml").write_text(PRESET)
    (site / "studies" / f"{KEY}.py").write_text(MODULE)
    (site / "docs" / "claims" / f"{KEY}.md").write_text(PAGE)
    # its kept data, as `grok report GROUP --keep docs/data/PRESET` writes it
    group = fake_group(site, load_preset(KEY).sweep, _curve, [0, 20, 40], preset=KEY)
    keep_group(group.dir, site / "docs" / "data" / KEY, commit="0000000", machine="a test", kept="2026-01-01")

    claim = registry.get(KEY)  # the registry found it: a status row, a reader and a sweep of the paper run
    assert claim.has_page and readers()[KEY] is claim.read
    assert paper_sweeps()[-1] == (KEY, "(tiny) Adam-LR against Adam")

    assert docs.main(["--root", str(site)]) == 0  # `python -m engine.claims.docs` fills every region
    page = (site / "docs" / "claims" / f"{KEY}.md").read_text()
    assert "**Verdict: inconclusive** (the strongest word the kept data allow: inconclusive)." in page
    assert "- *Adam-LR sooner*: unread, 0 of 4 pairs fewer steps (4 undecided" in page
    assert "grok sweep --preset tiny_study --workers 1" in page and "| adam |" in page
    assert "Kept data: [docs/data/tiny_study](../data/tiny_study/), from group" in page
    beyond = docs.region(site, "table", "status/beyond")
    row = next(line for line in beyond.splitlines() if f"(claims/{KEY}.md)" in line)
    assert row.startswith("| Adam-LR against Adam, tiny (ours) | inconclusive: sooner in 0 of 4 pairs fewer steps")
    assert status.check(site, claim) is None
    assert not [d for d in docs.differences(site) if KEY in d]  # the page is as the data give it
    # nothing else was edited by hand: the other pages changed inside their generated regions only
    for p, text in before.items():
        assert docs.REGION.sub("", p.read_text()) == docs.REGION.sub("", text), p
