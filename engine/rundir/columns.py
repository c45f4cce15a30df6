"""The metrics.csv columns every run has, in order: torch-free, so a sweep's parent process can read them."""

from __future__ import annotations

# rare-token accuracy (Fig. 4, engine/task/metrics.py): rare (present tokens only), common, absent, target
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
    "c_raw",  # adaptive c before its clamp (engine/train/adaptive.py); = lr_ratio where the clamp does not bind
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
    "rqi_shuffled",  # the same rule on E's rows in a fixed random order: chance, about 1/n
    "ring_distance",  # median over tokens of the leave-one-out distance from the ring
    "ring_distance_shuffled",
    "ring_members",
)

# A token is learned at the first evaluation where its val_acc (the test pairs holding it) reaches this and
# stays at or above it through the end of the run: the per-token form of Fig. 4 (`grok tokens`).
LEARNED_ACC = 0.9


def held_since(since: int | None, step: int, value: float, threshold: float) -> int | None:
    """One evaluation of the rule "reaches `threshold` and stays at or above it to the end": the step since
    which `value` has held (`since` is the answer before this evaluation), None while it is below."""
    if value >= threshold:  # NaN compares False: a token with no test pair is never learned
        return step if since is None else since
    return None


def learned_step(steps: list[int], accs: list[float], threshold: float = LEARNED_ACC) -> int | None:
    """The first step from which `accs` stays >= threshold to the end; None if the last is below (or NaN).
    The one form of this rule: a token's learned step (live in engine/train/evaluation.py, or from tokens.csv) and
    its join step into the circuit (engine/rundir/probe_logs.py join_steps)."""
    since: int | None = None
    for s, a in zip(steps, accs, strict=True):
        since = held_since(since, s, a, threshold)
    return since
