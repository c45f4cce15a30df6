"""The metrics.csv columns every run has, in order: torch-free, so a sweep's parent process can read them."""

from __future__ import annotations

# rare-token accuracy (Fig. 4, engine/metrics.py): rare (present tokens only), common, absent, target
RARE_COLUMNS = ("val_acc_rare", "val_acc_common", "val_acc_absent", "val_acc_target")
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
