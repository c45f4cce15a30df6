"""The look of a paper figure: column sizes, a colour-blind-safe palette with line styles for greyscale, fonts.

Colours are Okabe and Ito's palette (distinct under the common colour-vision deficiencies); each
series also gets its own line style, so a greyscale print still tells them apart. Widths are a
two-column paper's: 3.4 in for one column, 7 in across both.
"""

from __future__ import annotations

from typing import Any

# Okabe–Ito, yellow last (faint on white).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
LINESTYLES: tuple[Any, ...] = (
    "-",
    "--",
    ":",
    "-.",
    (0, (5, 1, 1, 1)),
    (0, (1, 1)),
    (0, (8, 2)),
    (0, (3, 1, 1, 1, 1, 1)),
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")  # points of a swept-value plot: a third cue beside colour and dash
COLUMN_W = 3.4  # inches: one column of a two-column paper
DOUBLE_W = 7.0  # inches: across both columns
PANEL_H = 2.1  # inches per row of panels
MAX_COLS = 4
BAND_ALPHA = 0.2
NO_VALUE = "0.85"  # a heat-map cell with no value: light grey, apart from every colour of the map
# Phase markers in greys, apart from the series' colours (a vermillion M beside a vermillion val line
# read as part of it); the letter names the phase.
MARKER_COLORS = {"M": "0.4", "C": "0.4", "U": "0.4", "G": "0.15"}

RC: dict[str, Any] = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "legend.fontsize": 6,
    "legend.frameon": False,
    "lines.linewidth": 1.1,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "svg.fonttype": "none",  # text stays text in SVG: editable, searchable, vector
    "pdf.fonttype": 42,  # TrueType in PDF (journals reject Type 3 fonts)
    "svg.hashsalt": "grok-tui",  # the same figure gives the same SVG
}

# Axis labels for the columns a figure most often shows; any other column is labelled by its name.
LABELS = {
    "train_acc": "train accuracy",
    "val_acc": "val accuracy",
    "val_acc_rare": "val accuracy, rare tokens",
    "val_acc_common": "val accuracy, common tokens",
    "val_acc_absent": "val accuracy, absent tokens",
    "val_acc_target": "val accuracy, target tokens",
    "restricted_loss": "restricted loss",
    "learned_step": "step the token is learned",
    "excluded_loss": "excluded loss",
    "train_loss": "train loss",
    "val_loss": "val loss",
    "hess_E": r"$\lambda_{\max}$ of E",
    "hess_W": r"$\lambda_{\max}$ of W",
    "rank_E": "rank(E)",
    "rank_W": "rank(W)",
    "rank_EW": "rank(EW)",
    "lr_ratio": r"$c = \eta_E / \eta_W$",
    "c_raw": r"$c$ before clamping",
    "update_ratio": r"$\|\Delta E\| / \|\Delta W\|$",
    "sigma_ratio": r"$\sigma_{\max}(E) / \sigma_{\max}(W)$",
    # swept config keys, as axis labels
    "optim.lr_ratio": r"$c = \eta_E / \eta_W$",
    "optim.weight_decay": "weight decay",
    "model.embed_init_scale": r"embedding init scale $\alpha$",
    "optim.lr": "learning rate",
    "train.batch_size": "batch size",
    "data.op": "task",
    "data.split": "split",
}


def label(metric: str) -> str:
    return LABELS.get(metric, metric)


OPTIMIZERS = {"adam": "Adam", "adamlr": "Adam-LR", "sgd": "SGD"}  # an arm's optimizer, as a title names it


def arm_title(arm: str) -> str:
    """A panel's arm in words, for a column title: `adam_m1_r1` "Adam with one pair at r = 1" (the cells of the
    decoupling studies, engine/claims/cause_pairs.py), `mul_adam` "mul, Adam", `adamlr` "Adam-LR"; any other
    arm as it is named."""
    from engine.claims.cause_pairs import CELLS

    opt, _, rest = arm.partition("_")
    if arm in OPTIMIZERS:
        return OPTIMIZERS[arm]
    if opt in OPTIMIZERS and rest in CELLS:
        return f"{OPTIMIZERS[opt]} {CELLS[rest]}"
    if opt in OPTIMIZERS and rest == "r1":  # every pair at every draw: the cells' control
        return f"{OPTIMIZERS[opt]} at r = 1 (control)"
    if rest in OPTIMIZERS:  # TASK_OPTIMIZER, as decouple names its arms
        return f"{opt}, {OPTIMIZERS[rest]}"
    return arm


def style(i: int) -> dict[str, Any]:
    """The i-th series' colour and line style: 8 colours, the style shifted by one each round, 64 distinct pairs."""
    n = len(PALETTE)
    return {"color": PALETTE[i % n], "linestyle": LINESTYLES[(i + i // n) % len(LINESTYLES)]}


def log_y(metrics: list[str]) -> bool:
    """Losses, curvatures, singular values and ratios of E's to W's span decades: a log y axis."""
    ratios = ("lr_ratio", "c_raw", "update_ratio")
    return bool(metrics) and all(("loss" in m or m.startswith(("hess_", "sigma_")) or m in ratios) for m in metrics)


def heat_cmap() -> Any:
    """viridis: colour-blind safe, its lightness rises monotonically (greyscale keeps the order)."""
    from matplotlib import colormaps

    return colormaps["viridis"]


def is_acc(metrics: list[str]) -> bool:
    return all("acc" in m for m in metrics)
