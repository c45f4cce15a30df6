"""Sweeps: a preset's [sweep] table expanded into members (arms × grid × seeds), kept in a group directory.

`parse_sweep` checks the table's shape and `expand` checks every member's config before anything
runs. The group directory holds `group.json` (the base config, the grid and the members, each with
its run directory's name), `results.csv` (one row per member that ended) and one normal run
directory per member. Running the members is `engine.sweep.pool.Sweep`'s job; this module is
torch-free so `grok report` stays fast.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig, apply_overrides, from_dict
from engine.rundir.destination import GROUP, check_root
from engine.rundir.dirs import (
    GROUP_FILE,
    read_group_doc,
    read_results,
    unique_dir,
    write_json_atomic,
    write_results,
)
from engine.rundir.files import RESULTS
from engine.rundir.pack import PACK, unpacked
from engine.sweep.results import ENDED, SUMMARY_FIELDS, ResultsRow

SWEEP_KEYS = ("seeds", "compare", "tune", "grid", "arms", "fork_at", "forks")
FORK_PHASES = ("memorized", "generalized")  # fork_at: a phase the run logs (its kept checkpoint), or a step
MAX_DIR_NAME = 120  # characters of a member directory's name; the id prefix keeps a cut name unique


@dataclass(frozen=True)
class SweepSpec:
    """The [sweep] table, checked: seeds, the baseline arm, keys to tune, the grid and the arms."""

    seeds: tuple[int, ...] = (0,)
    compare: str = ""
    tune: tuple[str, ...] = ()
    grid: dict[str, list[Any]] = field(default_factory=dict)
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Sweeps of forks (docs/FORK.md): each fork arm forks every member of its `from` arm (every member
    # when `from` is "") at fork_at, with its settings and `intervene` list, once that member has ended.
    # `from = "*"` forks every arm's members as an arm of its own per parent arm: PARENT_NAME.
    fork_at: str = ""  # memorized | generalized | a step
    forks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The table as group.json stores it."""
        out = {
            "seeds": list(self.seeds),
            "compare": self.compare,
            "tune": list(self.tune),
            "grid": self.grid,
            "arms": self.arms,
        }
        return {**out, "fork_at": self.fork_at, "forks": self.forks} if self.forks else out

    def fork_arms(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(arm, from arm, fork table) of every fork arm, `from = "*"` expanded to one arm per parent arm."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        for name, f in self.forks.items():
            if f.get("from") == "*":
                out += [(f"{a}_{name}", a, f) for a in self.arms]
            else:
                out.append((name, str(f.get("from", "")), f))
        return out

    def fork_table(self, arm: str) -> dict[str, Any]:
        """The [sweep.forks.NAME] table behind fork arm `arm` (KeyError for an arm that is not a fork's)."""
        return {name: f for name, _, f in self.fork_arms()}[arm]

    @property
    def swept(self) -> list[str]:
        """Every key that varies between members (arm keys first, then grid keys), seed aside."""
        keys: list[str] = []
        for over in [*self.arms.values(), *(fork_settings(f) for f in self.forks.values())]:
            keys += [k for k in over if k not in keys]
        return keys + [k for k in self.grid if k not in keys]


def fork_settings(fork: dict[str, Any]) -> dict[str, Any]:
    """A fork arm's config keys (its `from` and `intervene` aside)."""
    return {k: v for k, v in fork.items() if k not in ("from", "intervene")}


@dataclass(frozen=True)
class Member:
    """One run of the sweep: an arm, one grid point and a seed."""

    id: str
    arm: str
    values: dict[str, Any]  # grid key -> value
    seed: int
    overrides: dict[str, Any]  # everything applied to the base config (arm, grid, train.seed)
    fork_of: str = ""  # a fork member: the id of the member it forks (docs/FORK.md)
    intervene: tuple[str, ...] = ()  # and its interventions at the fork

    def label(self) -> str:
        """`adamlr op=mul s0`: the arm, the grid cell and the seed, for progress lines."""
        parts = [self.arm] if self.arm else []
        parts += [f"{k.split('.')[-1]}={v}" for k, v in self.values.items()]
        return " ".join([*parts, f"s{self.seed}"])

    def dir_name(self) -> str:
        """`m003-adamlr-op=mul-s0`: the member's run directory inside its group.

        The id makes it unique and sorts members in order; the arm, grid cell and seed make it
        readable. Characters a file system or a shell could trip on become `_`. Group.create
        stores the name in group.json, so it stays the same for the group's whole life.
        """
        parts = [self.id] + ([_safe(self.arm)] if self.arm else [])
        parts += [f"{_safe(k.split('.')[-1])}={_safe(_text(v))}" for k, v in self.values.items()]
        name = "-".join([*parts, f"s{self.seed}"])
        return name if len(name) <= MAX_DIR_NAME else name[:MAX_DIR_NAME]


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"  # as TOML writes it
    return repr(v) if isinstance(v, float) else str(v)


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]", "_", s) or "_"


def _seeds(value: Any, where: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ConfigError(f"{where}: sweep.seeds must be >= 1 (got {value})")
        return tuple(range(value))
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        if len(set(value)) != len(value):
            raise ConfigError(f"{where}: sweep.seeds has repeated seeds {value}")
        return tuple(value)
    raise ConfigError(f"{where}: sweep.seeds must be an int N or a list of ints (got {value!r})")


def parse_sweep(table: dict[str, Any], where: str = "sweep") -> SweepSpec:
    """Check a [sweep] table's shape; values are checked later against the config by `expand`."""
    for k in table:
        if k not in SWEEP_KEYS:
            raise ConfigError(f"{where}: unknown [sweep] key {k!r} (expected {', '.join(SWEEP_KEYS)})")
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise ConfigError(f"{where}: [sweep.grid] must be a table")
    for k, v in grid.items():
        if not isinstance(v, list) or not v:
            raise ConfigError(f"{where}: sweep.grid {k!r} must be a non-empty list (got {v!r})")
    arms = table.get("arms", {})
    if not isinstance(arms, dict) or not all(isinstance(a, dict) for a in arms.values()):
        raise ConfigError(f"{where}: [sweep.arms] must hold one table per arm")
    compare = table.get("compare", "")
    if compare and compare not in arms:
        raise ConfigError(f"{where}: sweep.compare {compare!r} is not an arm (arms: {', '.join(arms) or 'none'})")
    tune = table.get("tune", [])
    if isinstance(tune, str):
        tune = [tune]
    if not isinstance(tune, list) or any(t not in grid for t in tune):
        raise ConfigError(f"{where}: sweep.tune must list grid keys (got {tune!r})")
    overlap = [k for a in arms.values() for k in a if k in grid]
    if overlap:
        raise ConfigError(f"{where}: {overlap[0]!r} is set both by an arm and by the grid")
    seeds = _seeds(table.get("seeds", 1), where)
    fork_at, forks = _forks(table, arms, where)
    arms_ = {k: dict(v) for k, v in arms.items()}
    return SweepSpec(seeds, str(compare), tuple(tune), dict(grid), arms_, fork_at, forks)


def _forks(table: dict[str, Any], arms: dict[str, Any], where: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """[sweep] fork_at and [sweep.forks.NAME] tables, checked: a phase or step, and each fork's `from` arm."""
    forks = table.get("forks", {})
    at = table.get("fork_at", "")
    if not isinstance(forks, dict) or not all(isinstance(f, dict) for f in forks.values()):
        raise ConfigError(f"{where}: [sweep.forks] must hold one table per fork arm")
    if bool(forks) != (at != ""):
        raise ConfigError(f"{where}: sweep.fork_at and [sweep.forks.NAME] go together")
    if isinstance(at, int) and not isinstance(at, bool):
        at = str(at)
    if forks and not (at in FORK_PHASES or (isinstance(at, str) and at.isdigit())):
        raise ConfigError(f"{where}: sweep.fork_at must be memorized, generalized or a step (got {at!r})")
    for name, f in forks.items():
        if name in arms:
            raise ConfigError(f"{where}: fork arm {name!r} has the name of an arm")
        src = f.get("from", "")
        if src not in arms and not (src == "" and not arms) and not (src == "*" and arms):
            raise ConfigError(f'{where}: sweep.forks.{name}.from must name an arm or be "*" (got {src!r})')
        if src == "*" and any(f"{a}_{name}" in arms or f"{a}_{name}" in forks for a in arms):
            raise ConfigError(f'{where}: fork arm {name!r} from "*" makes a name an arm already has')
        iv = f.get("intervene", [])
        if not isinstance(iv, list) or not all(isinstance(x, str) for x in iv):
            raise ConfigError(f"{where}: sweep.forks.{name}.intervene must be a list of strings")
    return str(at), {k: dict(v) for k, v in forks.items()}


def expand(base: RunConfig, spec: SweepSpec, where: str = "sweep") -> list[tuple[Member, RunConfig]]:
    """Members = arms × grid × seeds, each checked with apply_overrides before anything runs."""
    from engine.train.logged import check_columns  # torch only for a column a probe logs

    arms = spec.arms or {"": {}}
    keys = list(spec.grid)
    out: list[tuple[Member, RunConfig]] = []
    checked: set[str] = set()
    for arm, arm_over in arms.items():
        for point in itertools.product(*(spec.grid[k] for k in keys)):
            values = dict(zip(keys, point, strict=True))
            for seed in spec.seeds:
                over = {**arm_over, **values, "train.seed": seed}
                label = f"arm {arm!r}" if arm else "grid"
                cfg = apply_overrides(base, over, f"{where} ({label})")
                if (key := repr(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=0)))) not in checked:
                    check_columns(cfg)  # every member's stop_metric a column it logs (seeds log the same ones)
                    checked.add(key)
                m = Member(f"m{len(out):03d}", arm, values, seed, over)
                out.append((m, cfg))
    return out + _fork_members(base, spec, [m for m, _ in out], where)


def _fork_members(
    base: RunConfig, spec: SweepSpec, parents: list[Member], where: str
) -> list[tuple[Member, RunConfig]]:
    """One member per fork arm and member of its `from` arm, each checked as a fork is (engine/train/fork.py)."""
    if not spec.forks:
        return []
    from engine.config.param_sets import parse_intervention  # torch-free: the parse without the interventions
    from engine.train.fork import refuse_unforkable

    out: list[tuple[Member, RunConfig]] = []
    n = len(parents)
    for name, f in spec.forks.items():
        settings = fork_settings(f)
        refuse_unforkable(list(settings))
        ivs = tuple(f.get("intervene", []))
        for spec_ in ivs:
            parse_intervention(spec_)
        src = f.get("from", "")
        for p in parents:
            if src not in ("", "*", p.arm):
                continue
            over = {**p.overrides, **settings}
            cfg = apply_overrides(base, over, f"{where} (fork {name!r})")
            arm = f"{p.arm}_{name}" if src == "*" else name
            out.append((Member(f"m{n + len(out):03d}", arm, p.values, p.seed, over, p.id, ivs), cfg))
    return out


def check_sets(spec: SweepSpec, sets: dict[str, Any]) -> None:
    """--set may not change a key the sweep varies (that would collapse the grid)."""
    for k in sets:
        if k in spec.swept or k == "train.seed":
            raise ConfigError(f"--set {k}: this key is swept by the preset; use --seeds or edit the grid")


def new_group_dir(root: Path, preset: str) -> Path:
    """<out>/<YYYYmmdd-HHMMSS>-<preset>-sweep/, with a -N suffix if taken; never inside a run or a group
    (engine/rundir/destination.py; a paper directory holds its groups)."""
    check_root(root, GROUP)
    try:
        return unique_dir(root, f"{time.strftime('%Y%m%d-%H%M%S')}-{preset or 'custom'}-sweep")
    except OSError as e:
        raise ConfigError(f"cannot create sweep directory under {root}: {e.strerror or e}") from None


class Group:
    """A sweep's group directory: group.json, results.csv and the members' run directories."""

    def __init__(self, path: Path, doc: dict[str, Any]) -> None:
        self.dir = path
        self.doc = doc
        self.base = from_dict(doc["base"], str(path / GROUP_FILE))
        self.spec = SweepSpec(**{**doc["sweep"], "seeds": tuple(doc["sweep"]["seeds"])})
        fields = ("id", "arm", "values", "seed", "overrides")
        self.members = [
            Member(
                **{k: m[k] for k in fields}, fork_of=str(m.get("fork_of", "")), intervene=tuple(m.get("intervene", ()))
            )
            for m in doc["members"]
        ]
        # A group made before member directories had planned names gets them now.
        self._dirs = {
            m.id: str(d.get("dir") or m.dir_name()) for m, d in zip(self.members, doc["members"], strict=True)
        }
        # a kept group's members are packed (engine/rundir/pack.py): read from where they are unpacked
        self._members_root = unpacked(path) if (path / PACK).is_file() else path
        self._cells: dict[str, dict[str, Any]] | None = None  # results.csv's rows as written (text)
        self._results: dict[str, ResultsRow] | None = None

    @classmethod
    def create(cls, out: str | Path, preset: str, base: RunConfig, spec: SweepSpec, members: list[Member]) -> Group:
        """Make the group directory and write group.json; no member has run yet."""
        path = new_group_dir(Path(out), preset)
        doc = {
            "preset": preset,
            "description": base.description,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": sys.argv,
            "base": base.to_dict(),
            "sweep": spec.to_dict(),
            "swept": spec.swept,
            # `dir`: the run directory the member trains in; `run_dir`: set once its row is recorded
            "members": [{**dataclasses.asdict(m), "dir": m.dir_name(), "run_dir": ""} for m in members],
        }
        write_json_atomic(path / GROUP_FILE, doc)
        return cls(path, doc)

    @classmethod
    def open(cls, path: str | Path) -> Group:
        """Read a group directory back; ConfigError naming the file if it is not one."""
        p = Path(path)
        doc = read_group_doc(p)  # every field a reader uses checked, named with the file
        try:
            return cls(p, doc)
        except ConfigError:  # a kept group's members that do not unpack: named by engine/rundir/pack.py
            raise
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{p / GROUP_FILE}: unreadable group file: {e}") from None

    @property
    def preset(self) -> str:
        """The preset the group was made from ('' for a --config file without one)."""
        return str(self.doc.get("preset", ""))

    @property
    def columns(self) -> list[str]:
        """results.csv's fixed columns; probe columns (first_<col>, final_<col>) follow them."""
        return ["member", "arm", *self.spec.swept, "seed", *SUMMARY_FIELDS, "error", "run_dir"]

    def config(self, m: Member) -> RunConfig:
        """The member's config: the group's base with the member's overrides, checked again."""
        return apply_overrides(self.base, m.overrides, f"{self.dir / GROUP_FILE} ({m.id})")

    def member_dir(self, m: Member) -> Path:
        """The member's run directory: the one its recorded row names, else its planned one."""
        recorded = self._rows().get(m.id, {}).get("run_dir")
        return self._members_root / (recorded or self._dirs[m.id])

    def _rows(self) -> dict[str, dict[str, Any]]:
        """results.csv's rows as written: {member id: {column: text}} ('' = none)."""
        if self._cells is None:
            ids = {m.id for m in self.members}  # a view on some seeds (`with_seeds`) reads only their rows
            self._cells = {r["member"]: r for r in read_results(self.dir) if r.get("member") in ids}
        return self._cells

    def results(self) -> dict[str, ResultsRow]:
        """results.csv as {member id: its typed row} (engine/sweep/results.py ResultsRow, None for an empty cell);
        ConfigError naming the file for a cell the sweep does not write."""
        if self._results is None:
            where = str(self.dir / RESULTS)
            self._results = {k: ResultsRow.of(r, self.spec.swept, where) for k, r in self._rows().items()}
        return self._results

    def with_seeds(self, seeds: set[int]) -> Group:
        """A read-only view of the group on these seeds: their members and results rows only (`grok report
        --seeds`: the seeds a sweep still running has finished, each a paired comparison of every cell)."""
        view = copy.copy(self)
        view.members = [m for m in self.members if m.seed in seeds]
        view._cells = view._results = None
        return view

    def pending(self) -> list[Member]:
        """Members missing from results.csv or whose status is not final (interrupted, failed), seed by seed:
        every cell's first seed before any cell's second, so a sweep stopped early leaves whole seeds, each
        a paired comparison of every cell, rather than whole arms."""
        res = self._rows()
        rank = {s: i for i, s in enumerate(self.spec.seeds)}
        todo = [m for m in self.members if res.get(m.id, {}).get("status") not in ENDED]
        return sorted(todo, key=lambda m: rank.get(m.seed, len(rank)))

    def ready(self, m: Member) -> bool:
        """Whether a member can start: any member but a fork, and a fork once the member it forks has ended."""
        return not m.fork_of or self._rows().get(m.fork_of, {}).get("status") in ENDED

    def member(self, member_id: str) -> Member:
        return next(m for m in self.members if m.id == member_id)

    def swept_values(self, m: Member) -> dict[str, Any]:
        """The member's value of every swept key (its override, else the base config's)."""
        return {k: m.overrides.get(k, _base_value(self.base, k)) for k in self.spec.swept}

    def record(self, row: dict[str, Any]) -> None:
        """Add or replace one member's row; results.csv is rewritten atomically, in member order."""
        m = self.member(row["member"])
        full = {"member": m.id, "arm": m.arm, "seed": m.seed, **self.swept_values(m)}
        full.update({k: _cell(v) for k, v in row.items() if k != "member"})
        res = self._rows()
        res[m.id] = {k: _cell(v) for k, v in full.items()}
        self._results = None  # read again from the rows as written
        extra = sorted({k for r in res.values() for k in r} - set(self.columns))  # probe columns
        cols = self.columns + extra
        write_results(self.dir, cols, [{c: res[mm.id].get(c, "") for c in cols} for mm in self.members if mm.id in res])
        for d in self.doc["members"]:
            if d["id"] == m.id and row.get("run_dir"):
                d["run_dir"] = Path(str(row["run_dir"])).name
                write_json_atomic(self.dir / GROUP_FILE, self.doc)


def member_fields(group_dir: str | Path) -> dict[Path, dict[str, Any]]:
    """Each member's run directory -> `group`, `arm`, `member` and its value of every swept key.

    The swept keys are the grid's and the arms' (`Group.columns` order, as in results.csv), so
    arms and grid cells can be told apart without joining results.csv by hand. Members whose
    directory does not exist yet are left out.
    """
    g = Group.open(group_dir)
    out: dict[Path, dict[str, Any]] = {}
    for m in g.members:
        d = g.member_dir(m)
        if d.is_dir():
            out[d] = {"group": g.dir.name, "arm": m.arm, "member": m.id, **g.swept_values(m)}
    return out


def _base_value(cfg: RunConfig, key: str) -> Any:
    group, _, name = key.partition(".")
    return getattr(getattr(cfg, group), name)


def _cell(v: Any) -> Any:
    return "" if v is None or (isinstance(v, float) and v != v) else v
