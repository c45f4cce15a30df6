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
    "c_raw",  # adaptive c before its clamp (engine/adaptive.py); = lr_ratio where the clamp does not bind
    *RARE_COLUMNS,
)
# The probes' columns follow these (engine/probes/).
