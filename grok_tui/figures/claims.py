"""One figure per claim of the paper, in the paper's layout, from the sweep group that backs the claim.

Each claim names the presets whose groups can draw it (docs/REPRODUCTION.md says which preset backs
which claim); `grok figure --claim NAME GROUP` draws one, `grok figure --paper RUNS_DIR` every
claim whose group is present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.claims.paper import PAPER_SWEEPS
from engine.config import ConfigError
from engine.records.group import GroupRecord, read_group
from engine.rundir import is_group, is_run_dir
from grok_tui.figures import cause, tail
from grok_tui.figures.builders import (
    decouple,
    decouple_paper,
    facets,
    fig4_tokens,
    fig5,
    fig7,
    fig10,
    fig11,
    grid,
    heat,
)
from grok_tui.figures.draw import Panel


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
        return len(facets(group, self.cols)) if self.cols else self.width


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
    Claim("fixes_mul", ("skew_fixes_mul",), "fixes on the token-starved split, mul", grid(RARE, cols=None)),
    Claim("fixes_add", ("skew_fixes_add",), "fixes on the token-starved split, add", grid(RARE, cols=None)),
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
        "the same on the token-starved split",
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
    Claim(
        "recipe_tail",
        ("recipe_tail",),
        "val accuracy by decile of draw rate on the frequency tail, a line per recipe, a panel per optimizer",
        tail.by_decile,
        width=2,
    ),
    Claim(
        "recipe_tail_steep",
        ("recipe_tail_steep",),
        "recipe_tail's figure on the steeper tail (s = 1.25)",
        tail.by_decile,
        width=2,
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
