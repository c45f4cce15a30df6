"""The panel builders of the claims' figures (grok_tui/figures/claims.py): a grid of curves per cell and
metric, and the figures the paper lays out its own way (Fig. 4's tokens, 5, 7, 10, 11, decoupling)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

from engine.config import ConfigError
from engine.records.group import GroupRecord
from engine.records.run import read_run
from engine.sweep.report.tables import member_finals
from engine.sweep.report.targets import member_target_learned
from grok_tui.figures import style
from grok_tui.figures.cells import ended_members, final_against, generalization_grid, token_points
from grok_tui.figures.data import Curve, cell_label, fourier_spectrum, group_curves, member_dirs
from grok_tui.figures.draw import Panel, share_axes


def facets(group: GroupRecord, key: str | None) -> list[Any]:
    """The values of a grid key (one panel each), or [None] when the group does not sweep it."""
    return list(group.spec.grid.get(key, [None])) if key else [None]


def _where(group: GroupRecord, curves: list[Curve], keys: dict[str, Any]) -> list[Curve]:
    """The cells with each key = its value (None: any), labelled without those keys."""
    out = []
    for c in curves:
        if all(v is None or c.values.get(k) == v for k, v in keys.items()):
            if c.member is not None:
                c = dataclasses.replace(c, label=cell_label(group, c.member, drop=tuple(keys)))
            out.append(c)
    return out


def _facet_title(group: GroupRecord, key: str, value: Any) -> str:
    if key == "data.op":
        return str(value if value is not None else group.base.data.op)
    return f"{style.label(key)}: {value}" if value is not None else ""


def grid(
    metrics: list[str], cols: str | None = "data.op", rows: str | None = None, x: str = "step", need: str = ""
) -> Callable[[GroupRecord], list[Panel]]:
    """Rows of panels by metric (and by `rows`' values), columns by `cols`' values (data.op: one per task;
    None: one panel per metric); the other cells as lines. `need`: no panel at all is an error naming it."""

    def build(group: GroupRecord) -> list[Panel]:
        panels = []
        for m in metrics:
            curves = group_curves(group, m, x)
            if not curves:
                continue
            for rv in facets(group, rows):
                for cv in facets(group, cols):
                    keys = {k: v for k, v in ((rows, rv), (cols, cv)) if k}
                    title = ", ".join(t for t in (_facet_title(group, k, v) for k, v in keys.items()) if t)
                    panels.append(Panel(title, [m], _where(group, curves, keys), xlabel=x, share_x=True))
        return _need(panels, group, need) if need else panels

    return build


def _need(panels: list[Panel], group: GroupRecord, what: str) -> list[Panel]:
    if not panels:
        raise ConfigError(f"{group.dir}: no member has logged {what} yet")
    return panels


def fig5(group: GroupRecord) -> list[Panel]:
    """Fig. 5: final val accuracy and final train loss against c, a line per task (too large a c: loss blows up)."""
    panels = []
    for metric in ("val_acc", "train_loss"):
        curves = final_against(group, metric, "optim.lr_ratio", "data.op" if "data.op" in group.spec.grid else None)
        ylabel = f"final {style.label(metric)}"
        xlabel = style.label("optim.lr_ratio")
        panels.append(Panel("", [metric], curves, xlabel=xlabel, points=True, ylabel=ylabel))
    return panels


NEVER_ABOVE = 1.4  # tokens never learned are drawn this factor above the last step (a log axis)


def fig4_tokens(group: GroupRecord) -> list[Panel]:
    """The per-token form of Fig. 4 (§4.2: a token in few training pairs is learned late): each token's
    learned step against its training pairs, every ended seed pooled, a panel per arm × cell; tokens never
    learned sit above the line of the last step, marked apart."""
    budgets = [float(r.max_steps) for r in group.results().values() if r.max_steps is not None]  # as the report
    budget = max(budgets or [float(group.base.train.max_steps)])
    cells = token_points(group)
    bottom = min([y for _, _, ys, _, _ in cells for y in ys if y > 0] or [1.0])
    ylim = (bottom / 1.3, budget * NEVER_ABOVE * 1.3)  # one y range: the cells compare by height
    pairs = [x for _, xs, _, never, _ in cells for x in [*xs, *never]] or [0.0]
    xlim = (min(pairs) - 0.03 * max(pairs) - 1, max(pairs) * 1.03 + 1)  # and one x range
    xlabel, end = "training pairs holding the token", (budget, "last step")
    scatter = functools.partial(Panel, xlabel=xlabel, kind="scatter", log_x=False, hline=end, ylim=ylim, xlim=xlim)
    panels = []
    for label, xs, ys, never, rho in cells:
        curves = [Curve("learned", xs, ys)]
        if never:  # above the line of the last step: learned after it, if ever
            curves.append(Curve("not learned by the end", never, [budget * NEVER_ABOVE] * len(never)))
        title = label + ("" if math.isnan(rho) else f"\nSpearman $\\rho$ = {rho:+.2f}")  # a line of its own
        panels.append(scatter(title, ["learned_step"], curves))
    return panels


def decouple(group: GroupRecord) -> list[Panel]:
    """Decoupling (Fig. 4, §4.2): the target tokens' final val accuracy against their distinct training pairs
    m, a line per draw rate r, a panel per task and optimizer: pairs, not updates, set the plateau."""
    grid = group.spec.grid
    ms = list(grid.get("data.starve_m", []))
    ticks = [(float(i), "all" if m == -1 else str(m)) for i, m in enumerate(ms)]
    panels = []
    for arm in group.spec.arms or [None]:
        curves = final_against(group, "val_acc_target", "data.starve_m", "train.target_rate", arm, categorical=True)
        for c in curves:
            c.label = "r matched" if c.label in ("0", "0.0") else f"r = {c.label}"
        title = style.arm_title(arm) if arm else str(group.preset)
        xlabel = "training pairs per target token, m"
        panels.append(Panel(title, ["val_acc_target"], curves, xlabel=xlabel, points=True, xticks=ticks))
    return panels


DECOUPLE_FAMILIES = (  # decouple_paper's cells by arm name (presets/decouple_paper.toml), drawn as lines
    ("data intact, draws cut (r)", "_r"),
    ("m = 1", "_m1_"),
    ("m = 3", "_m3_"),
    ("m = 2, one position", "_m2_same"),
    ("m = 2, both positions", "_m2_mixed"),
)


def decouple_paper(group: GroupRecord) -> list[Panel]:
    """Issue 33's figure: the targets' final val accuracy and learned step against the share of batches that
    held a target (eq. 4's p_i, log axis), a line per family of cells, a panel pair per optimizer. Points are
    the mean over seeds with their range; a learned step whose member medians were not all reached is
    drawn at the mean with those members at the budget (a bound, as `grok report` prints it)."""
    finals = member_finals(group.group, ["val_acc_target"])
    res = group.results()
    runs = {m.id for m in group.members if not m.fork_of}  # the forks' longer budgets are not the runs'
    budgets = [float(r.max_steps) for k, r in res.items() if k in runs and r.max_steps is not None]  # as the report
    budget = max(budgets or [float(group.base.train.max_steps)])
    by: dict[tuple[str, str], dict[str, list[tuple[float, float, float]]]] = {}
    for m, _ in ended_members(group):
        if m.fork_of:
            continue  # a fork (the interventions) is read in the report's tables, not against batch share
        s = read_run(group.member_dir(m)).summary  # its run record (engine/records/run.py)
        share, acc = s.target_batch_share, finals.get(m.id, {}).get("val_acc_target")
        learned = member_target_learned(s)
        if share is None or acc is None or learned is None:
            continue
        opt = m.arm.split("_")[0]
        family = next((name for name, tag in DECOUPLE_FAMILIES if m.arm.removeprefix(opt).startswith(tag)), m.arm)
        step = budget if math.isinf(learned[0]) else learned[0]
        by.setdefault((opt, family), {}).setdefault(m.arm, []).append((share, acc, step))
    panels = []
    for opt in dict.fromkeys(o for o, _ in by):
        for metric, k, label in (("val_acc_target", 1, "val accuracy"), ("learned_step", 2, "learned step")):
            curves = []
            for name, _tag in DECOUPLE_FAMILIES:
                cells = sorted(by.get((opt, name), {}).values(), key=lambda v: sum(x[0] for x in v) / len(v))
                if not cells:
                    continue
                xs = [sum(v[0] for v in c) / len(c) for c in cells]
                ys = [[v[k] for v in c] for c in cells]
                means, n = [sum(y) / len(y) for y in ys], min(len(c) for c in cells)
                curves.append(Curve(name, xs, means, [min(y) for y in ys], [max(y) for y in ys], n))
            title = f"{style.arm_title(opt)}: targets' {label}"
            panel = Panel(title, [metric], curves, xlabel="batches holding a target", points=True)
            panel.log_x, panel.ticks_at_points = True, False
            panels.append(panel)
        panels.append(norm_gap(group, opt))
    return _need(panels, group, "members with targets and the targets probe")


def norm_gap(group: GroupRecord, opt: str) -> Panel:
    """The norm gap opening (§4.2): the target rows' norm against the ring's median radius (`target_norm`)
    over training, a line per draw rate r of the data-intact cells of one optimizer, mean over seeds."""
    tag = opt + DECOUPLE_FAMILIES[0][1]
    curves = []
    for c in group_curves(group, "target_norm"):
        m = c.member
        if m is None or m.fork_of or not m.arm.startswith(tag):
            continue
        curves.append(dataclasses.replace(c, label=f"r = {m.arm.removeprefix(tag)}"))
    title = f"{style.arm_title(opt)}: target rows' norm"
    return Panel(title, ["target_norm"], curves, log_x=False, ylabel="target rows' norm / ring radius")


def heat(row_key: str, col_key: str) -> Callable[[GroupRecord], list[Panel]]:
    """Steps to generalize per (row, col) cell of the grid: eqs. 8-9 (wd × α), Figs. 12-13 (lr × batch)."""

    def build(group: GroupRecord) -> list[Panel]:
        h = generalization_grid(group, row_key, col_key)
        if not any(any(r) for r in h.ended):
            return []
        title = "steps to 95% val accuracy: median, seeds that got there"
        return [Panel(title, [], [], kind="heat", heat=h, xlabel=style.label(col_key), ylabel=style.label(row_key))]

    return build


def fig7(group: GroupRecord) -> list[Panel]:
    """Fig. 7: λmax of the loss Hessian restricted to E and to W, one panel per optimizer.

    The columns are the ones the group's probe options name (engine/probes/hessian.py): hess_E and
    hess_W for the data loss and the first layer, hess_E_abs_l2 and hess_Wall_abs_l2 for the paper's
    reading (`fig7_hessian`'s default)."""
    from engine.probes.hessian import block_columns

    e_col, w_col = block_columns(group.config(group.members[0]).probe) if group.members else ("hess_E", "hess_W")
    e, w = group_curves(group, e_col), group_curves(group, w_col)
    panels = []
    for ce, cw in zip(e, w, strict=False):
        ce.label, cw.label = "E", "W (all downstream)" if w_col.startswith("hess_Wall") else "W"
        title = style.arm_title(ce.member.arm) if ce.member is not None and ce.member.arm else ""
        panels.append(Panel(title, [e_col, w_col], [ce, cw], ylabel=r"$\lambda_{\max}$"))
    share_axes(panels)  # one scale: the optimizers compare by height and by time
    return panels


def fig10(group: GroupRecord) -> list[Panel]:
    """Fig. 10: rank of E, W and EW over training, per optimizer."""
    mats = ("E", "W", "EW")
    return [Panel(f"rank of {x}", [f"rank_{x}"], group_curves(group, f"rank_{x}"), ylabel="rank") for x in mats]


def fig11(group: GroupRecord) -> list[Panel]:
    """Fig. 11: the Fourier spectrum of E at the end of training, one panel per task (its first ended seed).

    Bars are each frequency's share of the energy (k >= 1) on one y scale, so a peaked spectrum and
    a flat one read as such side by side.
    """
    dirs = member_dirs(group)
    panels = []
    seen: set[Any] = set()
    for m, _ in ended_members(group):
        op = m.values.get("data.op", group.base.data.op)
        d = dirs.get(m.id)
        if op in seen or d is None:
            continue
        spec = fourier_spectrum(d)
        if spec is None:
            continue
        seen.add(op)
        step, ks, share = spec
        curve = Curve(f"seed {m.seed}", [float(k) for k in ks], share)
        title = f"{op} (seed {m.seed}, step {step})"
        panels.append(Panel(title, [], [curve], xlabel="frequency k", kind="bar", ylabel="energy share"))
    top = max((max(p.curves[0].y) for p in panels), default=1.0)
    for p in panels:
        p.ylim = (0.0, top * 1.05)
    return panels
