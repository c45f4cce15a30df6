"""The status page and the claim pages against the kept data: every generated region as the data give it, every
verdict no stronger than its data allow, and no measured number outside a generated region."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from engine.claims import docs
from engine.claims.registry import claims
from engine.claims.status import check, kept, reading
from engine.claims.verdicts import PENDING

ROOT = Path(__file__).resolve().parents[2]
STATUS = ROOT / "docs" / "REPRODUCTION.md"
RECIPES = ROOT / "docs" / "RECIPES.md"  # the answers across the recipe studies
CLAIM_PAGES = sorted((ROOT / "docs" / "claims").glob("*.md"))
# A measurement in prose: an accuracy-like value (0.934; not a setting such as "lr 0.001"), a ratio (0.61×), a
# step reached ("at step 6,400", "steps 5,200–6,200"; a budget such as "10,000 steps" is a setting; "held at step
# 1,500" is where a screenshot was taken, a setting), or a phase marker's step ("C at 4,200", "G = 5,200", "M 400").
MEASURED = re.compile(
    r"(?<!lr )(?<![\w.])\d\.\d{3}(?![\d])|\d\.\d+×|(?<!held at )\bsteps? \d{1,3},\d{3}"
    r"|\b[MCUG](?: at| =)? \d[\d,]*\b(?! (?:steps|of))"
)
README = ROOT / "README.md"
TUI = ROOT / "docs" / "TUI.md"


def test_every_generated_region_is_what_the_data_give() -> None:
    """`python -m engine.claims.docs --check`: nothing differs, no verdict is stronger than its data."""
    assert docs.differences(ROOT) == []


def test_every_claim_has_a_page_with_its_regions_and_a_row() -> None:
    keys = {p.stem for p in CLAIM_PAGES}
    assert keys == {c.key for c in claims()}
    status = STATUS.read_text()
    for c in claims():
        page = (ROOT / "docs" / "claims" / f"{c.key}.md").read_text()
        for what in ("command", "verdict", "report"):
            assert f"<!-- table: {c.key}/{what} -->" in page, (c.key, what)
        assert re.search(r"(?m)^## What the data do not show$", page), c.key
        assert f"claims/{c.key}.md" in docs.region(ROOT, "table", "status/paper" if c.number else "status/beyond")
    assert "<!-- table: status/paper -->" in status and "<!-- table: status/beyond -->" in status


def test_a_claim_with_kept_data_is_read_and_one_without_is_pending() -> None:
    for c in claims():
        if kept(ROOT, c) is None:
            assert c.verdict == PENDING, f"{c.key}: {c.verdict!r} with no kept data"
        else:
            assert reading(ROOT, c) is not None and check(ROOT, c) is None


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The docs, README and kept data in a scratch root, to edit by hand."""
    for rel in ("README.md", "docs/REPRODUCTION.md", "docs/RECIPES.md", "docs/claims", "docs/data"):
        src, dst = ROOT / rel, tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return tmp_path


def _digits_in_regions(text: str) -> list[int]:
    """Offsets of the digits inside generated regions' bodies."""
    return [m.start("body") + i for m in docs.REGION.finditer(text) for i, ch in enumerate(m["body"]) if ch.isdigit()]


def test_one_digit_edited_by_hand_fails(copy: Path) -> None:
    """Every page's edited digit is caught by the page's own regeneration (what `differences` compares against);
    `differences` itself is run once on one edited page, since it regenerates every page each time."""
    pages = [p for p in docs.pages(copy) if _digits_in_regions(p.read_text())]
    assert pages, "no generated region holds a digit"
    for page in pages:
        text = page.read_text()
        at = _digits_in_regions(text)[len(_digits_in_regions(text)) // 2]
        edited = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]
        assert docs.rewrite(text, copy) == text, page.name
        assert docs.rewrite(edited, copy) != edited, page.name
    page = pages[len(pages) // 2]
    text = page.read_text()
    at = _digits_in_regions(text)[0]
    page.write_text(text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :])
    assert any(d.startswith(str(page.relative_to(copy))) for d in docs.differences(copy)), page.name
    page.write_text(text)
    assert docs.differences(copy) == []


def test_the_generator_rewrites_a_stale_region(copy: Path) -> None:
    page = copy / "docs" / "REPRODUCTION.md"
    text = page.read_text()
    stale = re.sub(r"(<!-- table: status/paper -->).*?(<!-- end -->)", r"\1\nold table\n\2", text, flags=re.S)
    page.write_text(stale)
    assert "docs/REPRODUCTION.md: table: status/paper" in docs.differences(copy)
    assert docs.main(["--root", str(copy)]) == 0
    assert page.read_text() == text
    assert docs.main(["--root", str(copy), "--check"]) == 0


def test_a_verdict_stronger_than_the_data_fails() -> None:
    from engine.claims import status

    read = [c for c in claims() if reading(ROOT, c) is not None and status.strongest(ROOT, c) != "reproduced"]
    assert read, "no kept claim below 'reproduced' to overstate"
    overstated = replace(read[0], verdict="supported" if read[0].ours else "reproduced")
    assert "the data allow at most" in (check(ROOT, overstated) or "")


def test_no_measured_number_outside_a_generated_region() -> None:
    """A number in prose either comes from the generator (an `n:` region) or goes."""
    for page in [STATUS, RECIPES, *CLAIM_PAGES]:
        text = docs.REGION.sub("", page.read_text())
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`]*`|\{[^}]*\}", "", text)  # code, and a preset's sets of values such as {0.01, 0.005}
        for _i, line in enumerate(text.splitlines(), 1):
            assert not MEASURED.search(line), f"{page.name}: {line.strip()}"


def test_pages_stay_short() -> None:
    assert len(STATUS.read_text().splitlines()) <= 200
    for page in CLAIM_PAGES:
        assert len(page.read_text().splitlines()) <= 250, page.name


def test_kept_data_stay_small() -> None:
    size = sum(f.stat().st_size for f in (ROOT / "docs" / "data").rglob("*") if f.is_file())
    assert size < 5 * 2**20, f"docs/data/ holds {size / 2**20:.1f} MiB"


def test_a_claim_figure_draws_from_kept_data(tmp_path: Path) -> None:
    """`grok figure --claim NAME docs/data/PRESET` reads a kept directory as a group."""
    from tests.conftest import grok

    drawn = [c for c in claims() if c.figure and kept(ROOT, c) is not None]
    assert drawn, "no kept claim with a figure"
    c = drawn[0]
    out = tmp_path / "f.png"
    r = grok("figure", "--claim", c.figure, str(ROOT / "docs" / "data" / c.preset), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _verdict_lines(page: Path) -> list[str]:
    """The part lines of a page's verdict region."""
    return [
        line
        for m in docs.REGION.finditer(page.read_text())
        if m["kind"] == "table" and m["name"].endswith("/verdict")
        for line in m["body"].splitlines()
        if line.startswith("- *")
    ]


def test_a_judged_part_is_shown_unread() -> None:
    """A judged part counts as unread for the verdict, so the verdict shows it unread, never "fails" (its page
    gives the judgement and why)."""
    for page in CLAIM_PAGES:
        for line in _verdict_lines(page):
            if " Judged: " in line:
                assert re.search(r"\*(?: \([^)]*\))?: unread, ", line), f"{page.name}: {line}"


def _seeds(key: str) -> int | None:
    c = next((c for c in claims() if c.key == key), None)
    g = None if c is None else kept(ROOT, c)
    return None if g is None else len(g.spec.seeds)


T_INTERVAL_N = re.compile(r"t-interval(?:, n = (\d+)\)|[^\n]*?\(n=(\d+))")


def test_no_t_interval_over_pooled_cells() -> None:
    """A t-interval is over the seeds of one cell: one whose n exceeds the group's seeds pools cells (tasks, batch
    sizes, optimizers) and treats them as seeds. Pooled values are a range with n."""
    for page in CLAIM_PAGES:
        seeds = _seeds(page.stem)
        if seeds is None:
            continue
        for line in page.read_text().splitlines():
            for m in T_INTERVAL_N.finditer(line):
                n = int(m[1] or m[2])
                assert n <= seeds, f"{page.name}: a t-interval over {n} values from {seeds} seeds: {line.strip()}"


def test_a_control_is_not_counted_and_a_guard_lifts_nothing() -> None:
    # on the pages: a direction that cannot restore the targets is a control, a cure's cost is a guard
    direction = _verdict_lines(ROOT / "docs" / "claims" / "decouple_direction.md")
    for what in ("a random direction", "another token's direction"):
        assert any(what in line and "(control" in line for line in direction), what
    for page in CLAIM_PAGES:
        for line in _verdict_lines(page):
            if re.match(r"- \*[^*]* costs? the [^*]* less than", line):
                assert "(guard" in line, f"{page.name}: a no-harm part counted as support: {line}"
    # and the rule they follow
    from engine.claims.verdicts import CONTROL, FAILS, GUARD, HOLDS, Part, ceiling

    claim, control, guard = Part("x", FAILS, ""), Part("c", HOLDS, "", role=CONTROL), Part("g", HOLDS, "", role=GUARD)
    assert ceiling([claim, control]) == "not reproduced"
    assert ceiling([claim, guard]) == "not reproduced"
    assert ceiling([Part("x", HOLDS, ""), guard, control]) == "reproduced"
    assert ceiling([Part("x", HOLDS, ""), Part("g", FAILS, "", role=GUARD)]) == "partly"


def _captions(text: str) -> list[str]:
    """A page's screenshot captions: each image's alt text and the italic line under it."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("!["):
            out.append(line)
            after = next((x for x in lines[i + 1 :] if x.strip()), "")
            if after.startswith("*"):
                out.append(after)
    return out


def test_no_digits_of_a_run_that_is_not_kept_in_readme_or_tui_captions() -> None:
    """README and the TUI guide's screenshot captions give no measured number of a run that docs/data does not
    keep (a phase's step, an accuracy): such a number cannot be regenerated, so it goes."""
    readme = re.sub(r"```.*?```", "", README.read_text(), flags=re.S)
    readme = re.sub(r"`[^`]*`", "", docs.REGION.sub("", readme))
    for line in [*readme.splitlines(), *_captions(TUI.read_text())]:
        assert not MEASURED.search(line), line.strip()
    assert MEASURED.search("progress_mul: M at 400, C at 4,200") and MEASURED.search("(C = 4,200, U = 4,800")
    assert not MEASURED.search("held at step 1,500 of 10,000") and not MEASURED.search("after 10,000 steps")
