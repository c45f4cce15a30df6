"""Probes over the member axis (engine/probes/base.py `MemberBatch`): the Fourier probe's one batched DFT and the
gradient probe's one batched norm for every member of a stacked model, equal to each member's own measurement."""

from __future__ import annotations

from engine.probes.base import MemberBatch
from engine.probes.fourier import FourierProbe
from engine.probes.gradients import GradProbe
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
    assert len(probes) == 3 and all(isinstance(p.batch, MemberBatch) for p in probes)
    together = [p.measure(10) for p in probes]
    for p in probes:
        p.batch = None  # each member alone: its own DFT and copy to the host
    alone = [p.measure(10) for p in probes]
    assert together == alone  # the same floats, bit for bit
    assert len({r["fourier"] for r in together}) == 3  # and each member's own spectrum


def test_stacked_members_share_one_gradient_norm_measurement_equal_to_their_own() -> None:
    cfgs = [tiny_config(train__seed=s, probe__grad_every=10) for s in range(3)]
    loop = TrainLoop(cfgs, stacked=True)
    probes = [p for ps in loop.probe_sets for p in ps.probes if isinstance(p, GradProbe)]
    assert len(probes) == 3 and all(isinstance(p.batch, MemberBatch) for p in probes)
    assert [p.measure(0) for p in probes] == [{}, {}, {}]  # no training step yet
    loop._prepare_step()
    loop.update(loop._offset + loop.xs_train.new_tensor(range(16))[None].repeat(3, 1), loop._before_update)
    together = [p.measure(1) for p in probes]
    for p in probes:
        p.batch = None
    assert together == [p.measure(1) for p in probes]  # the same floats, bit for bit
    assert len({r["grad_norm"] for r in together}) == 3 and all(len(r["grad_norm"]) == 13 for r in together)
