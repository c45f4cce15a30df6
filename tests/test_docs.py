"""The docs against themselves: status tables a reviewer reads in a minute, one source for every result.

docs/REPRODUCTION.md is the status of the paper's claims, generated from docs/data/ (tests/docs checks
the generation); README and the presets' comments may only repeat what the result pages say, or link
to them. Intervals from fewer than 8 seeds are
never called 95% confidence intervals (engine/records/stats.py: below 8 seeds a spread is a range).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REPRO = ROOT / "docs" / "REPRODUCTION.md"
PERF = ROOT / "docs" / "PERFORMANCE.md"
DATA = ROOT / "docs" / "data" / "README.md"
CLAIMS = sorted((ROOT / "docs" / "claims").glob("*.md"))
VERDICTS = (
    "reproduced",
    "partly",
    "not reproduced",
    "contradicted",
    "inconclusive",
    "supported",
    "not supported",
    "pending rerun",
)
# What a reader takes for a confidence interval: banned outright, because no run here has 8 seeds per cell
# with a t-interval printed (grok report labels its own "95% t-interval" and "95% stratified bootstrap").
CI_WORDS = re.compile(r"95\s*%\s*(CI\b|confidence|bootstrap|percentile|interval|band)", re.IGNORECASE)
RESULT_WORDS = re.compile(r"\b(reproduces|reproduced|contradict\w*|partly|inconclusive|not supported)\b", re.I)


def _section(text: str, title: str) -> str:
    """The text under the `## title` heading, up to the next heading of that level."""
    m = re.search(rf"(?m)^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S)
    assert m, f"no '## {title}' section"
    return m.group(1)


def _tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table in `text`: its rows (header first, the --- row left out) as lists of cells."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a hyphen."""
    return "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_").replace(" ", "-")


def test_the_status_tables_are_one_line_a_claim_and_short() -> None:
    """The generated status tables (engine/claims/docs.py): the 8 claims in order, a verdict word first
    in every row, no cell a paragraph."""
    status = _section(REPRO.read_text(), "Status")
    verdicts, claims, extensions = _tables(status)
    assert [r[0] for r in verdicts[1:]] == [
        "reproduced",
        "partly",
        "not reproduced",
        "contradicted",
        "inconclusive",
        "supported / not supported",
        "pending rerun",
    ]
    assert [r[0] for r in claims[1:]] == [str(i) for i in range(1, 9)], "the paper's 8 claims, one row each"
    assert claims[0][1:] == [
        "claim (paper's figure)",
        "verdict",
        "headline number (spread)",
        "k of n seeds",
        "seeds × tasks",
        "where",
    ]
    for table in (claims, extensions):
        for row in table[1:]:
            assert len(row) == len(table[0]), row
            for cell in row:
                words = len(re.sub(r"\]\([^)]*\)", "]", cell).split())
                assert words <= 40, f"{words} words: {cell}"
            verdict = row[table[0].index("verdict")]
            assert re.split(r"[:(]", verdict)[0].strip() in VERDICTS, verdict
    for row in claims[1:]:  # the claim itself in at most 12 words, with the paper's figure or section
        assert len(row[1].split()) <= 12 and re.search(r"\((Figs?\.|§)", row[1]), row[1]
    for ext in ("Token-starved", "Decoupling", "fixes", "Progress measures", "Forks"):
        assert any(ext.lower() in r[0].lower() for r in extensions[1:]), ext


def test_every_relative_link_of_the_result_pages_resolves() -> None:
    """Links from the status page, the claim pages, docs/data/README.md and README's results name a file there."""
    pages = [REPRO, DATA, *CLAIMS, README]
    links = 0
    for page in pages:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            links += 1
            assert (page.parent / target).exists(), f"{page.name}: {target} does not exist"
    assert links >= 40  # every status row links its page, every page the status page
    for anchor in re.findall(r"\]\(docs/REPRODUCTION\.md#([^)]+)\)", README.read_text()):
        assert anchor in {_slug(h) for h in re.findall(r"(?m)^#{1,4} (.*)$", REPRO.read_text())}, anchor


def test_no_interval_from_few_seeds_is_called_a_95_percent_ci() -> None:
    for doc in (README, REPRO, PERF, *CLAIMS, *ROOT.glob("presets/*.toml")):
        for i, line in enumerate(doc.read_text().splitlines(), 1):
            assert not CI_WORDS.search(line), f"{doc.name}:{i}: {line.strip()}"


def test_readme_states_no_result_the_status_page_does_not() -> None:
    """README's results are the status page's rows (claim and verdict word), generated, and a link to it."""
    readme = README.read_text()
    status = _section(REPRO.read_text(), "Status")
    _, claims, _ = _tables(status)
    by_number = {r[0]: r for r in claims[1:]}
    results = _section(readme, "Results")
    assert "docs/REPRODUCTION.md" in results and "<!-- table: readme/results -->" in results
    (table,) = _tables(results)
    assert table[0] == ["#", "claim (paper's figure)", "verdict"]
    assert [r[0] for r in table[1:]] == [str(i) for i in range(1, 9)]
    for number, claim, verdict in table[1:]:
        row = by_number[number]
        assert claim == row[1], f"README's claim {number} differs from the status page's: {claim!r}"
        assert re.split(r"[:(]", row[2])[0].strip() == verdict, f"claim {number}: {verdict!r} vs {row[2]!r}"
    prose = "\n".join(line for line in results.splitlines() if not line.startswith("|"))
    assert not re.search(r"\d", prose.replace("REPRODUCTION.md", "")), f"README's results prose has a number: {prose}"
    outside = readme.replace(results, "")
    for i, line in enumerate(outside.splitlines(), 1):
        assert not RESULT_WORDS.search(line), f"README.md:{i}: a result outside ## Results: {line.strip()}"


def _comment_blocks(text: str) -> list[list[str]]:
    """Runs of consecutive comment lines; a blank comment line or any other line ends one."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("# "):
            blocks[-1].append(line[2:])
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def test_preset_comments_quote_only_numbers_the_docs_have() -> None:
    """A preset comment that cites the result pages (docs/claims/, docs/REPRODUCTION.md) names a page that
    exists and quotes only numbers those generated pages hold (every 3-decimal value); one that cites
    neither states no verdict."""
    docs = "\n".join(p.read_text() for p in [REPRO, *CLAIMS])
    cited = 0
    for toml in sorted(ROOT.glob("presets/*.toml")):
        for block in _comment_blocks(toml.read_text()):
            text = "\n".join(block)
            pages = re.findall(r"docs/(claims/[\w-]+\.md|REPRODUCTION\.md)", text)
            if not pages:
                assert not RESULT_WORDS.search(text), f"{toml.name}: a verdict without its source: {text}"
                continue
            cited += 1
            for page in pages:
                assert (ROOT / "docs" / page).is_file(), f"{toml.name}: docs/{page} does not exist"
            for number in re.findall(r"(?<![\d.])\d\.\d{3}(?!\d)", text):
                assert number in docs, f"{toml.name}: {number} is not on the result pages"
    assert cited >= 3  # skewed_mul, skewed_add, starve, ... point at their claim pages


@pytest.mark.parametrize(("doc", "limit"), [(README, 250), (PERF, 300)])
def test_docs_for_the_user_stay_short(doc: Path, limit: int) -> None:
    assert len(doc.read_text().splitlines()) <= limit


# `bench/NAME.ext` as a path, not `REF:bench/NAME.ext` (a `git show` of history) nor part of a longer path.
BENCH_PATH = re.compile(r"(?<![\w/:.-])bench/[\w.-]+\.(?:py|sh)\b")


def _bench_citations() -> list[tuple[str, str]]:
    """(where, path) for every bench/ script a doc (prose, inline code, fenced blocks) or a preset comment names."""
    texts = [(p, p.read_text()) for p in [README, *sorted((ROOT / "docs").rglob("*.md"))]]
    for toml in sorted(ROOT.glob("presets/*.toml")):
        comments = [line for line in toml.read_text().splitlines() if line.lstrip().startswith("#")]
        texts.append((toml, "\n".join(comments)))
    script = ROOT / "bench" / "command_instruments.sh"
    texts.append((script, "\n".join(line for line in script.read_text().splitlines() if line.startswith("#"))))
    return [(p.relative_to(ROOT).as_posix(), m.group()) for p, text in texts for m in BENCH_PATH.finditer(text)]


def test_every_bench_script_the_docs_name_exists() -> None:
    """A user never meets a bench/ command that cannot run; a removed script is cited as `git show REF:bench/...`."""
    cited = _bench_citations()
    missing = sorted({f"{where}: {path}" for where, path in cited if not (ROOT / path).is_file()})
    assert not missing, "bench/ scripts named but not in the tree:\n" + "\n".join(missing)
    assert any(path == "bench/ab.py" for _, path in cited)  # the scan sees the docs' commands at all


def test_the_bench_scan_flags_a_removed_script_and_spares_history() -> None:
    text = "run `python bench/bench_probes.py`, or `git show 0b07ca6:bench/bench_probes.py`; see bench/ab.py"
    assert BENCH_PATH.findall(text) == ["bench/bench_probes.py", "bench/ab.py"]
