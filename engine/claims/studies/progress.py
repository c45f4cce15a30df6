"""The progress measures' reading (`progress_phases`, ours after Nanda et al. 2023 and the paper's §4.2).

Per run, from engine/sweep/report/circuit.py `circuit_cells` (the quantities `grok circuit` prints): the
restricted loss falls below half of chance, ln(p)/2, before the test loss does; ‖θ‖² falls over the jump
from 10% val to 95%; and on the token-starved split the rare tokens are the last to join the ring (the share
of rare tokens among the last k to join, against k/p by chance; joins.csv). A run that never reached the
step a quantity needs cannot tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.claims.claim import Claim
from engine.claims.readings import Reading, part, spread
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group
from engine.sweep.report.circuit import circuit_cells


def _side(recs: Sequence[dict[str, Any]], key: str, holds: Any) -> Outcome:
    """Per run, whether `key` is on the claimed side (None: not measured in that run)."""
    vals = [r.get(key) for r in recs]
    return Outcome(
        [None if v is None else bool(holds(v)) for v in vals], [v is not None and not holds(v) for v in vals]
    )


def progress(group: Group) -> Reading:
    """Progress measures (ours): the restricted loss crosses first, ‖θ‖² falls over the jump, and rare tokens
    join the ring last (§4.2: a rarely drawn token's row is learned last)."""
    cells = circuit_cells([group.dir])
    runs = [r for rs in cells.values() for r in rs]
    starved = [r for (_, split), rs in cells.items() if split == "starved" for r in rs]
    k = max((group.config(m).data.starve_k for m in group.members), default=0)
    chance = k / group.base.data.p if k else 0.0
    lead = _side(runs, "lead", lambda v: v > 0)
    fall = _side(runs, "dw", lambda v: v < 0)
    last = _side(starved, "last_share", lambda v: v > chance)
    parts = [
        part("the restricted loss falls before the test loss", lead, f"first in {lead.k_of_n('runs')}"),
        part("‖θ‖² falls over the jump", fall, f"falls in {fall.k_of_n('runs')}"),
        part(
            "on the starved split, rare tokens join the ring last",
            last,
            f"share among the last {k} above chance ({chance:.3f}) in {last.k_of_n('runs')}",
        ),
    ]

    def of(key: str, recs: Sequence[dict[str, Any]] = runs, f: str = ".0f", sign: bool = False) -> str:
        # the runs of several cells pooled: their range, never a t-interval (the cells are not seeds)
        return spread([float(r[key]) for r in recs if r.get(key) is not None], f, sign, pooled=True)

    values = {
        "lead": of("lead", sign=True),
        "dw": of("dw", f=".3f", sign=True),
        "last_share": of("last_share", starved, ".3f"),
        "chance": f"{chance:.3f}",
        # a rare token that never joined counts as last: how many of the starved runs' rare tokens never did
        "never_rare": f"{sum(int(r.get('never_rare') or 0) for r in starved)} of {k * len(starved)}",
        "random_last_share": of(
            "last_share", [r for (_, split), rs in cells.items() if split == "random" for r in rs], ".3f"
        ),
        "runs": str(len(runs)),
        "starved_gen": f"{sum(r.get('G') is not None for r in starved)} of {len(starved)}",
    }
    head = f"restricted loss first by {values['lead']} steps; ‖θ‖² over the jump {values['dw']} (relative)"
    ops = sorted({op for op, _ in cells})
    return Reading(parts, head, lead.k_of_n("runs"), f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)})", values)


CLAIM = Claim(
    "progress",
    "",
    "Progress measures and the embedding ring (ours)",
    "progress_phases",
    "supported",
    "restricted loss first ({p0}); ‖θ‖² falls over the jump ({p1}); starved rare tokens last: none joins by "
    "the end ({never_rare})",
    tail=3,
    figure="progress",
    ours=True,
    read=progress,
    row=240,
)
