"""The Fourier probe over the member axis (engine/probes/fourier.py `share_fourier`): one batched DFT for every
member of a stacked model, equal to each member's own measurement."""

from __future__ import annotations

from engine.probes.fourier import FourierBatch, FourierProbe
from engine.train.loop import TrainLoop
from tests.conftest import tiny_config


def test_stacked_members_share_one_fourier_measurement_equal_to_their_own() -> None:
    ops = (("add", "token"), ("mul", "dlog"), ("sub", "token"))  # another op and token order per member
    cfgs = [
        tiny_config(train__seed=s, data__op=op, probe__fourier_every=10, probe__fourier_order=order)
        for s, (op, order) in enumerate(ops)
    ]
    loop = TrainLoop(cfgs, stacked=True)
    for _ in range(3):
        loop.update(loop._offset + loop.xs_train.new_tensor(range(16))[None].repeat(3, 1))  # members apart
    probes = [p for ps in loop.probe_sets for p in ps.probes if isinstance(p, FourierProbe)]
    assert len(probes) == 3 and all(isinstance(p.batch, FourierBatch) for p in probes)
    together = [p.measure(10) for p in probes]
    for p in probes:
        p.batch = None  # each member alone: its own DFT and copy to the host
    alone = [p.measure(10) for p in probes]
    assert together == alone  # the same floats, bit for bit
    assert len({r["fourier"] for r in together}) == 3  # and each member's own spectrum
