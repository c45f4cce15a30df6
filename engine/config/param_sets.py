"""Token sets and parameter sets as written in a config or on the command line (no torch here).

A token set names operand tokens by their role in the split (engine/events.py TokenSets) or by id:
`targets` (data.starve_k's), `rare` (the set val_acc_rare is measured on), `absent` (no training pair),
or integers; items are comma separated and their union is the set: `targets`, `rare,3`, `5,17,40`.

A parameter set names what a freeze or a trainable set covers: `E` (the embedding), `E[tokens]` (those
rows of E only), `W` (the first matrices that read E), `rest` (every parameter but E), `all`, or a
parameter's own name (`mlp.0.weight`). Sets are comma separated; commas inside brackets belong to the
token set: `E[targets], W`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ConfigError

TOKEN_ROLES = ("targets", "rare", "absent")


@dataclass(frozen=True)
class TokenSpec:
    """A token set as written: the roles it names and the ids it lists."""

    roles: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()

    def __str__(self) -> str:
        return ",".join([*self.roles, *map(str, self.ids)])


@dataclass(frozen=True)
class ParamSet:
    """One parameter set: `name` is E, W, rest, all or a parameter name; `rows` the rows of E it keeps to."""

    name: str
    rows: TokenSpec | None = None

    def __str__(self) -> str:
        return f"{self.name}[{self.rows}]" if self.rows is not None else self.name


def parse_tokens(spec: str, where: str = "token set") -> TokenSpec:
    """`targets,rare,3` -> TokenSpec(("targets", "rare"), (3,)); ConfigError naming `where` otherwise."""
    roles: list[str] = []
    ids: list[int] = []
    for item in (s.strip() for s in spec.replace(" ", ",").split(",")):
        if not item:
            continue
        if item in TOKEN_ROLES or item == "target":
            roles.append("targets" if item == "target" else item)
        elif item.isdigit() and item.isascii():
            ids.append(int(item))
        else:
            raise ConfigError(f"{where}: {item!r} is not a token (targets, rare, absent or an id)")
    if not roles and not ids:
        raise ConfigError(f"{where}: names no token (targets, rare, absent or ids)")
    return TokenSpec(tuple(dict.fromkeys(roles)), tuple(dict.fromkeys(ids)))


def split_sets(spec: str) -> list[str]:
    """Split at the commas outside brackets: `E[1,2], W` -> ["E[1,2]", "W"]."""
    out, depth, cur = [], 0, ""
    for ch in spec:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [s for s in out if s]


def parse_param_sets(spec: str, where: str = "parameter set") -> list[ParamSet]:
    """`E[targets], W` -> [ParamSet("E", TokenSpec(("targets",))), ParamSet("W")]; [] for ""."""
    out = []
    for item in split_sets(spec):
        if item.count("[") != item.count("]"):
            raise ConfigError(f"{where}: unbalanced brackets in {item!r}")
        if "[" in item:
            name, _, rest = item.partition("[")
            if name.strip() != "E" or not rest.endswith("]"):
                raise ConfigError(f"{where}: rows are taken of E only: E[tokens] (got {item!r})")
            out.append(ParamSet("E", parse_tokens(rest[:-1], where)))
        elif item.replace(".", "").replace("_", "").isalnum():
            out.append(ParamSet(item))
        else:
            raise ConfigError(f"{where}: {item!r} is not a parameter set (E, E[tokens], W, rest, all or a name)")
    return out


def parse_decay_sets(spec: str, where: str = "optim.decay_sets") -> list[tuple[ParamSet, float]]:
    """`E[targets]=0,W=1e-3` -> [(ParamSet("E", targets), 0.0), (ParamSet("W"), 0.001)]; [] for ""."""
    out = []
    for item in split_sets(spec):
        name, eq, value = item.rpartition("=")
        if not eq or not name.strip():
            raise ConfigError(f"{where}: {item!r} is not SET=WD (e.g. E[targets]=0 or W=1e-3)")
        try:
            wd = float(value)
        except ValueError:
            raise ConfigError(f"{where}: {item!r}: the decay {value!r} is not a number") from None
        if not wd >= 0 or wd == float("inf"):
            raise ConfigError(f"{where}: {item!r}: the decay must be a finite number >= 0")
        sets = parse_param_sets(name, where)
        if len(sets) != 1:
            raise ConfigError(f"{where}: {item!r}: one parameter set per decay")
        out.append((sets[0], wd))
    return out


def specificity(ps: ParamSet) -> int:
    """How narrow a set is, for the rule that the most specific decay wins: all < rest < W, E, a name < E[rows]."""
    if ps.rows is not None:
        return 3
    return {"all": 0, "rest": 1}.get(ps.name, 2)


# --- interventions as written: `--intervene KIND:WHAT[=ARG]` (engine/train/interventions.py applies them) ---

ROW_KINDS = ("rescale", "reset", "zero", "copy", "turn")
TURNS = ("random", "other", "memorized")  # turn:TOKENS=WHERE, the direction a row is given
SET_KINDS = ("freeze", "unfreeze", "only")


@dataclass(frozen=True)
class Intervention:
    """One `--intervene KIND:WHAT[=ARG]` as parsed."""

    kind: str
    what: str
    arg: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.what}" + (f"={self.arg}" if self.arg else "")


def parse_intervention(spec: str) -> Intervention:
    """`rescale:targets=ring` -> Intervention("rescale", "targets", "ring"); ConfigError, one line, otherwise."""
    kind, colon, rest = spec.strip().partition(":")
    where = f"--intervene {spec!r}"
    if not colon or kind not in ROW_KINDS + SET_KINDS:
        raise ConfigError(f"{where}: expected KIND:WHAT with KIND one of {', '.join(ROW_KINDS + SET_KINDS)}")
    what, _, arg = rest.partition("=")
    what, arg = what.strip(), arg.strip()
    if kind in SET_KINDS:
        if arg:
            raise ConfigError(f"{where}: {kind} takes parameter sets, no =value")
        parse_param_sets(what, where)
        if not what:
            raise ConfigError(f"{where}: names no parameter set (E, E[tokens], W, rest, all or a name)")
    else:
        parse_tokens(what, where)
        if kind == "rescale" and not (arg in ("ring", "median_norm") or (arg.startswith("x") and _is_number(arg[1:]))):
            raise ConfigError(f"{where}: rescale takes =ring, =median_norm or =xK (a factor K, e.g. x2)")
        if kind == "copy" and not arg:
            raise ConfigError(f"{where}: copy takes =RUN_DIR (or RUN_DIR@STEP)")
        if kind == "turn" and arg not in TURNS:
            raise ConfigError(f"{where}: turn takes ={'|'.join(TURNS)} (the direction each row is given)")
        if kind in ("reset", "zero") and arg:
            raise ConfigError(f"{where}: {kind} takes no =value")
    return Intervention(kind, what, arg)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
