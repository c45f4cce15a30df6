"""Every claim of the paper's list gets its panel: layout, labels, legends, bands and heat-map cells checked
through matplotlib's object model, on hand-written groups (exact statistics) and one real tiny sweep."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes

from engine.claims.paper import PAPER_SWEEPS
from engine.records.group import GroupRecord, read_group
from engine.records.group_dir import Member
from grok_tui.figures import style
from grok_tui.figures.cells import generalization_grid
from grok_tui.figures.claims import CLAIMS, claim_panels, missing_claims, paper_groups
from grok_tui.figures.draw import draw, save
from tests.cli.conftest import grok
from tests.engine.sweep.fakegroup import fake_record
from tests.figures.test_figures import STEPS, fig_legend

ACC = {"seeds": 2, "arms": {"noembed": {"model.kind": "mlp_raw"}, "embed": {"model.kind": "mlp_embed"}}}


def _acc(m: Member) -> dict[str, list[float]]:
    up = 0.3 if m.arm in ("embed", "c10", "b128") else 0.0
    return {
        "val_acc": [min(1.0, 0.1 * i + up + 0.05 * m.seed) for i in range(len(STEPS))],
        "val_acc_rare": [0.5 * min(1.0, 0.1 * i + up) for i in range(len(STEPS))],
        "train_acc": [min(1.0, 0.3 * (i + 1)) for i in range(len(STEPS))],
        "lr_ratio": [10.0 if m.arm == "c10" else 1.0 + 0.1 * i for i in range(len(STEPS))],
    }


def _lines(ax: Axes) -> list[Any]:
    """The labelled lines of `ax`, typed Any: matplotlib types a line's data as any ArrayLike, which the
    tests index and compare as the arrays they are."""
    return [ln for ln in ax.get_lines() if not str(ln.get_label()).startswith("_")]


def test_every_paper_sweep_has_one_claim() -> None:
    for preset, _ in PAPER_SWEEPS:
        owners = [c.name for c in CLAIMS.values() if preset in c.presets]
        assert owners, preset
        assert len(owners) == 1 or preset in ("fig4_token_skew", "starve"), (preset, owners)  # + fig4_tokens
    order = [p for p, _ in PAPER_SWEEPS]
    firsts = [c.presets[0] for c in CLAIMS.values() if c.presets[0] in order]
    assert firsts == sorted(firsts, key=order.index)  # the paper's order, the results past it last
    past = ["decouple", "decouple_paper", "decouple_factorial", "decouple_direction", "cure_decouple"]
    assert list(CLAIMS)[-9:] == [*past, "recipe_tail", "recipe_tail_steep", "cure_skew_mul", "progress"]


def test_fig2_rows_of_val_and_train_accuracy_per_task(tmp_path: Path) -> None:
    g = fake_record(tmp_path, {**ACC, "grid": {"data.op": ["add", "mul"]}}, _acc, STEPS, preset="fig2_long")
    claim, panels = claim_panels("fig2_long", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_title() for ax in fig.axes] == ["add", "mul", "add", "mul"]
    assert [ax.get_subplotspec().rowspan.start for ax in fig.axes] == [0, 0, 1, 1]
    assert [ax.get_ylabel() for ax in fig.axes] == ["val accuracy", "", "train accuracy", ""]
    assert fig_legend(fig) == ["noembed (n=2)", "embed (n=2)"]
    assert all(len(_lines(ax)) == 2 for ax in fig.axes)
    embed = _lines(fig.axes[0])[1]
    assert embed.get_ydata()[0] == pytest.approx(np.mean([0.3, 0.35]))


def test_fig4_epochs_draws_batch_arms_against_epochs(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {"b512": {"train.batch_size": 512}, "b128": {"train.batch_size": 128}}}
    g = fake_record(
        tmp_path, {**table, "grid": {"data.split": ["random", "skewed"]}}, _acc, STEPS, preset="fig4_epochs"
    )
    for m in g.members:  # b128 covers a quarter of the epochs per step
        if m.arm == "b128":
            f = g.member_dir(m) / "metrics.csv"
            head, *rows = [line.split(",") for line in f.read_text().splitlines()]
            rows = [[r[0], str(int(r[0]) / 40), *r[2:]] for r in rows]
            f.write_text("\n".join(",".join(r) for r in [head, *rows]) + "\n")
    claim, panels = claim_panels("fig4_epochs", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_title() for ax in fig.axes] == ["split: random", "split: skewed"] * 2
    assert all(ax.get_xlabel() == "epoch (log)" and ax.get_xscale() == "log" for ax in fig.axes)
    b512, b128 = _lines(fig.axes[0])
    assert list(b512.get_xdata()) == [s / 10 for s in STEPS]
    assert list(b128.get_xdata()) == [s / 40 for s in STEPS]
    assert len({ax.get_xlim() for ax in fig.axes}) == 1  # equal epochs: one x range in every panel
    lo, hi = fig.axes[0].get_xlim()
    assert lo < STEPS[0] / 40 and hi > STEPS[-1] / 10
    assert fig.axes[2].get_ylabel() == "val accuracy, rare tokens"
    assert fig_legend(fig) == ["b512 (n=1)", "b128 (n=1)"]


def test_fig4_sampling_a_row_per_task_a_column_per_batch(tmp_path: Path) -> None:
    grid = {"data.split": ["random", "uniform"], "train.batch_size": [64, 512], "data.op": ["add", "mul"]}
    g = fake_record(tmp_path, {"seeds": 1, "grid": grid}, _acc, STEPS, preset="fig4_sampling")
    claim, panels = claim_panels("fig4_sampling", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    titles = ["add, batch size: 64", "add, batch size: 512", "mul, batch size: 64", "mul, batch size: 512"]
    assert [ax.get_title() for ax in fig.axes] == titles
    assert [ax.get_subplotspec().rowspan.start for ax in fig.axes] == [0, 0, 1, 1]
    assert fig_legend(fig) == ["split=random (n=1)", "split=uniform (n=1)"]


def test_fig6_adaptive_draws_the_c_trajectory_on_a_log_axis(tmp_path: Path) -> None:
    table = {"seeds": 2, "arms": {"adam": {"optim.lr_ratio": 1.0}, "c10": {"optim.lr_ratio": 10.0}}}
    g = fake_record(tmp_path, {**table, "grid": {"data.op": ["add", "mul"]}}, _acc, STEPS, preset="fig6_adaptive")
    claim, panels = claim_panels("fig6_adaptive", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert len(fig.axes) == 4 and fig.axes[2].get_ylabel() == style.label("lr_ratio")
    assert fig.axes[2].get_yscale() == "log" and fig.axes[0].get_yscale() == "linear"
    adam, c10 = _lines(fig.axes[2])
    assert list(c10.get_ydata()) == [10.0] * len(STEPS)
    assert list(adam.get_ydata()) == pytest.approx([1.0 + 0.1 * i for i in range(len(STEPS))])
    fmt = fig.axes[2].yaxis.get_major_formatter()
    assert [fmt(v, 0) for v in (0.5, 1.0, 10.0)] == ["0.5", "1", "10"]  # not 10^k


def test_fig5_final_values_against_c_with_intervals(tmp_path: Path) -> None:
    cs = [1.0, 10.0, 30.0]

    def curve(m: Member) -> dict[str, list[float]]:
        c = m.values["optim.lr_ratio"]
        end_acc = 1.0 if c < 20 else 0.2 + 0.1 * m.seed
        end_loss = 1e-3 * c * (1 + m.seed)
        return {"val_acc": [0.0] * (len(STEPS) - 1) + [end_acc], "train_loss": [1.0] * (len(STEPS) - 1) + [end_loss]}

    table = {"seeds": 3, "grid": {"optim.lr_ratio": cs, "data.op": ["add", "mul"]}}
    g = fake_record(tmp_path, table, curve, STEPS, preset="fig5_c_sensitivity")
    _, panels = claim_panels("fig5", g)
    fig = draw(panels, legend="first")
    acc, loss = fig.axes
    assert acc.get_ylabel() == "final val accuracy" and loss.get_ylabel() == "final train loss"
    assert acc.get_xscale() == "log" and list(acc.get_xticks()) == cs and loss.get_yscale() == "log"
    assert fig_legend(fig) == ["add (n=3)", "mul (n=3)"]
    add_loss = _lines(loss)[0]
    assert add_loss.get_marker() not in (None, "None", "")  # a few swept values: each point marked
    band = next(b for b in loss.collections if b.get_gid() == "band:add (n=3)")
    verts = band.get_paths()[0].vertices
    for i, c in enumerate(cs):
        seeds = [1e-3 * c * (1 + s) for s in range(3)]
        m, lo, hi = sum(seeds) / 3, min(seeds), max(seeds)  # 3 seeds: the range
        assert add_loss.get_ydata()[i] == pytest.approx(m)
        at = verts[np.isclose(verts[:, 0], c)][:, 1]
        assert at.min() == pytest.approx(lo) and at.max() == pytest.approx(hi)
    assert _lines(acc)[0].get_ydata()[2] == pytest.approx(0.3)  # c = 30: mean of 0.2, 0.3, 0.4


def test_wd_init_heat_map_is_the_reports_median(tmp_path: Path) -> None:
    grid = {"model.embed_init_scale": [0.1, 1.0], "optim.weight_decay": [1e-3, 1e-2]}
    g = fake_record(tmp_path, {"seeds": 3, "grid": grid}, _acc, STEPS, preset="wd_init", max_steps=3000)
    gen: dict[tuple[float, float], list[int | None]] = {  # (init, wd) -> each seed's generalized_step (None: never 95%)
        (0.1, 1e-3): [100, 200, 300],
        (0.1, 1e-2): [1200, 1000, None],
        (1.0, 1e-3): [None, None, 400],
        (1.0, 1e-2): [2000, 2000, 2000],
    }
    for m in g.members:
        step = gen[(m.values["model.embed_init_scale"], m.values["optim.weight_decay"])][m.seed]
        g.group.record({**g.results()[m.id], "generalized_step": step})
    _, panels = claim_panels("wd_init", read_group(g.dir))
    fig = draw(panels, legend="first")
    ax = fig.axes[0]
    assert len(fig.axes) == 2  # the map and its colour bar
    assert ax.get_xlabel() == "weight decay" and ax.get_ylabel() == style.label("model.embed_init_scale")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.001", "0.01"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.1", "1"]
    (mesh,) = ax.collections  # quads, vector in SVG and PDF
    a = mesh.get_array().reshape(2, 2)
    assert a[0, 0] == 200 and a[0, 1] == 1200 and a[1, 1] == 2000  # median, +inf for a seed that never did
    assert bool(a.mask[1, 0])  # 2 of 3 never generalized: the median is past the budget, no colour
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == sorted(["200\n3/3", "1.2k\n2/3", ">3k\n1/3", "2k\n3/3"])
    assert mesh.norm.vmin == 200 and mesh.norm.vmax == 2000
    svg = save(fig, tmp_path / "heat.svg").read_bytes()
    assert b"<image" not in svg and b"1.2k" in svg  # no raster inside, the cells' text kept as text
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert [(p.get_x(), p.get_y()) for p in hatched] == [(-0.5, 0.5)]  # the no-value cell, told apart in greyscale


def test_paper_prefers_a_complete_group_and_lists_missing_claims(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {"adam": {"optim.lr_ratio": 1.0}, "c10": {"optim.lr_ratio": 10.0}}}
    done = fake_record(tmp_path, table, _acc, STEPS, preset="sec43_init")
    fake_record(tmp_path, table, _acc, STEPS, preset="sec43_init", status="interrupted")  # newer, still running
    running = fake_record(tmp_path, table, _acc, STEPS, preset="appb_update_ratio", status="interrupted")
    found = paper_groups(tmp_path)
    assert found == [(CLAIMS["appb"], running.dir), (CLAIMS["sec43"], done.dir)]  # paper order; running: drawn
    assert [c.name for c in missing_claims(found)] == [c for c in CLAIMS if c not in ("appb", "sec43")]


def test_paper_says_which_claims_it_skipped(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {"adam": {"optim.lr_ratio": 1.0}}}
    fake_record(tmp_path / "runs", table, _acc, STEPS, preset="sec43_init", status="interrupted")
    r = grok("figure", "--paper", str(tmp_path / "runs"), "-o", str(tmp_path / "figs"))
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    assert f"skipped fig2: no group of fig2_embeddings in {tmp_path / 'runs'}" in err
    assert sum(line.startswith("skipped ") for line in err) == len(CLAIMS) - 1
    assert any(line.startswith("note: sec43 drawn from ") and "with 0 of 1 members ended" in line for line in err)
    assert (tmp_path / "figs" / "sec43.png").read_bytes().startswith(b"\x89PNG")


# --- one real tiny sweep: the columns the engine logs are the ones the claims read -----------------

SWEEP = """\
description = "c x weight decay, tiny"
[data]
p = 7
op = "add"
[model]
d_embed = 8
[train]
batch_size = 8
max_steps = 30
eval_every = 10
device = "cpu"
checkpoint_every = 30
[sweep]
seeds = 1
[sweep.grid]
"optim.lr_ratio" = [1.0, 10.0]
"optim.weight_decay" = [0.001, 0.01]
"""


@pytest.fixture(scope="module")
def real_group(tmp_path_factory: pytest.TempPathFactory) -> GroupRecord:
    out = tmp_path_factory.mktemp("sweep")
    (out / "s.toml").write_text(SWEEP)
    r = grok("sweep", "--config", str(out / "s.toml"), "--workers", "1", "--out", str(out), timeout=300)
    assert r.returncode == 0, r.stderr
    (g,) = [p for p in out.iterdir() if p.name.endswith("-sweep")]
    return read_group(g)


def test_real_sweep_fig5_and_c_trajectory(real_group: GroupRecord) -> None:
    _, panels = claim_panels("fig5", real_group)
    _, loss = panels
    (line,) = loss.curves  # no task grid: one line
    assert line.x == [1.0, 10.0] and line.n == 2  # two weight decays per c
    assert all(math.isfinite(v) and v > 0 for v in line.y)
    _, panels = claim_panels("fig6_adaptive", real_group)
    c_row = next(p for p in panels if p.metrics == ["lr_ratio"])
    for c in c_row.curves:
        assert set(c.y) == {c.values["optim.lr_ratio"]}  # a fixed c is logged as such at every evaluation
    _, panels = claim_panels("fig4_tokens", real_group)  # tokens.csv as the engine writes it
    assert len(panels) == 4 and all(p.curves for p in panels)
    for p in panels:
        assert sum(len(c.x) for c in p.curves if c.label != "last step") == 7  # p = 7 tokens, one seed


def test_real_sweep_heat_map_and_files(real_group: GroupRecord, tmp_path: Path) -> None:
    h = generalization_grid(real_group, "optim.weight_decay", "optim.lr_ratio")
    assert h.ended == [[1, 1], [1, 1]] and h.budget == 30
    r = grok("figure", "--claim", "fig5", str(real_group.dir), "-o", str(tmp_path / "fig5.pdf"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig5.pdf").read_bytes().startswith(b"%PDF-")


def test_a_one_column_claim_keeps_its_legend_to_the_column(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {f"a{i}": {"optim.lr_ratio": 1.0 + i} for i in range(4)}}
    g = fake_record(tmp_path, table, _acc, STEPS, preset="fig6_adaptive_mul")
    claim, panels = claim_panels("fig6_adaptive", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert fig.get_figwidth() == style.COLUMN_W
    assert fig.legends[0]._ncols == 2  # 4 series in 2 rows: one row would run past the column
    assert fig.get_figheight() > 2 * style.PANEL_H  # the legend's rows are added, not taken from the panels


def test_a_task_not_run_yet_keeps_its_place_in_the_grid(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {"random": {"data.starve_k": 0}}, "grid": {"data.op": ["mul", "add"]}}

    def curve(m: Member) -> dict[str, list[float]]:
        return {"val_acc": [0.5] * len(STEPS), "restricted_loss": [1.0] * len(STEPS)}

    g = fake_record(tmp_path, table, curve, STEPS, preset="progress_phases")
    for m in g.members:
        if m.values["data.op"] == "add":
            (g.member_dir(m) / "metrics.csv").unlink()
    claim, panels = claim_panels("progress", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_title() for ax in fig.axes] == ["mul", "add", "mul", "add"]
    assert [len(_lines(ax)) for ax in fig.axes] == [1, 0, 1, 0]
    assert [t.get_text() for t in fig.axes[1].texts] == ["not run yet"]
    assert fig.axes[2].get_ylabel() == "restricted loss" and fig.axes[2].get_yscale() == "log"


def test_decouple_target_accuracy_against_pairs_per_draw_rate(tmp_path: Path) -> None:
    table = {
        "seeds": 2,
        "arms": {
            "mul_adam": {"data.op": "mul", "data.starve_k": 3},
            "add_adam": {"data.op": "add", "data.starve_k": 3},
        },
        "grid": {"data.starve_m": [1, -1], "train.target_rate": [0.1, 0.0]},
    }

    def curve(m: Member) -> dict[str, list[float]]:
        end = (0.3 if m.values["data.starve_m"] == 1 else 1.0) - 0.1 * m.seed
        return {"val_acc_target": [0.0] * (len(STEPS) - 1) + [end]}

    g = fake_record(tmp_path, table, curve, STEPS, preset="decouple")
    _, panels = claim_panels("decouple", g)
    fig = draw(panels, legend="first")
    assert [ax.get_title() for ax in fig.axes] == ["mul, Adam", "add, Adam"]  # words, not the arm's code
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1", "all"]  # m = -1: every pair kept
    assert fig.axes[0].get_xscale() == "linear" and fig.axes[0].get_xlabel() == "training pairs per target token, m"
    assert fig_legend(fig) == ["r = 0.1 (n=2)", "r matched (n=2)"]
    r01 = _lines(fig.axes[0])[0]
    assert list(r01.get_xdata()) == [0.0, 1.0]
    assert list(r01.get_ydata()) == pytest.approx([0.25, 0.95])


@pytest.mark.parametrize(
    ("claim", "preset", "metrics"),
    [
        ("starve", "starve", ["val_acc", "val_acc_target"]),
        ("fixes_mul", "skew_fixes_mul", ["val_acc", "val_acc_rare"]),
        ("appb", "appb_update_ratio", ["update_ratio", "lr_ratio", "val_acc"]),
        ("sec43", "sec43_init", ["val_acc", "train_acc"]),
    ],
)
def test_arm_claims_a_panel_per_metric(tmp_path: Path, claim: str, preset: str, metrics: list[str]) -> None:
    table = {"seeds": 2, "arms": {"adam": {"optim.lr_ratio": 1.0}, "c10": {"optim.lr_ratio": 10.0}}}

    def curve(m: Member) -> dict[str, list[float]]:
        target = [0.4 * v for v in _acc(m)["val_acc"]]
        return {**_acc(m), "update_ratio": [5.0 / (i + 1) for i in range(len(STEPS))], "val_acc_target": target}

    g = fake_record(tmp_path, table, curve, STEPS, preset=preset)
    c, panels = claim_panels(claim, g)
    fig = draw(panels, legend="first", ncols=c.ncols(g))
    assert [ax.get_ylabel() for ax in fig.axes] == [style.label(m) for m in metrics]
    assert fig_legend(fig) == ["adam (n=2)", "c10 (n=2)"]
    for ax, m in zip(fig.axes, metrics, strict=True):
        assert ax.get_yscale() == ("log" if style.log_y([m]) else "linear")
        assert len(_lines(ax)) == 2 and len([b for b in ax.collections if b.get_gid()]) == 2


def test_paper_looks_into_folders_but_not_into_groups_or_runs(tmp_path: Path) -> None:
    table = {"seeds": 1, "arms": {"adam": {"optim.lr_ratio": 1.0}}}
    (tmp_path / "study" / "round2").mkdir(parents=True)
    deep = fake_record(tmp_path / "study" / "round2", table, _acc, STEPS, preset="sec43_init")
    inner = fake_record(deep.dir, table, _acc, STEPS, preset="wd_init")  # inside a group: not looked at
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    fake_record(run, table, _acc, STEPS, preset="appb_update_ratio")  # inside a run directory: not looked at
    too_deep = tmp_path / "a" / "b" / "c"
    too_deep.mkdir(parents=True)
    fake_record(too_deep, table, _acc, STEPS, preset="fig12_lr_batch")
    assert inner.dir.is_dir()
    assert paper_groups(tmp_path) == [(CLAIMS["sec43"], deep.dir)]


def test_fig4_tokens_learned_step_against_pairs(tmp_path: Path) -> None:
    import json

    from grok_tui.figures.builders import NEVER_ABOVE
    from grok_tui.token_facts import token_table

    table = {"seeds": 2, "arms": {"random": {"data.split": "random"}}}
    g = fake_record(tmp_path, table, _acc, STEPS, preset="fig4_token_skew", max_steps=200)
    for m in g.members:
        f = g.member_dir(m) / "summary.json"
        learned = [None if t == 10 else 10 * (t + 1) for t in range(11)]  # p = 11; token 10 never learned
        f.write_text(json.dumps({**json.loads(f.read_text()), "learned_step": learned, "learned_acc": 0.9}))
    _, panels = claim_panels("fig4_tokens", read_group(g.dir))
    fig = draw(panels, legend="first")
    (ax,) = fig.axes
    learned, never, last = ax.get_lines()
    rows = [r for m in g.members for r in token_table(g.member_dir(m))[0]]
    want = sorted((float(r["train_pairs"]), float(r["learned_step"])) for r in rows if r["token"] != 10)
    assert sorted(zip(learned.get_xdata(), learned.get_ydata(), strict=True)) == want
    assert list(never.get_ydata()) == [200 * NEVER_ABOVE] * 2  # one never-learned token per seed, above the end
    assert list(last.get_ydata()) == [200, 200] and last.get_label() == "last step"
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    lo, hi = ax.get_ylim()
    assert lo < 10 and hi > 200 * NEVER_ABOVE  # every token inside, the never-learned ones too
    assert ax.get_title().startswith("random\nSpearman $\\rho$ = ")  # the statistic on a line of its own
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["learned", "not learned by the end", "last step"]


def test_a_cell_short_of_seeds_on_one_task_keeps_its_colour_and_one_legend_entry(tmp_path: Path) -> None:
    g = fake_record(tmp_path, {**ACC, "grid": {"data.op": ["add", "mul"]}}, _acc, STEPS, preset="fig2_embeddings")
    late = next(m for m in g.members if m.arm == "embed" and m.values["data.op"] == "mul")
    (g.member_dir(late) / "metrics.csv").unlink()  # still to run
    claim, panels = claim_panels("fig2", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert fig_legend(fig) == ["noembed (n=2)", "embed (n=1-2)"]
    add, mul = fig.axes[:2]
    assert [ln.get_color() for ln in _lines(add)] == [ln.get_color() for ln in _lines(mul)]
    assert [ln.get_linestyle() for ln in _lines(add)] == [ln.get_linestyle() for ln in _lines(mul)]


@pytest.mark.parametrize(
    ("options", "e_col", "w_col"),
    [
        ({}, "hess_E", "hess_W"),
        (
            {"probe__hessian_l2": True, "probe__hessian_abs": True, "probe__hessian_w": "all"},
            "hess_E_abs_l2",
            "hess_Wall_abs_l2",
        ),
    ],
)
def test_fig7_draws_the_columns_the_groups_probe_options_name(
    tmp_path: Path, options: dict[str, object], e_col: str, w_col: str
) -> None:
    """fig7_hessian's default is the paper's reading (hess_E_abs_l2, hess_Wall_abs_l2); the first
    reading's group logs hess_E and hess_W. The figure draws whichever the group's config names."""

    def curves(m: Member) -> dict[str, list[float]]:
        return {e_col: [0.01 * (i + 1) for i in range(len(STEPS))], w_col: [1.0 + 0.1 * i for i in range(len(STEPS))]}

    table = {"seeds": 2, "arms": {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}}
    g = fake_record(tmp_path, table, curves, STEPS, preset="fig7_hessian", **options)
    _, panels = claim_panels("fig7", g)
    fig = draw(panels, legend="first")
    assert len(fig.axes) == 2 and [ax.get_title() for ax in fig.axes] == ["Adam", "Adam-LR"]
    e, w = _lines(fig.axes[0])
    assert list(e.get_ydata()) == pytest.approx([0.01 * (i + 1) for i in range(len(STEPS))])
    assert list(w.get_ydata()) == pytest.approx([1.0 + 0.1 * i for i in range(len(STEPS))])


def test_starve_draws_the_starved_tokens_own_pairs_not_the_rare_set(tmp_path: Path) -> None:
    """At m = 0 the starved tokens are absent and the rare set is drawn from the trained tokens, so the
    figure's second panel is val_acc_target (the starved tokens' test pairs) for every m."""

    def curves(m: Member) -> dict[str, list[float]]:
        starve_m = m.values["data.starve_m"]
        return {
            "val_acc": [0.9] * len(STEPS),
            "val_acc_rare": [0.95] * len(STEPS),  # m = 0: other, well-trained tokens
            "val_acc_target": [0.01 if starve_m == 0 else 0.2 * starve_m] * len(STEPS),
        }

    g = fake_record(tmp_path, {"seeds": 1, "grid": {"data.starve_m": [0, 1, 3]}}, curves, STEPS, preset="starve")
    claim, panels = claim_panels("starve", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    assert [ax.get_ylabel() for ax in fig.axes] == ["val accuracy", "val accuracy, target tokens"]
    target = fig.axes[1]
    assert [ln.get_ydata()[0] for ln in _lines(target)] == pytest.approx([0.01, 0.2, 0.6])


def test_decouple_paper_accuracy_and_learned_step_against_batch_share(tmp_path: Path) -> None:
    table = {
        "seeds": 2,
        "arms": {
            "adam_r1": {"train.target_rate": 1.0},
            "adam_r0.1": {"train.target_rate": 0.1},
            "adam_m1_r1": {"data.starve_m": 1},
            "sgd_r1": {"optim.name": "sgd"},
        },
        "fork_at": "40",  # a fork arm (an intervention) is left out of the figure: it has no batch share of its own
        "forks": {"adam_r0.1_rescaled": {"from": "adam_r0.1", "intervene": ["rescale:targets=ring"]}},
    }
    share = {"adam_r1": 1.0, "adam_r0.1": 0.6, "adam_m1_r1": 0.2, "sgd_r1": 1.0, "adam_r0.1_rescaled": 0.05}

    def curve(m: Member) -> dict[str, list[float]]:
        return {  # the report's tail mean reads val_acc_target; the norm panel draws target_norm over steps
            "val_acc_target": [share[m.arm] - 0.1 * m.seed] * len(STEPS),
            "target_norm": [share[m.arm] / (1 + i) for i in range(len(STEPS))],
        }

    g = fake_record(tmp_path, table, curve, STEPS, preset="decouple_paper", data__starve_k=2, data__starve_m=-1)
    for m in g.members:  # the summary fields the figure reads: batch share, targets and their learned steps
        d = g.member_dir(m)
        doc = json.loads((d / "summary.json").read_text())
        learned = [None, 40, None, 60] if m.arm != "adam_m1_r1" else [None, None, None, None]
        doc.update(target_batch_share=share[m.arm], target_tokens=[1, 3], learned_step=learned)
        (d / "summary.json").write_text(json.dumps(doc))
        if m.fork_of:  # a fork trains past its run's budget: the runs' budget still bounds the learned step
            g.group.record({"member": m.id, **doc, "max_steps": 2 * STEPS[-1], "run_dir": d.name})
    _, panels = claim_panels("decouple_paper", g)
    fig = draw(panels, legend="first")
    titles = [
        *("Adam: targets' val accuracy", "Adam: targets' learned step", "Adam: target rows' norm"),
        *("SGD: targets' val accuracy", "SGD: targets' learned step", "SGD: target rows' norm"),
    ]
    assert [ax.get_title() for ax in fig.axes][:6] == titles
    norms = {ln.get_label(): list(ln.get_ydata()) for ln in _lines(fig.axes[2])}  # data-intact cells only, no fork
    assert sorted(norms) == ["r = 0.1 (n=2)", "r = 1 (n=2)"]
    assert norms["r = 0.1 (n=2)"] == pytest.approx([0.6 / (1 + i) for i in range(len(STEPS))])
    assert fig_legend(fig) == ["data intact, draws cut (r) (n=2)", "m = 1 (n=2)", "r = 1 (n=2)", "r = 0.1 (n=2)"]
    intact, m1 = _lines(fig.axes[0])[:2]
    assert list(intact.get_xdata()) == [0.6, 1.0] and list(intact.get_ydata()) == pytest.approx([0.55, 0.95])
    assert list(m1.get_xdata()) == [0.2]
    steps = _lines(fig.axes[1])
    assert list(steps[0].get_ydata()) == pytest.approx([50.0, 50.0])  # median of 40 and 60
    assert list(steps[1].get_ydata()) == pytest.approx([float(STEPS[-1])])  # never learned: the runs' budget


def test_the_builders_and_the_studies_name_the_same_figures() -> None:
    """Each study's `figure` is a builder drawn from the study's own preset; each builder is a study's figure or
    a second figure of studies' presets (fig4_tokens), so the two registries cannot drift apart."""
    from engine.claims import every_study

    named = {c.figure: c for c in every_study() if c.figure}
    presets = {c.preset for c in every_study()}
    for name, study in named.items():
        assert name in CLAIMS, f"{study.key}: figure {name!r} has no builder in grok_tui/figures/claims.py"
        assert CLAIMS[name].presets[0] == study.preset, (name, CLAIMS[name].presets, study.preset)
    for name, builder in CLAIMS.items():
        assert name in named or set(builder.presets) <= presets, f"builder {name!r} draws no study's preset"


def test_the_cure_figure_titles_its_cells_in_words_and_has_no_legend(tmp_path: Path) -> None:
    """cure_decouple's columns are its cells in words (not arm codes), and with one series a panel (each
    cure's mean and range over seeds) a figure legend would only repeat the y label: there is none, and
    the y label says what the dot and bar are."""
    arms = {
        "adam_r0.01": {"train.target_rate": 0.01},
        "adam_m1_r1": {"data.starve_m": 1},
        "adam_r1": {"train.target_rate": 1.0},
        "adam_r0.01_lazy": {"train.target_rate": 0.01, "optim.lazy_rows": True},
        "adam_m1_r1_lazy": {"data.starve_m": 1, "optim.lazy_rows": True},
        "adam_r1_lazy": {"train.target_rate": 1.0, "optim.lazy_rows": True},
    }

    def curve(m: Member) -> dict[str, list[float]]:
        up = 0.5 if m.arm.endswith("_lazy") else 0.0
        return {
            "val_acc_target": [0.3 + up] * len(STEPS),
            "val_acc": [0.9] * len(STEPS),
            "target_norm": [0.5] * len(STEPS),
        }

    g = fake_record(tmp_path, {"seeds": 2, "arms": arms}, curve, STEPS, preset="cure_decouple", data__starve_k=2)
    claim, panels = claim_panels("cure_decouple", g)
    fig = draw(panels, legend="first", ncols=claim.ncols(g))
    cells = ["Adam at r = 0.01", "Adam with one pair at r = 1", "Adam at r = 1 (control)"]
    assert [ax.get_title() for ax in fig.axes] == cells * 3  # val_acc_target, val_acc, target_norm
    assert fig.legends == [] and all(ax.get_legend() is None for ax in fig.axes)
    assert fig.axes[0].get_ylabel() == "val accuracy, target tokens\n(mean, range of 2 seeds)"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["base", "lazy"]


def test_a_figure_of_one_series_a_panel_has_no_legend_and_no_room_for_one(tmp_path: Path) -> None:
    """Fig. 11 draws one spectrum a panel, its seed in the title: a legend of that one entry says nothing."""
    from grok_tui.figures.data import Curve
    from grok_tui.figures.draw import Panel

    panels = [
        Panel(f"{op} (seed 0, step 100)", [], [Curve("seed 0", [1, 2], [0.5, 0.5])], kind="bar")
        for op in ("add", "mul")
    ]
    fig = draw(panels, legend="first")
    assert fig.legends == []
    assert fig.get_figheight() == pytest.approx(style.PANEL_H)  # no legend row added above the panels
