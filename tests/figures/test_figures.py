"""Figures checked through matplotlib's object model: axes, lines, labels, legends, band bounds and markers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from engine.config import ConfigError
from engine.records.group_dir import Member
from engine.records.stats import seed_interval
from grok_tui.figures import style
from grok_tui.figures.claims import CLAIMS, claim_panels, paper_groups
from grok_tui.figures.data import group_curves
from grok_tui.figures.draw import draw, save
from grok_tui.figures.panels import panels_for
from tests.conftest import tiny_config
from tests.engine.sweep.fakegroup import fake_record

STEPS = [10, 20, 40, 80, 160]
ARMS = {"seeds": 3, "compare": "adam", "arms": {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}}


def _curve(m: Member) -> dict[str, list[float]]:
    up = 0.1 if m.arm == "adamlr" else 0.0
    return {
        "train_acc": [min(1.0, 0.3 * (i + 1)) for i in range(len(STEPS))],
        "val_acc": [min(1.0, 0.1 * i + 0.07 * m.seed + up) for i in range(len(STEPS))],
        "hess_E": [1.0 + i + m.seed for i in range(len(STEPS))],
        "hess_W": [10.0 * (1 + i) + m.seed for i in range(len(STEPS))],
    }


def _run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "20260101-000000-tiny-s0"
    d.mkdir()
    # its budget covers its rows: a run never logs past train.max_steps (docs/ENGINE.md, the guarantees)
    (d / "config.json").write_text(json.dumps(tiny_config(train__max_steps=160).to_dict()))
    rows = ["step,epoch,train_acc,val_acc,train_loss"] + [
        f"{s},{s / 10},{min(1, s / 40)},{min(1, s / 160)},{1 / (s + 1)}" for s in [0, *STEPS]
    ]
    (d / "metrics.csv").write_text("\n".join(rows) + "\n")
    summary = {"status": "finished", "steps": 160, "memorized_step": 40, "generalized_step": 160}
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def _legend(ax: Axes) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def fig_legend(fig: Figure) -> list[str]:
    """A claim figure's one legend, above its panels (no panel has its own)."""
    assert all(ax.get_legend() is None for ax in fig.axes)
    (leg,) = fig.legends
    return [t.get_text() for t in leg.get_texts()]


def test_run_figure_has_curves_markers_and_log_axis(tmp_path: Path) -> None:
    d = _run_dir(tmp_path)
    fig = draw(panels_for([str(d)], ["train_acc", "val_acc"]))
    (ax,) = fig.axes
    assert [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")] == ["train_acc", "val_acc"]
    assert _legend(ax) == ["train_acc", "val_acc"]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "step (log)" and ax.get_ylabel() == "accuracy"
    xs = ax.get_lines()[0].get_xdata()
    assert list(xs) == STEPS  # step 0 has no place on a log axis
    assert sorted(t.get_text() for t in ax.texts) == ["G", "M"]
    assert sorted(t.get_position()[0] for t in ax.texts) == [40, 160]
    assert fig.get_figwidth() == style.COLUMN_W
    # colours and styles differ between the two series (greyscale-safe)
    a, b = ax.get_lines()[:2]
    assert a.get_color() != b.get_color() and a.get_linestyle() != b.get_linestyle()


def test_run_figure_epoch_axis_linear_and_smoothed(tmp_path: Path) -> None:
    d = _run_dir(tmp_path)
    fig = draw(panels_for([str(d)], ["train_loss"], x="epoch"), log_x=False, k=2)
    (ax,) = fig.axes
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "train_loss"]
    assert len(ax.texts) == 2  # M and G, at the epochs of their steps
    assert ax.get_xscale() == "linear" and ax.get_xlabel() == "epoch" and ax.get_yscale() == "log"
    assert list(line.get_xdata()) == [0, 1, 2, 4, 8, 16]
    y = [1 / (s + 1) for s in [0, *STEPS]]
    assert line.get_ydata()[0] == 1.0 and line.get_ydata()[2] == pytest.approx((y[1] + y[2]) / 2)  # trailing mean


def test_group_figure_band_is_the_seeds_range_below_8(tmp_path: Path) -> None:
    g = fake_record(tmp_path, ARMS, _curve, STEPS)
    fig = draw(panels_for([str(g.dir)], ["val_acc", "train_acc"]))
    assert len(fig.axes) == 2 and fig.get_figwidth() == style.DOUBLE_W
    ax = fig.axes[0]
    assert _legend(ax) == ["adam (n=3)", "adamlr (n=3)"]
    assert ax.get_ylabel() == "val accuracy"
    (mean_line, _) = ax.get_lines()[:2]
    bands = [c for c in ax.collections if (c.get_gid() or "").startswith("band:")]
    assert [b.get_gid() for b in bands] == ["band:adam (n=3)", "band:adamlr (n=3)"]
    verts = bands[0].get_paths()[0].vertices
    for i, step in enumerate(STEPS):
        seeds = [min(1.0, 0.1 * i + 0.07 * s) for s in range(3)]
        m = sum(seeds) / 3
        assert mean_line.get_ydata()[i] == pytest.approx(m)
        at = verts[np.isclose(verts[:, 0], step)][:, 1]
        assert at.min() == pytest.approx(min(seeds)) and at.max() == pytest.approx(max(seeds))  # 3 seeds: the range
    assert ax.get_title().endswith("mean over seeds, their range")


def test_claim_fig7_panels_per_optimizer(tmp_path: Path) -> None:
    g = fake_record(tmp_path, ARMS, _curve, STEPS, preset="fig7_hessian")
    _, panels = claim_panels("fig7", g)
    fig = draw(panels, legend="first")
    assert [ax.get_title() for ax in fig.axes] == ["Adam", "Adam-LR"]  # the optimizers in words, not arm codes
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim() and fig.axes[0].get_xlim() == fig.axes[1].get_xlim()
    lo, hi = fig.axes[0].get_ylim()
    assert lo < 1.0 and hi > 10.0 * 5 + 2  # every seed's E and W at steps > 0 lie inside
    assert fig_legend(fig) == ["E (n=3)", "W (n=3)"]
    # a series keeps its colour and dash in every panel
    assert [ln.get_color() for ln in fig.axes[0].get_lines()] == [ln.get_color() for ln in fig.axes[1].get_lines()]
    e = fig.axes[0].get_lines()[0].get_ydata()
    assert e[0] == pytest.approx(np.mean([1.0, 2.0, 3.0]))


def test_claim_fig6_a_column_per_task_val_over_train(tmp_path: Path) -> None:
    table = {**ARMS, "seeds": 2, "grid": {"data.op": ["add", "sub", "mul", "div"]}}
    g = fake_record(tmp_path, table, _curve, STEPS, preset="fig6_optimizers")
    claim, panels = claim_panels("fig6", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_title() for ax in fig.axes] == ["add", "sub", "mul", "div"] * 2
    assert [ax.get_subplotspec().rowspan.start for ax in fig.axes] == [0] * 4 + [1] * 4
    assert [ax.get_ylabel() for ax in fig.axes] == ["val accuracy", "", "", "", "train accuracy", "", "", ""]
    assert all(len(ax.get_lines()) == 2 for ax in fig.axes)
    assert fig_legend(fig) == ["adam (n=2)", "adamlr (n=2)"]  # op is the panel, not in the label
    adamlr = fig.axes[4].get_lines()[1]  # train accuracy, adamlr: the mean over its seeds
    assert list(adamlr.get_ydata()) == pytest.approx([min(1.0, 0.3 * (i + 1)) for i in range(len(STEPS))])


def test_claim_fig4_rows_of_metrics(tmp_path: Path) -> None:
    table = {"seeds": 2, "arms": {"random": {"data.split": "random"}, "s15": {"data.split": "skewed"}}}

    def curve(m: Member) -> dict[str, list[float]]:
        return {"val_acc": [0.5] * len(STEPS), "val_acc_rare": [0.2] * len(STEPS)}

    g = fake_record(tmp_path, {**table, "grid": {"data.op": ["mul", "add"]}}, curve, STEPS, preset="fig4_token_skew")
    claim, panels = claim_panels("fig4", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_title() for ax in fig.axes] == ["mul", "add", "mul", "add"]
    rows = [ax.get_subplotspec().rowspan.start for ax in fig.axes]
    assert rows == [0, 0, 1, 1]  # a row per metric, a column per task
    assert [ax.get_ylabel() for ax in fig.axes] == ["val accuracy", "", "val accuracy, rare tokens", ""]
    assert list(fig.axes[2].get_lines()[0].get_ydata()) == [0.2] * len(STEPS)


def test_claim_fig11_spectrum_bars(tmp_path: Path) -> None:
    table = {"seeds": 1, "grid": {"data.op": ["add", "div"]}}
    g = fake_record(tmp_path, table, _curve, STEPS, preset="fig11_fourier")
    for m in g.members:
        rows = ["step,freq,norm"] + [f"{s},{k},{(3.0 if k == 2 else 1.0) + s}" for s in (0, 100) for k in range(6)]
        (g.member_dir(m) / "fourier.csv").write_text("\n".join(rows) + "\n")
    _, panels = claim_panels("fig11", g)
    fig = draw(panels)
    assert [ax.get_title() for ax in fig.axes] == ["add (seed 0, step 100)", "div (seed 0, step 100)"]
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()  # one scale: peaked and flat compare by height
    heights = [p.get_height() for p in fig.axes[0].patches]
    energy = [101.0**2] * 5
    energy[1] = 103.0**2  # k = 2; the last step's spectrum, DC dropped
    assert heights == pytest.approx([e / sum(energy) for e in energy])


def test_unknown_claim_and_empty_group(tmp_path: Path) -> None:
    g = fake_record(tmp_path, ARMS, _curve, STEPS)
    with pytest.raises(ConfigError, match="unknown claim; known: fig2, fig2_long, "):
        claim_panels("fig99", g)
    with pytest.raises(ConfigError, match="nothing to draw for fig10"):
        claim_panels("fig10", g)


def test_paper_finds_the_newest_group_of_each_claim(tmp_path: Path) -> None:
    old = fake_record(tmp_path, ARMS, _curve, STEPS, preset="fig7_hessian")
    new = fake_record(tmp_path, ARMS, _curve, STEPS, preset="fig7_hessian")
    fake_record(tmp_path, ARMS, _curve, STEPS, preset="other")
    assert old.dir.name < new.dir.name
    assert paper_groups(tmp_path) == [(CLAIMS["fig7"], new.dir)]


@pytest.mark.parametrize(("suffix", "head"), [("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-"), ("svg", b"<?xml")])
def test_saved_files_are_valid(tmp_path: Path, suffix: str, head: bytes) -> None:
    fig = draw(panels_for([str(_run_dir(tmp_path))], ["val_acc"]))
    path = save(fig, tmp_path / f"f.{suffix}")
    data = path.read_bytes()
    assert data.startswith(head)
    if suffix == "svg":
        assert b"<svg" in data and b"<path" in data and b"val accuracy" in data  # vector, text kept as text
        assert b"<image" not in data  # no raster inside
    if suffix == "pdf":
        assert data.rstrip().endswith(b"%%EOF")
    with pytest.raises(ConfigError, match=r"must end in \.png, \.svg or \.pdf"):
        save(fig, tmp_path / "f.jpg")


def test_png_is_a_palette_image_that_keeps_the_series_colours(tmp_path: Path) -> None:
    """A PNG for a docs page is quantized to 256 colours: every pixel within a few levels of Agg's own
    render except on anti-aliased edges, and each series' colour kept exactly, not averaged away."""
    import io

    from matplotlib.colors import to_rgb
    from PIL import Image

    g = fake_record(tmp_path, ARMS, _curve, STEPS)
    fig = draw(panels_for([str(g.dir)], ["val_acc", "train_acc"]))  # lines over bands
    path = save(fig, tmp_path / "f.png")
    img = Image.open(path)
    assert img.format == "PNG" and img.mode == "P"
    from matplotlib import rc_context

    buf = io.BytesIO()
    rc: Any = style.RC  # matplotlib types its keys as literals; style.RC is a plain dict of them
    with rc_context(rc):
        fig.savefig(buf, format="png")  # the same figure as Agg writes it: RGBA
    rgba = Image.open(buf)
    assert rgba.size == img.size
    want = np.asarray(rgba.convert("RGB"), dtype=int)
    got = np.asarray(img.convert("RGB"), dtype=int)
    diff = np.abs(got - want).max(axis=2)
    assert diff.mean() < 1.0  # levels of 255, over the whole image
    assert (diff > 16).mean() < 0.01  # what moves more is a thin edge, not an area
    lines = [ln for ax in fig.axes for ln in ax.get_lines()]
    colours = {tuple(round(v * 255) for v in to_rgb(ln.get_color())) for ln in lines}
    kept = {tuple(c) for c in np.unique(got.reshape(-1, 3), axis=0)}
    assert colours and colours <= kept


def test_a_transparent_figure_stays_rgba(tmp_path: Path) -> None:
    from PIL import Image

    fig = draw(panels_for([str(_run_dir(tmp_path))], ["val_acc"]))
    fig.patch.set_alpha(0.0)
    for ax in fig.axes:
        ax.patch.set_alpha(0.0)
    path = save(fig, tmp_path / "f.png")
    img = Image.open(path)
    extrema: Any = img.getextrema()  # per band (lo, hi) for a multi-band image
    assert img.mode == "RGBA" and extrema[3][0] == 0  # the see-through pixels kept


def test_claim_fig11_skips_members_still_running(tmp_path: Path) -> None:
    table = {"seeds": 2, "grid": {"data.op": ["add"]}}
    g = fake_record(tmp_path, table, _curve, STEPS, preset="fig11_fourier")
    for m in g.members:
        peak = 2 if m.seed == 0 else 4
        rows = ["step,freq,norm"] + [f"100,{k},{5.0 if k == peak else 1.0}" for k in range(6)]
        (g.member_dir(m) / "fourier.csv").write_text("\n".join(rows) + "\n")
    row = dict(g.results()["m000"])
    g.group.record({**row, "status": "interrupted"})  # seed 0 did not end: its spectrum is not final
    _, panels = claim_panels("fig11", g)
    (p,) = panels
    assert p.title == "add (seed 1, step 100)"
    assert p.curves[0].y.index(max(p.curves[0].y)) == 3  # k = 4, seed 1's peak


def test_a_seed_that_stopped_early_holds_its_last_value(tmp_path: Path) -> None:
    # patience ends a seed once it holds the target; the mean must not drop where it stops
    g = fake_record(tmp_path, ARMS, _curve, STEPS)
    m0 = next(m for m in g.members if m.arm == "adam" and m.seed == 0)
    f = g.member_dir(m0) / "metrics.csv"
    f.write_text("".join(f.read_text().splitlines(True)[:4]))  # header + steps 10, 20, 40
    summary = json.loads((f.parent / "summary.json").read_text())
    (f.parent / "summary.json").write_text(json.dumps({**summary, "steps": 40}))  # where patience stopped it
    (curve,) = [c for c in group_curves(g, "val_acc") if c.label == "adam"]
    for i, step in enumerate(STEPS):
        seeds = [min(1.0, 0.1 * min(i, 2) + 0.0)] + [min(1.0, 0.1 * i + 0.07 * s) for s in (1, 2)]
        assert curve.y[i] == pytest.approx(seed_interval(seeds).mean), step
    assert curve.n == 3


def test_phase_markers_are_grey_and_clear_of_the_title(tmp_path: Path) -> None:
    fig = draw(panels_for([str(_run_dir(tmp_path))], ["train_loss"]))
    (ax,) = fig.axes
    assert {t.get_color() for t in ax.texts} <= set(style.MARKER_COLORS.values())
    assert all(c not in style.PALETTE for c in style.MARKER_COLORS.values())  # never a series' colour
    assert ax.get_ylabel() == "train loss"


def test_a_single_evaluation_is_drawn_as_a_point(tmp_path: Path) -> None:
    g = fake_record(tmp_path, ARMS, _curve, [20])
    fig = draw(panels_for([str(g.dir)], ["val_acc"]))
    assert all(ln.get_marker() not in (None, "None", "") for ln in fig.axes[0].get_lines())
