"""The metrics.csv columns every run has, in order: torch-free, so a sweep's parent process can read them."""

from __future__ import annotations

RARE_COLUMNS = ("val_acc_rare", "val_acc_common")  # rare-token accuracy (Fig. 4, engine/metrics.py)
BASE_COLUMNS = (
    "step",
    "epoch",
    "wall_s",
    "train_loss",
    "train_acc",
    "val_loss",
    "val_acc",
    "lr",
    "lr_embed",
    "lr_ratio",
    "f_E",
    *RARE_COLUMNS,
)
# The probes' columns follow these (engine/probes/).
# The progress probe's columns (engine/probes/progress.py, docs/PROBES.md), when probe.progress_every > 0.
PROGRESS_COLUMNS = (
    "restricted_loss",
    "excluded_loss",
    "key_freqs",
    "key_share",
    "gini_E",
    "weight_sq",
    "rqi",
    "ring_members",
)
