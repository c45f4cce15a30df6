"""Where decay's sign turns (engine/claims/studies/decouple_decay.py): the forks it pairs and how it reads them."""

from __future__ import annotations

import math

from engine.claims.studies.decouple_decay import (
    CELLS,
    CONTROL,
    SIGN,
    WINDOWS,
    Fork,
    accuracy_outcome,
    fork_arm,
    lengthening,
    pairs,
)
from engine.claims.verdicts import FAILS, HOLDS, OPPOSITE, UNREAD
from engine.config.presets import load_preset


def test_the_preset_forks_every_cell_at_both_windows_with_decay_on_and_off() -> None:
    p = load_preset("decouple_decay")
    cells = {a.split("_", 1)[1] for a in p.sweep["arms"]}
    assert cells == set(CELLS) and CONTROL in cells and set(SIGN) < cells
    forks = p.sweep["forks"]
    want = {f"{d}_{w}" for d in ("wd", "nowd") for w in WINDOWS}
    assert set(forks) == want
    for name, table in forks.items():
        assert table["train.max_steps"] == int(p.sweep["fork_at"]) + int(name.rsplit("_", 1)[1])
        assert ("optim.decay_sets" in table) == name.startswith("nowd")  # the one key the two levels differ in
        assert "intervene" not in table  # everything trains, W too


def test_a_fork_arm_names_its_cell_decay_and_window() -> None:
    assert fork_arm("adam_m1_r1_nowd_5000") == ("m1_r1", "nowd", 5000)
    assert fork_arm("adam_r0.01_wd_500") == ("r0.01", "wd", 500)
    assert fork_arm("adam_m1_r1") is None and fork_arm("adam_r1") is None


def _f(seed: int, acc: float, norm: float = 1.0, share: float = 0.1) -> Fork:
    return Fork(seed, acc, norm, (share, 1.0))


def test_decay_off_is_read_seed_by_seed_where_the_draws_agree_and_there_is_room() -> None:
    ps = [(_f(s, 0.8), _f(s, 0.5)) for s in range(3)]
    assert accuracy_outcome(ps, raises=False).state == HOLDS
    assert accuracy_outcome(ps, raises=True).state == OPPOSITE
    other_draws = [(_f(0, 0.8), _f(0, 0.5, share=0.2)), *ps[1:]]  # a pair that drew other batches cannot tell
    o = accuracy_outcome(other_draws, raises=False)
    assert list(o.agree) == [None, True, True] and o.state == UNREAD
    floor = [(_f(0, 0.01), _f(0, 0.0)), *ps[1:]]  # no room to fall
    assert list(accuracy_outcome(floor, raises=False).agree) == [None, True, True]
    mixed = [(_f(0, 0.8), _f(0, 0.9)), *ps[1:]]
    assert accuracy_outcome(mixed, raises=False).state == FAILS


def test_lengthening_is_read_against_the_control_of_the_same_seed() -> None:
    fs = {
        ("m1_r1", "wd", 5000): {0: _f(0, 0.8, 1.0), 1: _f(1, 0.8, 1.0)},
        ("m1_r1", "nowd", 5000): {0: _f(0, 0.5, 4.0), 1: _f(1, 0.5, 2.0)},
        (CONTROL, "wd", 5000): {0: _f(0, 1.0, 2.0), 1: _f(1, 1.0, 2.0)},
        (CONTROL, "nowd", 5000): {0: _f(0, 1.0, 4.0), 1: _f(1, 1.0, 8.0)},
    }
    assert [round(math.exp(x), 9) for x in lengthening(fs, "m1_r1", 5000)] == [2.0, 0.5]  # 4x / 2x, 2x / 4x
    assert [a.seed for a, _ in pairs(fs, "m1_r1", 5000)] == [0, 1]
    assert lengthening(fs, "m1_r1", 500) == []
