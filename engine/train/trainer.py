"""A single run's training loop: `Trainer(cfg)` is an iterator of events with pause, unpause and stop.

It is the one training step of engine/train/loop.py with one member (any model kind, gradient filters
included) and a pause; a batched sweep trains N members with the same step (engine/train/many.py).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from engine.config import RunConfig
from engine.events import Event
from engine.train.device import resolve_device as resolve_device
from engine.train.loop import PROGRESS_EVERY as PROGRESS_EVERY
from engine.train.loop import TrainLoop
from engine.train.phases import PhaseTracker
from engine.train.weights import OneModel


class Trainer(TrainLoop):
    """Builds data, model and optimizer from a RunConfig and yields events as it trains.

    The loop keeps tensors on the device and syncs with the host only every PROGRESS_EVERY steps
    and at evaluations.
    """

    def __init__(self, cfg: RunConfig, state: dict[str, Any] | None = None) -> None:
        super().__init__([cfg])
        self.cfg = cfg
        w = self.weights
        assert isinstance(w, OneModel)
        self.model = w.model
        self.opt = self.opts[0]
        self.probes = self.probe_sets[0]
        self.metrics = self.runs[0]
        if state is not None:
            self.load_state_dict(state)

    # --- control, callable from any thread -----------------------------------------------------

    def pause(self) -> None:
        """Hold the loop before its next step (StatusChanged("paused"))."""
        self._pause.set()

    def unpause(self) -> None:
        """Let a paused loop go on (StatusChanged("running"))."""
        self._pause.clear()

    @property
    def phases(self) -> PhaseTracker:
        return self.metrics.phases

    @property
    def lr_ratio(self) -> float:
        """c = lr_E / lr now (fixed, or adaptive: Prop. 4.1)."""
        return self.metrics.lr_ratio

    # --- the loop ----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    def events(self) -> Generator[Event, None, None]:
        """The event stream, from the loop's own thread (`engine.train.loop_thread.on_loop_thread`)."""
        stream = self.member_events()
        try:
            for _, ev in stream:
                yield ev
        finally:
            stream.close()

    def summary(self, status: str) -> dict[str, Any]:
        """summary.json's fields for this run ending now with `status`."""
        return self.member_summary(0, status)

    # --- checkpoints ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue bit for bit (checkpoint.pt)."""
        return self.member_state_dict(0)

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.load_member_state(0, s)
