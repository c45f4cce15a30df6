"""Events the engine yields: small frozen dataclasses of plain values (numbers, strings, the frozen
RunConfig), never tensors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.config import RunConfig
from engine.status import Status as Status  # the events' statuses; engine/status.py
from engine.summary import RunSummary


@dataclass(frozen=True)
class TokenSets:
    """The split's operand tokens by role (engine/task/metrics.py, Fig. 4): the rare set `val_acc_rare` is measured
    on, the tokens without a training pair, data.starve_k's targets, and the training pairs holding each token."""

    rare: tuple[int, ...] = ()
    absent: tuple[int, ...] = ()
    target: tuple[int, ...] = ()
    train_pairs: tuple[
        int, ...
    ] = ()  # per operand token 0..p-1, a pair (t, t) once (engine/task/data.py pairs_holding)

    FIELDS = ("rare_tokens", "absent_tokens", "target_tokens", "train_pairs")  # their summary.json keys

    def fields(self) -> dict[str, list[int]]:
        """The sets as summary.json holds them."""
        return dict(zip(self.FIELDS, map(list, (self.rare, self.absent, self.target, self.train_pairs)), strict=True))

    @classmethod
    def from_fields(cls, summary: dict[str, Any]) -> TokenSets | None:
        """The sets from a summary.json that holds them all (checked by engine/rundir/schema.py), else None."""
        if not all(isinstance(summary.get(k), list) for k in cls.FIELDS):
            return None
        return cls(*(tuple(summary[k]) for k in cls.FIELDS))


@dataclass(frozen=True)
class RunStarted:
    """Training is about to begin (or resume at `step`)."""

    config: RunConfig
    device: str
    n_train: int
    n_test: int
    vocab_size: int
    token_freq: tuple[int, ...]  # occurrences of each token in the training set (Fig. 8)
    step: int
    max_steps: int
    columns: tuple[str, ...]  # metrics.csv columns, in order
    run_dir: str = ""
    tokens: TokenSets = TokenSets()  # the split's token roles, as the evaluation uses them


@dataclass(frozen=True)
class StepsTaken:
    """Progress between evaluations."""

    step: int
    epoch: int
    wall_s: float
    steps_per_s: float


@dataclass(frozen=True)
class EvalLogged:
    """One evaluation on the full train and test sets, plus any probes due: one metrics.csv row."""

    step: int
    row: dict[str, float]
    memorized_step: int | None = None  # the phases as engine/train/phases.py sees them after this evaluation
    generalized_step: int | None = None
    circuit_step: int | None = None  # circuit formation and cleanup (progress probe, engine/train/phases.py)
    cleanup_step: int | None = None


@dataclass(frozen=True)
class TokensLogged:
    """Per-token update counts (and, when the gradient probe ran, embedding gradient norms)."""

    step: int
    updates: tuple[int, ...]
    grad_norm: tuple[float, ...] | None = None
    val_acc: tuple[float, ...] | None = None  # accuracy on the test pairs holding each token; NaN for op, '='


@dataclass(frozen=True)
class FourierLogged:
    """‖DFT of E over operand tokens‖₂ over the embedding axis, frequencies 0..⌊p/2⌋ (App. C.3)."""

    step: int
    norms: tuple[float, ...]


JOIN_SHARE = 0.5  # a token is in the circuit with >= half its embedding energy on the key frequencies (`membership`)


@dataclass(frozen=True)
class CircuitLogged:
    """The progress probe's per-frequency and per-token output (docs/PROBES.md, `progress`).

    `shares[w-1]`: share of the logits' non-constant energy on frequency w's (i + s·j) terms on the group
    axis; `keys`: the key frequencies. The ring: each axis token's coordinates in the plane of `ring_freq`,
    its distance from the ideal ring, its share of embedding energy in the key frequencies, and whether it
    is one of the rare tokens (probe.rare_k least trained). Empty tuples for a model without E.
    """

    step: int
    shares: tuple[float, ...]
    keys: tuple[int, ...]
    ring_freq: int = 0
    tokens: tuple[int, ...] = ()
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    distance: tuple[float, ...] = ()
    membership: tuple[float, ...] = ()
    rare: tuple[bool, ...] = ()


@dataclass(frozen=True)
class StatusChanged:
    """The run was paused or resumed from another thread."""

    status: str


@dataclass(frozen=True)
class RunFinished:
    """The run ended; `status` is finished, interrupted, diverged or failed; `summary` is summary.json's
    record (engine/summary.py)."""

    status: str
    summary: RunSummary = field(default_factory=RunSummary)
    error: str = ""


Event = (
    RunStarted | StepsTaken | EvalLogged | TokensLogged | FourierLogged | CircuitLogged | StatusChanged | RunFinished
)
