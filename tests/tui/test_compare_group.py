"""The compare view opens a sweep group directory: one mean val_acc curve and min–max band per arm × grid cell."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from engine.config import ConfigError
from engine.records.group_dir import Group, SweepSpec
from engine.sweep.member import member_spec, run_member
from engine.sweep.spec import expand
from grok_tui.app import create_app
from grok_tui.groupdata import load_group
from grok_tui.screens.compare import CompareScreen
from grok_tui.widgets.chart import Chart
from tests.conftest import tiny_config
from tests.tui.conftest import aio, wait_for

ARMS = {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}


@pytest.fixture(scope="module")
def group_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sweep through the engine: 2 arms × 2 seeds on p = 7, 40 steps, evaluated every 10."""
    base = tiny_config(data__p=7, train__max_steps=40, train__eval_every=10)
    spec = SweepSpec(seeds=(0, 1), compare="adam", arms=ARMS)
    group = Group.create(tmp_path_factory.mktemp("sweeps"), "tiny", base, spec, [m for m, _ in expand(base, spec)])
    for m in group.members:
        group.record(run_member(member_spec(group, m), None, lambda: False))
    return group.dir


def test_members_are_grouped_by_arm(group_dir: Path) -> None:
    data = load_group(group_dir)
    assert [c.label for c in data.cells] == ["adam", "adamlr"]  # one grid cell: no grid values in the label
    for cell in data.cells:
        assert cell.n == 2 and cell.max_steps == 40
        assert cell.steps[0] == 0 and cell.steps[-1] == 40
        assert all(lo <= m <= hi for m, lo, hi in zip(cell.mean, cell.min, cell.max, strict=True))
    seeds = []
    for m in Group.open(group_dir).doc["members"][:2]:  # m000, m001: adam, seeds 0 and 1
        with open(group_dir / m["run_dir"] / "metrics.csv", newline="") as fh:
            seeds.append({int(r["step"]): float(r["val_acc"]) for r in csv.DictReader(fh)})
    cell = data.cells[0]
    for i, step in enumerate(cell.steps):
        vals = [s[step] for s in seeds]
        assert cell.mean[i] == pytest.approx(sum(vals) / 2)
        assert (cell.min[i], cell.max[i]) == (min(vals), max(vals))


def test_grid_cells_and_running_members_found_in_their_planned_dirs(tmp_path: Path) -> None:
    """Members not yet recorded in results.csv (a sweep still running) are read from the directory the
    engine planned for them (`Group.member_dir`), the one rule the engine and the faces share."""
    base = tiny_config(data__p=7, train__max_steps=100)
    spec = SweepSpec(seeds=(0, 1), arms=ARMS, grid={"data.op": ["add", "mul"]})
    group = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    for k, m in enumerate(group.members):
        d = group.member_dir(m)
        d.mkdir()
        (d / "config.json").write_text(json.dumps(group.config(m).to_dict()))
        acc = round(0.1 * (k + 1), 1)  # member k has val_acc 0.1·(k+1) at every step
        (d / "metrics.csv").write_text("step,val_acc\n" + "".join(f"{s},{acc}\n" for s in (0, 50, 100)))
    data = load_group(group.dir)
    assert [c.label for c in data.cells] == ["adam op=add", "adam op=mul", "adamlr op=add", "adamlr op=mul"]
    last = data.cells[-1]  # members 6 and 7: val_acc 0.7 and 0.8
    assert last.n == 2 and list(last.min) == [0.7] * 3 and list(last.max) == [0.8] * 3
    assert last.mean == pytest.approx([0.75] * 3)


@aio
async def test_compare_opens_a_group_directory(tmp_path: Path, group_dir: Path) -> None:
    member = next(d for d in sorted(group_dir.iterdir()) if d.is_dir())
    app = create_app(out=tmp_path / "runs", compare=[str(group_dir), str(member)])
    async with app.run_test(size=(140, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        chart = screen.query_one("#compare-chart", Chart)
        await wait_for(pilot, lambda: len(chart.source().lines) == 5)
        plot = chart.source()
        labels = [ln.label for ln in plot.lines]
        assert labels == ["", "", "1", "2.1", "2.2"]  # bands first, unlabelled; numbers keyed below the title
        assert plot.legend == [f"1 {member.name}", "2.1 adam (2 seeds)", "2.2 adamlr (2 seeds)"]
        bands, means = plot.lines[:2], plot.lines[3:]
        for band, mean in zip(bands, means, strict=True):
            assert band.color == f"dim {mean.color}" and band.points and mean.points
            for b, m in zip(band.points, mean.points, strict=True):
                assert b.fx == m.fx and b.lo <= m.last <= b.hi
        assert plot.x_log and plot.x_max == 40
        await pilot.press("l")
        assert not chart.source().x_log
        runs = screen.query_one("#runs", OptionList)
        assert screen.values == [str(member), str(group_dir)]
        await pilot.press("down", "space")  # the group off
        assert str(runs.get_option_at_index(1).prompt).startswith("[ ] 2 ")
        assert [ln.label for ln in chart.source().lines] == ["1"]  # a plain run, as before
        assert chart.draws > 0


def test_bad_compare_dirs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not a run directory .* or sweep group directory"):
        create_app(out=tmp_path, compare=[str(tmp_path)])
    (tmp_path / "group.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"group\.json: malformed JSON"):
        create_app(out=tmp_path, compare=[str(tmp_path)])
