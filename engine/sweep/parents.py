"""A fork study on another group's runs: `grok sweep --preset NAME --parents GROUP_DIR` (docs/SWEEPS.md).

A fork study needs its parents trained first, and a second study on the same parents should not train
them again. With `--parents`, each member of the new group that is not a fork is matched to the member
of GROUP_DIR with the same arm, grid cell and seed (one that has none there is trained here), whose run
ended; its run directory in the new group is a link to that run, which the sweep then adopts
(engine/sweep/member.py `prepare`) instead of training it, and forks from. A parent's config must be the
one the new group would have trained: the keys that change no trained number (preset, description,
threads, device, the checkpoint cadences and the probes, which draw from a stream of their own:
engine/probes/base.py) aside, any difference is refused, naming the member and the key, so a study never
forks from other runs than its preset names.
"""

from __future__ import annotations

from pathlib import Path

from engine.config import ConfigError, RunConfig, apply_overrides
from engine.records.group_dir import Group, Member
from engine.records.results import ENDED
from engine.rundir import link_run, read_config, read_summary

# Keys a parent may differ in from the member it stands for: they change no number a run logs.
IGNORED = frozenset(
    {"preset", "description", "train.threads", "train.device", "train.checkpoint_every", "train.keep_every",
     "train.keep_budget_mb"}
)  # fmt: skip


def _flat(cfg: RunConfig) -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in cfg.to_dict().items():
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def match_parents(base: RunConfig, members: list[Member], parents: Group) -> dict[str, Path]:
    """Member id -> the run directory in `parents` that stands for it (a member with no run there of its arm,
    cell and seed is left out: it trains); ConfigError, one line, where that run has not ended or its config
    differs."""
    by_key = {(m.arm, repr(sorted(m.values.items())), m.seed): m for m in parents.members if not m.fork_of}
    out: dict[str, Path] = {}
    for m in members:
        if m.fork_of:
            continue
        p = by_key.get((m.arm, repr(sorted(m.values.items())), m.seed))
        if p is None:  # not a run of the parents' group: this group trains it
            continue
        d = parents.member_dir(p).resolve()
        if not d.is_dir() or read_summary(d).status not in ENDED:
            raise ConfigError(f"--parents {parents.dir}: {p.id} ({p.label()}) has not ended; finish that group first")
        want, got = _flat(apply_overrides(base, m.overrides)), _flat(read_config(d))
        diff = [k for k in want if k not in IGNORED and not k.startswith("probe.") and want[k] != got.get(k)]
        if diff:
            k = diff[0]
            raise ConfigError(
                f"--parents: {p.id} ({p.label()}) ran with {k} = {got.get(k)!r}, this preset has {want[k]!r}"
            )
        out[m.id] = d
    return out


def link_parents(group: Group, links: dict[str, Path]) -> None:
    """Each matched member's run directory in `group` becomes a link to its parent's run."""
    for m in group.members:
        if m.id in links:
            link_run(links[m.id], group.member_dir(m))
