"""One figure per claim of the paper, in the paper's layout, from the sweep group that backs the claim.

Each claim names the presets whose groups can draw it (docs/REPRODUCTION.md says which preset backs
which claim); `grok figure --claim NAME GROUP` draws one, `grok figure --paper RUNS_DIR` every
claim whose group is present.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.claims.paper import PAPER_SWEEPS
from engine.config import ConfigError
from engine.records.group import GroupRecord, read_group
from engine.records.run import read_run
from engine.rundir.dirs import is_group, is_run_dir
from engine.sweep.report.tables import member_finals
from engine.sweep.report.targets import member_target_learned
from grok_tui.figures import cause, style
from grok_tui.figures.cells import ended_members, final_against, generalization_grid, token_points
from grok_tui.figures.data import Curve, cell_label, fourier_spectrum, group_curves, member_dirs
from grok_tui.figures.draw import Panel, share_axes


@dataclass(frozen=True)
class Claim:
    name: str
    presets: tuple[str, ...]  # the sweep presets whose groups this figure is drawn from, preferred first
    what: str  # one line: what the figure shows (the paper's figure)
    build: Callable[[GroupRecord], list[Panel]]
    cols: str | None = None  # a grid key: one column per value (data.op: one per task), one row per metric
    width: int = 0  # a fixed number of columns (decouple_paper: a row of three panels per optimizer)

    def ncols(self, group: GroupRecord) -> int:
        """Columns of the panel grid (0: draw's default, one row of up to style.MAX_COLS)."""
        return len(_facets(group, self.cols)) if self.cols else self.width


def _facets(group: GroupRecord, key: str | None) -> list[Any]:
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
            for rv in _facets(group, rows):
                for cv in _facets(group, cols):
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
        title = str(arm or group.preset)
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
            panel = Panel(f"{opt}: targets' {label}", [metric], curves, xlabel="batches holding a target", points=True)
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
    title = f"{opt}: target rows' norm"
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
        title = ce.member.arm if ce.member is not None and ce.member.arm else ""
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


ACC = ["val_acc", "train_acc"]  # a seed that never fits the training set shows as such, not as a slow grok
RARE = ["val_acc", "val_acc_rare"]  # all test pairs, and the rare tokens' pairs (Fig. 4)
FIG4 = grid(RARE, need="val_acc")  # per split arm, a column per task
_CLAIMS = (
    Claim("fig2", ("fig2_embeddings",), "val and train accuracy with and without embeddings", grid(ACC), "data.op"),
    Claim("fig2_long", ("fig2_long",), "Fig. 2 at 40,000 steps: val and train accuracy", grid(ACC), "data.op"),
    Claim(
        "fig4_sampling",
        ("fig4_sampling",),
        "val accuracy of random, uniform, skewed per batch",
        grid(["val_acc"], cols="train.batch_size", rows="data.op"),
        "train.batch_size",
    ),
    Claim("fig4", ("fig4_token_skew",), "val accuracy and rare-token val accuracy per split", FIG4, "data.op"),
    Claim("fig4_heldout", ("fig4_skew_heldout",), "train set or held-out set skewed: val accuracy", FIG4, "data.op"),
    Claim(
        "fig4_epochs",
        ("fig4_epochs",),
        "batch sizes at equal epochs, random and skewed",
        grid(RARE, cols="data.split", x="epoch"),
        "data.split",
    ),
    Claim(
        "starve",
        ("starve",),
        "val accuracy with m = 0..5 pairs per starved token",
        # the starved tokens' own pairs (val_acc_target): at m = 0 they are absent, and the rare set is
        # drawn from the trained tokens, so val_acc_rare would show other tokens there
        grid(cols=None, metrics=["val_acc", "val_acc_target"]),
    ),
    Claim("fixes_mul", ("skew_fixes_mul",), "fixes on the token-skewed split, mul", grid(RARE, cols=None)),
    Claim("fixes_add", ("skew_fixes_add",), "fixes on the token-skewed split, add", grid(RARE, cols=None)),
    Claim("fig5", ("fig5_c_sensitivity",), "final val accuracy and train loss against c", fig5),
    Claim("fig6", ("fig6_optimizers",), "Adam vs Adam-LR val and train accuracy per task", grid(ACC), "data.op"),
    Claim(
        "fig6_adaptive",
        ("fig6_adaptive", "fig6_adaptive_mul"),
        "adaptive Adam-LR: val accuracy and c per task",  # Prop. 4.1: the c each arm trained with
        grid(["val_acc", "lr_ratio"]),
        "data.op",
    ),
    Claim(
        "appb",
        ("appb_update_ratio",),
        "update ratio, c and val accuracy per arm",
        grid(cols=None, metrics=["update_ratio", "lr_ratio", "val_acc"]),
    ),
    Claim("sec43", ("sec43_init",), "frozen, small-init and default embeddings", grid(ACC, cols=None)),
    Claim(
        "wd_init",
        ("wd_init",),
        "steps to generalize against weight decay and init scale",
        heat("model.embed_init_scale", "optim.weight_decay"),
    ),
    Claim(
        "fig12",
        ("fig12_lr_batch",),
        "steps to generalize per learning rate and batch",
        heat("optim.lr", "train.batch_size"),
    ),
    Claim(
        "fig12_starved",
        ("fig12_lr_batch_starved",),
        "the same on the token-skewed split",
        heat("optim.lr", "train.batch_size"),
    ),
    Claim("fig7", ("fig7_hessian",), "λmax of E and W, Adam vs Adam-LR", fig7),
    Claim("fig10", ("fig10_rank",), "rank of E, W and EW per optimizer", fig10),
    Claim("fig11", ("fig11_fourier",), "Fourier spectrum of E per task", fig11),
    Claim("fig4_tokens", ("fig4_token_skew", "starve"), "each token's learned step against its pairs", fig4_tokens),
    # the results that go past the paper: the decoupling of pairs and updates, the progress measures
    Claim(
        "decouple", ("decouple",), "target tokens' final val accuracy against their pairs m, per draw rate r", decouple
    ),
    Claim(
        "decouple_paper",
        ("decouple_paper",),
        "targets' val accuracy and learned step against the share of batches holding them; their rows' norm",
        decouple_paper,
        width=3,
    ),
    Claim(
        "decouple_factorial",
        ("decouple_factorial",),
        "targets' val accuracy and row norm after 500 steps of each pairs x draws x decay arm, per cell",
        cause.factorial,
        width=4,
    ),
    Claim(
        "decouple_direction",
        ("decouple_direction",),
        "targets' val accuracy with their rows at the ring's radius in their own or another direction",
        cause.direction,
        width=4,
    ),
    Claim(
        "cure_decouple",
        ("cure_decouple",),
        "targets' val accuracy, overall val accuracy and target norm of each cure from step 0, per cell",
        cause.cure(("val_acc_target", "val_acc", "target_norm")),
        width=4,
    ),
    Claim("cure_skew_mul", ("cure_skew_mul",), "val accuracy and rare-token val accuracy per cure", grid(RARE, None)),
    Claim(
        "progress",
        ("progress_phases",),
        "val accuracy and the progress measures per split",  # Nanda et al.'s restricted and excluded loss
        grid(["val_acc", "restricted_loss", "excluded_loss"]),
        "data.op",
    ),
)


def _paper_order(c: Claim) -> int:
    """A claim's place in the paper's list of sweeps (engine/claims/paper.py), docs/REPRODUCTION.md's order."""
    order = [p for p, _ in PAPER_SWEEPS]
    return min((order.index(p) for p in c.presets if p in order), default=len(order))


CLAIMS = {c.name: c for c in sorted(_CLAIMS, key=_paper_order)}


def get_claim(name: str) -> Claim:
    claim = CLAIMS.get(name)
    if claim is None:
        raise ConfigError(f"--claim {name}: unknown claim; known: {', '.join(CLAIMS)}")
    return claim


def claim_panels(name: str, group: GroupRecord) -> tuple[Claim, list[Panel]]:
    claim = get_claim(name)
    panels = claim.build(group)
    if not any(p.curves or p.heat is not None for p in panels):
        raise ConfigError(f"{group.dir}: nothing to draw for {name} ({claim.what}): no member has logged it yet")
    if not claim.cols:
        panels = [p for p in panels if p.curves or p.heat is not None]  # a grid keeps its empty cells in place
    return claim, panels


def ended_count(group_dir: Path) -> tuple[int, int]:
    """(members ended, members) of a group: it is complete when every member has a final status."""
    g = read_group(group_dir)
    return len(g.members) - len(g.pending()), len(g.members)


SEARCH_DEPTH = 3  # runs/<study>/<round>/<group>: folders a user sorts sweeps into


def find_groups(root: Path, depth: int = SEARCH_DEPTH) -> list[Path]:
    """Sweep group directories in `root` and in its folders down to `depth` levels; not inside a group
    or a run directory (their members and files are not groups)."""
    out: list[Path] = []
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return out
    for p in children:
        if is_group(p):
            out.append(p)
        elif depth > 1 and not is_run_dir(p):
            out += find_groups(p, depth - 1)
    return out


def paper_groups(runs_dir: str | Path) -> list[tuple[Claim, Path]]:
    """Each claim with its group under `runs_dir` (`find_groups`): of its first preset that has one, the
    newest complete group (every member ended), else the newest (a sweep still running draws what it has).
    Newest by group.json's `created` time, then by directory name (a group renamed by hand keeps its time)."""
    root = Path(runs_dir)
    if not root.is_dir():
        raise ConfigError(f"{runs_dir}: not a directory")
    found: list[tuple[str, str, bool, Path, str]] = []  # (created, name, complete, dir, preset)
    for g in find_groups(root):
        try:
            group = read_group(g)
        except ConfigError:
            continue
        found.append((str(group.doc.get("created", "")), g.name, not group.pending(), g, group.preset))
    by_preset: dict[str, list[tuple[bool, Path]]] = {}
    for _, _, complete, g, preset in sorted(found, key=lambda t: t[:2], reverse=True):  # newest first
        by_preset.setdefault(preset, []).append((complete, g))
    out = []
    for claim in CLAIMS.values():
        for p in claim.presets:
            if p in by_preset:
                done = [g for ok, g in by_preset[p] if ok]
                out.append((claim, (done or [g for _, g in by_preset[p]])[0]))
                break
    return out


def missing_claims(found: list[tuple[Claim, Path]]) -> list[Claim]:
    """The claims with no group in `found`, in the paper's order."""
    have = {c.name for c, _ in found}
    return [c for c in CLAIMS.values() if c.name not in have]
