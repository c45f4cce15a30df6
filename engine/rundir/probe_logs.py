"""tokens.csv, fourier.csv, keyfreq.csv and ring.csv read back into the events that wrote them, each
token's learned step (from summary.json, else recomputed from tokens.csv by the same rule), and each token's
join step into the circuit from ring.csv's rows (joins.csv)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from engine.config import ConfigError
from engine.events import JOIN_SHARE, CircuitLogged, FourierLogged, TokensLogged
from engine.rundir.columns import LEARNED_ACC, learned_step
from engine.rundir.csvlog import number, read_csv
from engine.rundir.files import FOURIER, KEYFREQ, RING, TOKENS
from engine.rundir.summary import read_summary
from engine.status import Status

T = TypeVar("T")


def read_tokens(run_dir: str | Path) -> list[TokensLogged]:
    """tokens.csv as one TokensLogged per evaluation step: updates, and grad norms and val_acc where written."""
    return _decoded(Path(run_dir), TOKENS, _tokens)


def read_fourier(run_dir: str | Path) -> list[FourierLogged]:
    """fourier.csv as one FourierLogged per step it was measured at (an empty norm is NaN)."""
    return _decoded(Path(run_dir), FOURIER, _fourier)


def read_circuit(run_dir: str | Path) -> list[CircuitLogged]:
    """keyfreq.csv and ring.csv (the progress probe) back into CircuitLogged events, one per measurement."""
    return _decoded(Path(run_dir), f"{KEYFREQ} or {RING}", _circuit)


def _decoded(run_dir: Path, names: str, decode: Callable[[Path], list[T]]) -> list[T]:
    """`decode(run_dir)`; a row whose cells are not what the engine writes is one ConfigError naming the file."""
    try:
        return decode(run_dir)
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"{run_dir}: {names}: a row does not hold the fields the engine writes") from None


def _by_step(path: Path) -> dict[int, list[dict[str, str]]]:
    """A probe log's rows grouped by their step, in file order."""
    out: dict[int, list[dict[str, str]]] = {}
    for r in read_csv(path):
        out.setdefault(int(r["step"]), []).append(r)
    return out


def _tokens(run_dir: Path) -> list[TokensLogged]:
    out = []
    for step, toks in sorted(_by_step(run_dir / TOKENS).items()):
        toks.sort(key=lambda r: int(r["token"]))
        grads = [r.get("grad_norm", "") for r in toks]
        grad = tuple(float(g) for g in grads) if all(grads) else None
        accs = [r.get("val_acc") for r in toks]
        acc = tuple(number(a) for a in accs) if any(accs) else None
        out.append(TokensLogged(step, tuple(int(float(r["updates"])) for r in toks), grad, acc))
    return out


def _fourier(run_dir: Path) -> list[FourierLogged]:
    spectra = _by_step(run_dir / FOURIER)
    return [FourierLogged(step, tuple(number(r["norm"]) for r in spectra[step])) for step in sorted(spectra)]


def _circuit(run_dir: Path) -> list[CircuitLogged]:
    freqs, rings = _by_step(run_dir / KEYFREQ), _by_step(run_dir / RING)
    out = []
    for step in sorted(freqs):
        fr = sorted(freqs[step], key=lambda r: int(r["freq"]))
        toks = rings.get(step, [])
        out.append(
            CircuitLogged(
                step,
                tuple(number(r["share"]) for r in fr),
                tuple(int(r["freq"]) for r in fr if r["key"] == "1"),
                0,
                tuple(int(r["token"]) for r in toks),
                tuple(number(r["x"]) for r in toks),
                tuple(number(r["y"]) for r in toks),
                tuple(number(r["distance"]) for r in toks),
                tuple(number(r["membership"]) for r in toks),
                tuple(r["rare"] == "1" for r in toks),
            )
        )
    return out


def read_learned_steps(run_dir: str | Path, p: int) -> tuple[list[int | None], float]:
    """Each of the `p` operand tokens' learned step (engine/rundir/columns.py learned_step) and the threshold: from
    summary.json where the run wrote them, else recomputed from tokens.csv (runs from before they were
    tracked, or a run still going). ConfigError when neither has them."""
    d = Path(run_dir)
    s = read_summary(d)
    if s.learned_step is not None and s.status != Status.RUNNING:
        return list(s.learned_step), s.learned_acc if s.learned_acc is not None else LEARNED_ACC
    rows = read_csv(d / TOKENS)
    if not rows or not p:
        raise ConfigError(f"{d}: no per-token val_acc (tokens.csv) to find learned steps in")
    series: dict[int, tuple[list[int], list[float]]] = {t: ([], []) for t in range(p)}
    for r in rows:
        try:
            t, step, acc = int(r["token"]), int(float(r["step"])), number(r.get("val_acc"))
        except (KeyError, ValueError):
            raise ConfigError(f"{d / TOKENS}: a row is not step,token,...,val_acc numbers") from None
        if 0 <= t < p:
            series[t][0].append(step)
            series[t][1].append(acc)
    return [learned_step(*series[t]) for t in range(p)], LEARNED_ACC


def join_steps(ring_rows: list[dict[str, str]]) -> dict[int, int | None]:
    """Each token's join step from ring.csv rows: the first measurement from which its key-frequency share
    stays >= JOIN_SHARE to the last one (engine/rundir/columns.py learned_step); None for a token not in the circuit
    at the end."""
    by_token: dict[int, list[tuple[int, float]]] = {}
    for r in ring_rows:
        by_token.setdefault(int(r["token"]), []).append((int(r["step"]), number(r.get("membership"))))
    ordered = {tok: sorted(series) for tok, series in by_token.items()}
    return {tok: learned_step([s for s, _ in ser], [v for _, v in ser], JOIN_SHARE) for tok, ser in ordered.items()}
