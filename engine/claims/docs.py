"""The docs' generated regions: every table and number of the status page and the claim pages, from docs/data/.

A region is marked in the Markdown, `<!-- table: NAME -->` ... `<!-- end -->` for a block and
`<!-- n: CLAIM/VALUE -->` ... `<!-- end -->` for a number in a sentence. `python -m engine.claims.docs`
(this module's command line, which the pages name) rewrites every region of README.md, docs/REPRODUCTION.md,
docs/claims/*.md and docs/data/README.md from the kept groups; `--check` rewrites nothing and lists the
regions that differ (tests/docs/test_status_page.py runs it), exit status 1 when any does.

Names: `status/paper` and `status/beyond` (the two status tables), `readme/results`, `data/provenance`,
and per claim `KEY/command`, `KEY/verdict`, `KEY/report`, `KEY/provenance`; `n: KEY/NAME` is one of the
claim's named values (its study's reader, engine/claims/studies/KEY.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.claims.registry import claims, get
from engine.claims.status import check, data_dir, kept, planned, reading, strongest
from engine.claims.verdicts import CONTROL, GUARD, PENDING
from engine.config import ConfigError
from engine.rundir import read_provenance
from engine.sweep.report.tables import build_tables, render, render_table

ROOT = Path(__file__).resolve().parents[2]
REGION = re.compile(r"<!-- (?P<kind>table|n): (?P<name>[\w./-]+) -->(?P<body>.*?)<!-- end -->", re.S)
PAGES = ("README.md", "docs/REPRODUCTION.md", "docs/RECIPES.md", "docs/data/README.md")  # and docs/claims/*.md
NOT_KEPT = "no kept data from the current engine"
ROLES = {  # a part that is not the claim's own, as the verdict names it (engine/claims/verdicts.py)
    GUARD: "guard: it can only lower the verdict",
    CONTROL: "control: it cannot fail by design, not counted",
}


def pages(root: Path = ROOT) -> list[Path]:
    """Every Markdown file with generated regions."""
    return [root / p for p in PAGES] + sorted((root / "docs" / "claims").glob("*.md"))


def _link(claim: Claim) -> str:
    return f"[{claim.key}](claims/{claim.key}.md)"


def _verdict_cell(root: Path, claim: Claim, r: Reading | None) -> str:
    if r is None or claim.verdict == PENDING:
        return f"{PENDING} (an earlier engine's runs, not kept: {claim.earlier})" if claim.earlier else PENDING
    note = claim.note.format(**r.values) if claim.note else ""
    return f"{claim.verdict}: {note}" if note else claim.verdict


def status_table(root: Path, paper: bool) -> str:
    """The paper's 8 claims (paper=True) or the other predictions and our extensions."""
    head = ["claim (paper's figure)" if paper else "question", "verdict", "headline number (spread)", "k of n seeds"]
    head += ["seeds × tasks", "where"]
    if paper:
        head = ["#", *head]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in claims():
        if bool(c.number) != paper:
            continue
        r = reading(root, c)
        cells = [c.title, _verdict_cell(root, c, r)]
        if r is None or c.verdict == PENDING:
            cells += ["-", "-", f"{planned(c)} planned"]
        else:
            cells += [r.headline, r.k_of_n, r.seeds_tasks]
        cells.append(_link(c))
        lines.append("| " + " | ".join(([c.number] if paper else []) + [x.replace("|", "\\|") for x in cells]) + " |")
    return "\n".join(lines)


def readme_results(root: Path) -> str:
    """README's table: the paper's claims and the status page's verdict word for each."""
    lines = ["| # | claim (paper's figure) | verdict |", "|---|---|---|"]
    for c in claims():
        if c.number:
            word = PENDING if reading(root, c) is None else c.verdict
            lines.append(f"| {c.number} | {c.title} | {word} |")
    return "\n".join(lines)


def provenance_table(root: Path) -> str:
    lines = [
        "| data | preset | sweep started | kept | commit | machine | members ended | command |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in sorted(p for p in (root / "docs" / "data").iterdir() if p.is_dir()):
        p = read_provenance(d)
        cmd = f"`{p.command}`" if p.command else "-"
        lines.append(
            f"| [{d.name}]({d.name}/) | {p.preset} | {p.created} | {p.kept} | {p.commit} | {p.machine} "
            f"| {p.ended} of {p.members} | {cmd} |"
        )
    return "\n".join(lines)


def command(claim: Claim) -> str:
    """The commands that make the claim's group, its tables and its figure."""
    report = f"grok report GROUP_DIR --tail {claim.tail}" + (f" --metrics {claim.metrics}" if claim.metrics else "")
    out = [
        "```sh",
        f"grok sweep --preset {claim.preset}{claim.sweep_args} --workers 1 --set train.threads=1   # makes GROUP_DIR",
        report,
        f"grok report GROUP_DIR --keep docs/data/{claim.preset}   # the kept data these tables are read from",
    ]
    if claim.figure:
        out.append(f"grok figure --claim {claim.figure} docs/data/{claim.preset} -o docs/figures/{claim.figure}.png")
    return "\n".join([*out, "python -m engine.claims.docs   # rewrites this page's tables", "```"])


def verdict_block(root: Path, claim: Claim) -> str:
    r = reading(root, claim)
    if r is None:
        earlier = f" An earlier engine's runs gave *{claim.earlier}*; they are not kept, so" if claim.earlier else ""
        return f"**Verdict: {PENDING}** ({NOT_KEPT}).{earlier} no number of theirs is repeated here."
    top = strongest(root, claim)
    lines = [f"**Verdict: {claim.verdict}** (the strongest word the kept data allow: {top}).", ""]
    for p in r.parts:
        judged = f" Judged: {p.judged}." if p.judged else ""
        role = f" ({ROLES[p.role]})" if p.role else ""
        lines.append(f"- *{p.text}*{role}: {p.shown}, {p.evidence}.{judged}")
    return "\n".join(lines)


def report_block(root: Path, claim: Claim) -> str:
    g = kept(root, claim)
    if g is None:
        return f"No results of the current engine are kept yet; `docs/data/{claim.preset}/` comes with the rerun."
    metrics = claim.metrics.split(",") if claim.metrics else None
    if claim.tables:  # a study of many arms: the tables that read it, without the per-arm comparison lines
        shown = [t for t in build_tables(g, claim.tail, metrics)[0] if t.title.startswith(claim.tables)]
        return "\n".join(render_table(t, "markdown") for t in shown).strip()
    text = render(g, "markdown", claim.tail, metrics)
    return text.split("\n", 1)[1].strip()  # the first line names the kept directory: the provenance says it


def provenance_line(root: Path, claim: Claim) -> str:
    d = data_dir(root, claim)
    if kept(root, claim) is None:
        return "No results of the current engine are kept yet."
    p = read_provenance(d)
    return (
        f"Kept data: [docs/data/{claim.preset}](../data/{claim.preset}/), from group `{p.group}` "
        f"({p.ended} of {p.members} members ended; commit {p.commit}; {p.machine}; `{p.command}`)."
    )


def region(root: Path, kind: str, name: str) -> str:
    """The text a region holds (without its surrounding newlines)."""
    if kind == "n":
        key, _, value = name.partition("/")
        r = reading(root, get(key))
        if r is None:
            return PENDING
        if value not in r.values:
            raise ConfigError(f"<!-- n: {name} -->: {key} has no value {value!r}; it has {', '.join(r.values)}")
        return r.values[value]
    fixed = {
        "status/paper": lambda: status_table(root, True),
        "status/beyond": lambda: status_table(root, False),
        "readme/results": lambda: readme_results(root),
        "data/provenance": lambda: provenance_table(root),
    }
    if name in fixed:
        return fixed[name]()
    key, _, what = name.partition("/")
    claim = get(key)
    blocks = {
        "command": lambda: command(claim),
        "verdict": lambda: verdict_block(root, claim),
        "report": lambda: report_block(root, claim),
        "provenance": lambda: provenance_line(root, claim),
    }
    if what not in blocks:
        raise ConfigError(f"<!-- table: {name} -->: no such table; a claim's are {', '.join(blocks)}")
    return blocks[what]()


def rewrite(text: str, root: Path = ROOT) -> str:
    """`text` with every region regenerated."""

    def sub(m: re.Match[str]) -> str:
        body = region(root, m["kind"], m["name"])
        if m["kind"] == "table":
            body = f"\n{body}\n"
        return f"<!-- {m['kind']}: {m['name']} -->{body}<!-- end -->"

    return REGION.sub(sub, text)


def differences(root: Path = ROOT) -> list[str]:
    """ "FILE: REGION" for every region whose text differs from what the data give, and every verdict that is
    stronger than its data allow."""
    out = [why for c in claims() if (why := check(root, c))]
    for page in pages(root):
        text = page.read_text()
        new = {(m["kind"], m["name"]): m["body"] for m in REGION.finditer(rewrite(text, root))}
        for m in REGION.finditer(text):
            if new.get((m["kind"], m["name"])) != m["body"]:
                out.append(f"{page.relative_to(root)}: {m['kind']}: {m['name']}")
    return out


def write_all(root: Path = ROOT) -> list[Path]:
    """Rewrite every page's regions; the pages that changed."""
    changed = []
    for page in pages(root):
        text = page.read_text()
        new = rewrite(text, root)
        if new != text:
            page.write_text(new)
            changed.append(page)
    return changed


def main(argv: list[str]) -> int:
    """`python -m engine.claims.docs [--check] [--root DIR]`: 0 done (or no difference), 1 differences,
    2 bad data or a bad region (one line naming it)."""
    root = Path(argv[argv.index("--root") + 1]) if "--root" in argv else ROOT
    try:
        return _main(root, "--check" in argv)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _main(root: Path, check_only: bool) -> int:
    argv = ["--check"] if check_only else []
    if "--check" in argv:
        diff = differences(root)
        for d in diff:
            print(d)
        return 1 if diff else 0
    for p in write_all(root):
        print(f"rewrote {p.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
