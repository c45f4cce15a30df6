"""`grok sweep --plan --device cuda --free-gib G`: the batches on a card and a predicted wall time."""

from __future__ import annotations

from tests.cli.conftest import grok


def test_plan_on_a_card_predicts() -> None:
    r = grok("sweep", "--preset", "fig7_hessian", "--plan", "--device", "cuda", "--free-gib", "80", "--workers", "4")
    assert r.returncode == 0, r.stderr
    assert "80 GiB free, 4 workers" in r.stdout and "residuals" in r.stdout
    row = next(ln.split() for ln in r.stdout.splitlines() if ln.startswith("fig7_hessian"))
    assert row[1:4] == ["6", "1", "6"] and row[-1] == "s"  # 6 members in one batch, a time in seconds
    assert all(len(ln) <= 80 for ln in r.stdout.splitlines())


def test_free_gib_needs_a_card_plan() -> None:
    r = grok("sweep", "--preset", "fig7_hessian", "--free-gib", "80")
    assert r.returncode == 2 and "--free-gib sizes a card for --plan --device cuda" in r.stderr
    bad = grok("sweep", "--preset", "fig7_hessian", "--plan", "--device", "cuda:7")
    assert bad.returncode == 2 and "give --free-gib G" in bad.stderr  # no such card on this machine
