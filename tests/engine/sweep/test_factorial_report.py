"""A fork factorial's contrasts (engine/sweep/report/factorial.py): two arms one factor apart, paired by
seed, whose realized draws show that they differ only in the factor named."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records.group_dir import Group
from engine.sweep.report.factorial import MATCH, Contrast, Window, contrast_rows, contrasts
from tests.cli.conftest import DATA, grok


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Group:
    out = tmp_path_factory.mktemp("factorial")
    for config, extra in (("tiny_parents.toml", ()), ("tiny_factorial.toml", ("--parents",))):
        parents = [str(p) for p in out.iterdir() if p.name.endswith("tiny_parents-sweep")]
        r = grok("sweep", "--config", str(DATA / config), "--out", str(out), "-w", "1", "-q", *extra, *parents[:1],
                 timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stderr
    (g,) = [p for p in out.iterdir() if p.name.endswith("tiny_factorial-sweep")]
    return Group.open(g)


def test_each_contrast_differs_in_the_factor_named_only(study: Group) -> None:
    found = {(c.factor, c.a, c.b) for c in contrasts(study)}
    assert found == {
        ("draws", "a_own_own_wd", "a_own_all_wd"),
        ("pairs", "a_own_own_wd", "a_all_own_wd"),
        ("decay", "a_own_own_wd", "a_own_own_nowd"),
        ("pairs", "a_own_all_wd", "a_all_all_wd"),
        ("draws", "a_all_own_wd", "a_all_all_wd"),
    }
    for c in contrasts(study):
        assert len(c.pairs) == 2  # both seeds, paired
        assert c.matched, (c.factor, c.a, c.b, c.ratios())  # read from the forks' realized draws
        if c.factor == "decay":
            assert all(wb.decay == 0.0 < -wa.decay for wa, wb in c.pairs)  # decay off: no decay step at all


def test_the_report_prints_the_contrasts(study: Group) -> None:
    rows = contrast_rows(study)
    assert {r["matched"] for r in rows} == {"yes"} and len(rows) == 5
    r = grok("report", str(study.dir), "--wide")
    assert r.returncode == 0 and "factorial contrasts" in r.stdout and "own_own_nowd" in r.stdout


def test_a_contrast_whose_draws_differ_is_not_matched() -> None:
    """The check could fail: arms meant to match whose realized draws are 20% apart are flagged."""
    w = Window(draws=1.0, decay=-1.0)
    off = Window(draws=1.0 + 2 * MATCH, decay=-1.0)
    assert not Contrast("p", "pairs", "a", "b", [(w, off)]).matched
    assert Contrast("p", "pairs", "a", "b", [(w, w)]).matched
    assert not Contrast("p", "draws", "a", "b", [(w, w)]).matched  # the draws factor must move the draws
    assert not Contrast("p", "pairs", "a", "b", []).matched


def test_the_claim_figure_draws_each_arm_beside_its_contrast(study: Group, tmp_path: Path) -> None:
    """grok figure --claim decouple_factorial: one panel per parent arm, one point per fork arm (the seeds' range)."""
    pytest.importorskip("matplotlib")
    from engine.records.group import read_group
    from grok_tui.figures.cause import factorial

    (panel,) = factorial(read_group(study.dir))  # the tiny study logs no target_norm: the accuracy panel only
    assert panel.title == "a" and panel.kind == "dots"
    assert [t for _, t in panel.xticks or []] == [
        "own_own_wd",
        "own_all_wd",
        "all_own_wd",
        "all_all_wd",
        "own_own_nowd",
    ]
    (curve,) = panel.curves
    assert curve.lo is not None and curve.hi is not None
    assert all(lo <= y <= hi for y, lo, hi in zip(curve.y, curve.lo, curve.hi, strict=True))
    r = grok("figure", "--claim", "decouple_factorial", str(study.dir), "-o", str(tmp_path / "f.png"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_the_reading_moves_each_factor_alone_from_the_starved_arm(study: Group) -> None:
    """The status page's reading (engine/claims/studies/decouple_factorial.py): the rows' norm over every cell, then
    per cell each factor moved alone from the starved arm own_own_wd, paired by seed, read where at least
    MIN_ROOM pairs have room to rise; the tiny study has one cell of two seeds, so its accuracy parts are
    listed as unread, and it runs neither the targets probe (no norm pair) nor the rescaled arms (so the balance
    probe's contrast, starved against rescaled, has no pair)."""
    from engine.claims.studies.decouple_factorial import MIN_ROOM, decouple_factorial

    r = decouple_factorial(study)
    assert MIN_ROOM > 2
    assert [p.text.split(" ")[0] for p in r.parts] == ["decay", "a", "at"]  # the last: the balance probe's part
    assert r.parts[-1].state == "unread" or "0 of 0" in r.parts[-1].evidence  # no rescaled arm to read against
    assert r.values["decay_target_norm_k"].startswith("0 of 0") and r.values["rescaled_norm"] == "-"
    unread = r.values["unread"].split("; ")
    assert [u.split(" ")[0] for u in unread] == ["decay", "draws", "pairs"]
    assert all("of 2 pairs" in u for u in unread), unread  # both seeds have room; two are too few to read


def test_arms_of_other_windows_are_no_contrast(study: Group) -> None:
    """Fork arms with a `window` pair with arms of the same window only: two arms one factor apart that train
    100 steps are a contrast; the same factor read after 50 steps against 100 is not (the window would be read
    as the factor), though their settings are the same."""
    import copy
    import dataclasses

    g = copy.copy(study)

    def windowed(name: str, window: int) -> dict[str, object]:
        table = {k: v for k, v in study.spec.forks[name].items() if k != "train.max_steps"}
        return {**table, "window": window}

    extra = {
        "own_own_wd_w100": windowed("own_own_wd", 100),
        "own_all_wd_w100": windowed("own_all_wd", 100),
        "own_all_wd_w50": windowed("own_all_wd", 50),
    }
    g.spec = dataclasses.replace(study.spec, forks={**study.spec.forks, **extra})
    found = {(c.factor, c.a, c.b) for c in contrasts(g)}
    assert ("draws", "a_own_own_wd_w100", "a_own_all_wd_w100") in found
    assert not any("w50" in a or "w50" in b for _, a, b in found)
    assert len(found) == 6  # the five of the 20-step arms and the one of the 100-step arms
