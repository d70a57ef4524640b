"""The documentation stands alone: everything it cites or links is inside the repository.

A reader has the repository and nothing else, so the docs, code comments and scenario files
never point outside it (no working notes, extraction documents or private numbering of the
studies), every resolution id (``hasegawa:A35``) cited anywhere is defined in
``docs/resolutions.md``, and every relative link of a Markdown page leads to a file that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TEXT_SUFFIXES = {".md", ".py", ".rs", ".toml", ".tcl", ".cc", ".pyi", ".html", ".txt"}
SKIP_PARTS = {"target", ".venv", ".git", "__pycache__", "node_modules", "demo-out"}

# What only an outside reader's copy of the working material would explain.
OUTSIDE = [
    (re.compile(r"\.\./shared\b"), "a path outside the repository"),
    (re.compile(r"\bspecs/"), "an extraction document the reader does not have"),
    (re.compile(r"\bDESIGN(\.md)?\b"), "a design document the reader does not have"),
    (re.compile(r"\bseeds?\s+0\d\d\b", re.IGNORECASE), "a private number for a study"),
    (re.compile(r"\bspec\s+(§|\d{3}\b)"), "an extraction document the reader does not have"),
]

RESOLUTION_ID = re.compile(r"\b(efcm|pamultcp|multfrc|nist|hasegawa):A\d+\b")
DEFINED_ID = re.compile(r"^\*\*`((?:efcm|pamultcp|multfrc|nist|hasegawa):A\d+)`", re.MULTILINE)
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _files() -> list[Path]:
    roots = ["README.md", "docs", "python", "crates", "scenarios", "bench", "tests", "Makefile"]
    found: list[Path] = []
    for r in roots:
        p = ROOT / r
        if p.is_file():
            found.append(p)
            continue
        for f in p.rglob("*"):
            if f.is_file() and f.suffix in TEXT_SUFFIXES and not SKIP_PARTS & set(f.parts):
                found.append(f)
    return sorted(found)


FILES = _files()
THIS = Path(__file__).resolve()


def test_the_scan_sees_the_documentation() -> None:
    names = {f.relative_to(ROOT).as_posix() for f in FILES}
    assert "README.md" in names and "docs/references.md" in names
    assert any(n.startswith("crates/") and n.endswith(".rs") for n in names)


@pytest.mark.parametrize(("pattern", "why"), OUTSIDE, ids=[w for _, w in OUTSIDE])
def test_nothing_points_outside_the_repository(pattern: re.Pattern[str], why: str) -> None:
    hits = []
    for f in FILES:
        if f == THIS:
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, f"{why}:\n" + "\n".join(hits)


def test_every_cited_resolution_is_defined() -> None:
    defined = set(DEFINED_ID.findall((ROOT / "docs/resolutions.md").read_text()))
    assert len(defined) > 40
    missing = []
    for f in FILES:
        for m in RESOLUTION_ID.finditer(f.read_text(errors="replace")):
            if m.group(0) not in defined:
                missing.append(f"{f.relative_to(ROOT)}: {m.group(0)}")
    assert not missing, "cited but not defined in docs/resolutions.md:\n" + "\n".join(missing)


def test_relative_links_of_the_docs_lead_to_files() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        for target in MD_LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_every_study_cited_by_its_short_form_has_a_full_reference() -> None:
    refs = " ".join((ROOT / "docs/references.md").read_text().split())
    for short in [
        "Savorić and Karl (2004)",
        "Kuo and Fu (2008)",
        "Damjanović (2010)",
        "Mills et al. (2010)",
        "Hasegawa (2000)",
    ]:
        assert short in refs
    # The full references carry the publication details, not only the short form.
    for detail in ["TKN-04-007", "Computer Communication Review 38(1)", "University of Innsbruck",
                   "500-282", "Osaka University"]:
        assert detail in refs
