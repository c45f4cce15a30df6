"""The decoupling at Fig. 4's settings read (engine/claims/studies/decouple_paper.py): its decisions on
hand-made per-member numbers where every answer is known, and on a hand-made fork group (the before at the fork
step, the realized draws from summary.json)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from engine.claims.studies.decouple_paper import Obs, decouple_paper, read
from engine.records.group_dir import Member
from tests.engine.sweep.fakegroup import fake_group

SEEDS = (2, 0, 1)  # out of order: a reader that pairs by position, not by seed, pairs the wrong members
DRAWS = {"r1": 1.0, "r0.3": 0.33, "r0.01": 0.011, "m1_r1": 0.015, "m1_matched": 1.0, "m3_r1": 0.046}
DRAWS["m3_matched"] = 1.0
STARVED = ("r0.01", "m1_r1", "m1_matched", "m3_r1", "m3_matched")  # the cells the forks start from


def _parent(opt: str, cell: str, seed: int, acc: float, norm: float = 0.3) -> Obs:
    return Obs(f"{opt}_{cell}", seed, acc=acc, norm=norm, draws=DRAWS[cell])


def _fork(opt: str, cell: str, kind: str, seed: int, **v: float) -> Obs:
    return Obs(f"{opt}_{cell}_{kind}", seed, f"{opt}_{cell}", **v)


def world() -> list[Obs]:
    """Both optimizers, three seeds, every part holding, each seed's numbers its own (seed s adds s / 100) so
    a pair across seeds reads otherwise:
    - r = 0.01 ends 0.3 below r = 1 (r = 0.3 ties with r = 1: read it instead and part 1 fails);
    - one pair at matched draws ends 0.1 below r = 1; at r = 1, 0.05 above it (its draws are not matched: read it
      and part 2 is opposite);
    - rescaled: 0.4 → 0.95 against the parent at the fork step, whose last evaluation is above the after in
      the three-pair cells and with one pair at r = 1: compare the after with the parent's end and part 3 fails;
    - the rescaled norm: 1.0 as rescaled, 0.6 500 steps later, 0.3 before (the after is above the before:
      compare with the before and part 4 is opposite);
    - all pairs 0.9, own pairs 0.5 (after); before both 0.95 (compare with the before and part 5 is opposite).
    """
    obs = []
    for opt in ("adam", "sgd"):
        for s in SEEDS:
            e = s / 100
            obs += [_parent(opt, "r1", s, 0.9 + e), _parent(opt, "r0.3", s, 0.9 + e), _parent(opt, "r0.01", s, 0.6 + e)]
            obs += [_parent(opt, "m1_matched", s, 0.8 + e), _parent(opt, "m1_r1", s, 0.95 + e)]
            obs += [_parent(opt, c, s, 0.99 + e) for c in ("m3_r1", "m3_matched")]
            for c in STARVED:
                obs += [
                    _fork(opt, c, "rescaled", s, acc=0.95 + e, acc_before=0.4 + e, norm=1.0 + e, norm_before=0.3),
                    _fork(opt, c, "rescaled_500", s, acc=0.9, acc_before=0.4 + e, norm=0.6 + e, norm_before=0.3 + e),
                    _fork(opt, c, "rows_all", s, acc=0.9 + e, acc_before=0.95, norm=1.0, draws=121.0),
                    _fork(opt, c, "rows_own", s, acc=0.5 + e, acc_before=0.95, norm=0.4, draws=1.0),
                ]
    return obs


def _states(obs: list[Obs]) -> dict[str, str]:
    parts, _ = read(obs)
    return {p.text: p.state for p in parts}


def _set(obs: list[Obs], arm: str, seed: int | None = None, **v: Any) -> list[Obs]:
    """`obs` with the members of `arm` (one seed, or every seed) given the values `v`."""
    return [dataclasses.replace(o, **v) if o.arm == arm and seed in (None, o.seed) else o for o in obs]


def test_every_part_reads_its_own_arms_paired_by_seed() -> None:
    parts, values = read(world())
    assert [(p.text, p.state) for p in parts] == [
        ("with the data intact, draws cut to r = 0.01 lower the targets (Adam and SGD pooled)", "holds"),
        (
            "at ordinary draws, one pair lowers the targets (with one pair at matched draws against every pair at "
            "r = 1; Adam and SGD pooled)",
            "holds",
        ),
        *((f"{w}, rescaled to the ring, the targets rise at once", "holds") for w in _cell_words()),
        *((f"{w}, the rescaled norm falls back within 500 steps", "holds") for w in _cell_words()),
        *((f"{w}, trained alone on all their pairs the target rows are taken in", "holds") for w in _cell_words()),
    ]
    assert values["draws"] == "−0.300 (−0.300 to −0.300, n = 6)"  # each seed against its own: exactly −0.3
    assert values["draws_k"] == "6 of 6 pairs"
    assert values["pairs_m1_matched"] == "−0.100 (−0.100 to −0.100, n = 6)"
    assert (
        values["pairs_unread"] == "with one pair at r = 1 (Adam, SGD): realized draws 0.0150–0.0150× the intact cell's"
    )
    assert values["rescaled_k"] == "30 of 30 pairs higher" and values["m1_r1_rescaled_k"] == "6 of 6 pairs higher"
    assert values["rescaled_before"].startswith("0.410 ") and values["rescaled_after"].startswith("0.960 ")
    assert values["m1_matched_norm_rescaled"] == "1.010 (1.000–1.020, n = 6)"
    assert values["m1_matched_norm_500"] == "0.610 (0.600–0.620, n = 6)"
    assert values["m1_matched_norm_before"] == "0.310 (0.300–0.320, n = 6)"
    assert values["m1_matched_norm_kept"] == "0.429 (0.429–0.429, n = 6)"  # (0.6 − 0.3) / (1.0 − 0.3) each seed
    assert values["matched_fallback_k"] == "12 of 12 pairs"  # m1_matched and m3_matched, both optimizers
    assert values["matched_draws"] == "1.000 (1.000–1.000, n = 12)"
    assert values["r001_rows_all"].startswith("0.910") and values["r001_rows_k"] == "6 of 6 pairs higher"
    assert values["r001_rows_draws"] == "121–121×" and values["matched_rows_all_norm"].startswith("1.000")
    assert values["matched_rows_own_norm"] == "0.400 (0.400–0.400, n = 12)"


def _cell_words() -> list[str]:
    return [
        "at r = 0.01 (data intact)",
        "with one pair at r = 1",
        "with one pair at matched draws",
        "with three pairs at r = 1",
        "with three pairs at matched draws",
    ]


def test_a_part_fails_when_one_seed_goes_the_other_way() -> None:
    obs = _set(world(), "sgd_r0.01", seed=1, acc=0.95)  # sgd seed 1: cut above intact (0.91)
    parts, values = read(obs)
    assert parts[0].state == "fails" and values["draws_k"] == "5 of 6 pairs"


def test_every_direction_the_other_way_is_opposite() -> None:
    obs = world()
    for opt in ("adam", "sgd"):
        obs = _set(obs, f"{opt}_r0.01", acc=1.5)  # cut above intact in every seed
        obs = _set(obs, f"{opt}_m1_matched", acc=1.5)
        for c in STARVED:
            obs = _set(obs, f"{opt}_{c}_rescaled", acc=0.1)  # below the parent at the fork step
            obs = _set(obs, f"{opt}_{c}_rescaled_500", norm=1.5)  # longer than rescaled
            obs = _set(obs, f"{opt}_{c}_rows_own", acc=0.99)  # own pairs above all pairs
    assert set(_states(obs).values()) == {"opposite"}


def test_a_tie_counts_against_the_direction() -> None:
    obs = world()
    for opt in ("adam", "sgd"):
        for s in SEEDS:
            obs = _set(obs, f"{opt}_m3_r1_rows_own", seed=s, acc=0.9 + s / 100)  # both at the same accuracy
    states = _states(obs)
    assert states["with three pairs at r = 1, trained alone on all their pairs the target rows are taken in"] == "fails"


def test_a_pair_at_the_ceiling_on_both_sides_cannot_tell_and_one_that_falls_from_it_fails() -> None:
    obs = _set(world(), "sgd_m3_matched_rescaled", seed=0, acc_before=1.0, acc=1.0)  # no room to rise
    obs = _set(obs, "sgd_m3_matched_rows_own", seed=0, acc=1.0)
    obs = _set(obs, "sgd_m3_matched_rows_all", seed=0, acc=1.0)
    parts, values = read(obs)
    states = {p.text: p.state for p in parts}
    assert states["with three pairs at matched draws, rescaled to the ring, the targets rise at once"] == "unread"
    assert states[
        "with three pairs at matched draws, trained alone on all their pairs the target rows are taken in"
    ] == ("unread")
    assert states["with three pairs at r = 1, rescaled to the ring, the targets rise at once"] == "holds"
    assert values["m3_matched_rescaled_k"] == "5 of 6 pairs higher (1 at 1.000 on both sides: no room to rise)"
    assert values["rescaled_k"] == "29 of 30 pairs higher (1 at 1.000 on both sides: no room to rise)"
    obs = _set(obs, "sgd_m3_matched_rescaled", seed=0, acc=0.99)  # from the ceiling down: against
    assert _states(obs)["with three pairs at matched draws, rescaled to the ring, the targets rise at once"] == "fails"


def test_no_one_pair_cell_at_the_intact_cells_draws_leaves_the_pairs_part_unread() -> None:
    obs = world()
    for opt in ("adam", "sgd"):
        obs = _set(obs, f"{opt}_m1_matched", draws=1.6)  # drawn 1.6 times as often as a median token: not matched
    parts, values = read(obs)
    pairs = [p for p in parts if p.text.startswith("at ordinary draws")]
    assert [(p.text, p.state) for p in pairs] == [("at ordinary draws, one pair lowers the targets", "unread")]
    assert "within 1.5-fold" in pairs[0].evidence
    assert "with one pair at matched draws (Adam, SGD): realized draws 1.60–1.60×" in values["pairs_unread"]
    assert "with one pair at r = 1" in values["pairs_unread"]


def test_an_optimizer_whose_draws_do_not_match_is_left_out_of_the_pool() -> None:
    obs = _set(world(), "sgd_m1_matched", seed=0, draws=0.5)  # one SGD pair 2-fold below the intact cell's draws
    parts, values = read(obs)
    assert parts[1].text.endswith("(with one pair at matched draws against every pair at r = 1; Adam)")
    assert values["pairs_m1_matched_k"] == "3 of 3 pairs"
    assert "with one pair at matched draws (SGD)" in values["pairs_unread"]


def test_draws_that_were_not_cut_leave_the_draws_part_unread() -> None:
    obs = world()
    for opt in ("adam", "sgd"):
        obs = _set(obs, f"{opt}_r0.01", draws=0.9)  # r = 0.01 drew nearly as often as r = 1
    parts, _ = read(obs)
    assert parts[0].state == "unread" and "not 2-fold apart" in parts[0].evidence


def test_the_rescaled_norm_is_paired_by_parent_and_seed() -> None:
    """Adam's rescaled rows fall back, SGD's keep their norm: pooling per cell over both, every cell fails; a
    reader pairing Adam's 500 steps with SGD's rescaled rows would read them as falling back."""
    obs = world()
    for c in STARVED:
        for s in SEEDS:
            obs = _set(obs, f"sgd_{c}_rescaled", seed=s, norm=0.5)
            obs = _set(obs, f"sgd_{c}_rescaled_500", seed=s, norm=0.55)  # above SGD's rescaled, below Adam's
    parts, values = read(obs)
    fall = [p for p in parts if "falls back" in p.text]
    assert [p.state for p in fall] == ["fails"] * 5
    assert values["m1_matched_fallback_k"] == "3 of 6 pairs" and values["matched_fallback_k"] == "6 of 12 pairs"


def test_no_fork_ended_leaves_the_fork_parts_out_or_unread() -> None:
    parts, values = read([o for o in world() if not o.parent])
    assert [p.state for p in parts] == ["holds", "holds", "unread"]
    assert values["rescaled_k"] == "0 of 0 pairs higher"


def test_the_group_reader_takes_before_at_the_fork_step_and_draws_from_the_summary(tmp_path: Path) -> None:
    """A hand-made fork group: each parent's targets at 0.4 until the fork step (100), then 0.99 at its end;
    the rescaled fork at 0.9 after it. Before is the parent's 0.4 at the fork step, not its 0.99 at the end."""
    acc = {"adam_r1": 0.9, "adam_r0.01": 0.6, "adam_m1_matched": 0.8, "adam_m1_r1": 0.5}
    arms = {"adam_r1": {"train.target_rate": 1.0}, "adam_r0.01": {"train.target_rate": 0.01}}
    arms |= {"adam_m1_matched": {"data.starve_m": 1, "train.target_rate": 0.0}, "adam_m1_r1": {"data.starve_m": 1}}
    forks = {"adam_r0.01_rescaled": {"from": "adam_r0.01", "intervene": ["rescale:targets=ring", "freeze:all"]}}
    table = {"seeds": 2, "arms": arms, "fork_at": 100, "forks": forks}

    def curve(m: Member) -> dict[str, list[float]]:
        if m.fork_of:
            return {"val_acc": [0.5] * 3, "val_acc_target": [0.4, 0.4, 0.9], "target_norm": [0.3, 0.3, 1.0]}
        return {"val_acc": [0.5] * 3, "val_acc_target": [0.4, 0.4, acc[m.arm]], "target_norm": [0.3] * 3}

    g = fake_group(tmp_path, table, curve, [0, 100, 200], data__starve_k=2)
    draws = {"adam_r1": 1.0, "adam_r0.01": 0.011, "adam_m1_matched": 1.0, "adam_m1_r1": 0.015}
    for m in g.members:
        path = g.member_dir(m) / "summary.json"
        extra = {"fork_step": 100} if m.fork_of else {"target_draw_ratio": draws[m.arm]}
        path.write_text(json.dumps({**json.loads(path.read_text()), **extra}))
    r = decouple_paper(g)
    assert {p.text: p.state for p in r.parts} == {
        "with the data intact, draws cut to r = 0.01 lower the targets (Adam)": "holds",
        "at ordinary draws, one pair lowers the targets (with one pair at matched draws against every pair at r = 1; "
        "Adam)": "holds",
        "at r = 0.01 (data intact), rescaled to the ring, the targets rise at once": "holds",
    }
    assert r.values["draws"].startswith("−0.300") and r.values["pairs_m1_matched"].startswith("−0.100")
    assert r.values["rescaled_before"].startswith("0.400") and r.values["rescaled_after"].startswith("0.900")
    assert r.headline.startswith("targets' val accuracy, rescaled to the ring: 0.400") and r.k_of_n.startswith("2 of 2")
