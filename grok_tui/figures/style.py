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
COLUMN_W = 3.4  # inches: one column of a two-column paper
DOUBLE_W = 7.0  # inches: across both columns
PANEL_H = 2.1  # inches per row of panels
MAX_COLS = 4
BAND_ALPHA = 0.2
MARKER_COLORS = {"M": "#D55E00", "G": "#009E73", "C": "#0072B2", "U": "#CC79A7"}

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
    "train_loss": "train loss",
    "val_loss": "val loss",
    "hess_E": r"$\lambda_{\max}$ of E",
    "hess_W": r"$\lambda_{\max}$ of W",
    "rank_E": "rank(E)",
    "rank_W": "rank(W)",
    "rank_EW": "rank(EW)",
}


def label(metric: str) -> str:
    return LABELS.get(metric, metric)


def style(i: int) -> dict[str, Any]:
    """The i-th series' colour and line style (they cycle together, 8 distinct pairs)."""
    return {"color": PALETTE[i % len(PALETTE)], "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def log_y(metrics: list[str]) -> bool:
    """Losses, curvatures and singular values span decades: a log y axis."""
    return all(("loss" in m or m.startswith(("hess_", "sigma_"))) for m in metrics)


def is_acc(metrics: list[str]) -> bool:
    return all("acc" in m for m in metrics)
