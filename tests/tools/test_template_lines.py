"""Templates stay readable in a review: no line over 160 characters (a 1,451-character line once
held a copy of a whole partial, and drifted from it)."""

from pathlib import Path

import pytest

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
MAX_CHARS = 160
TEMPLATES = sorted(p for p in TEMPLATES_DIR.rglob("*") if p.suffix in {".html", ".txt"})


def test_there_are_templates_to_check():
    assert len(TEMPLATES) > 20


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(TEMPLATES_DIR)))
def test_no_template_line_is_over_the_limit(template):
    lines = template.read_text(encoding="utf-8").splitlines()
    long = [(n, len(line)) for n, line in enumerate(lines, start=1) if len(line) > MAX_CHARS]
    assert not long, f"{template.name}: lines (number, length) over {MAX_CHARS}: {long}"
