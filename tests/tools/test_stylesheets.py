"""Every stylesheet parses: a browser drops a rule whose selector is followed by another
selector's brace, and with it every rule up to the brace that closes the pair, silently (a
merge once left two versions of one selector in a row, and the pages scrolled sideways at
400 px). Rules nest only inside at-rules (@media, @supports)."""

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "static" / "parity"
SHEETS = sorted(STATIC.glob("*.css"))
GROUPING = ("@media", "@supports", "@layer", "@container")


def nesting_problems(css: str) -> list[str]:
    """Where ``css`` nests a rule inside a rule, or leaves a brace unmatched."""
    # Comments go, their line breaks stay: a problem's line is the sheet's.
    css = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), css, flags=re.S)
    problems, stack, prelude = [], [], ""
    line = 1
    for char in css:
        if char == "\n":
            line += 1
        if char == "{":
            head = prelude.strip()
            if stack and not stack[-1].startswith(GROUPING):
                problems.append(f"line {line}: {head[:60]!r} opens inside {stack[-1][:60]!r}")
            stack.append(head)
            prelude = ""
        elif char == "}":
            if not stack:
                problems.append(f"line {line}: a '}}' closes nothing")
            else:
                stack.pop()
            prelude = ""
        elif char == ";" and stack and not stack[-1].startswith(GROUPING):
            prelude = ""
        else:
            prelude += char
    problems += [f"end of file: {head[:60]!r} never closed" for head in stack]
    return problems


def test_the_check_finds_a_selector_doubled_by_a_merge():
    doubled = "@media (max-width: 600px) {\n  table.a {\n  table.b {\n  td { x: 1; }\n}\n}\n"
    assert nesting_problems(doubled)
    assert nesting_problems("@media (max-width: 600px) { table.a { x: 1; } }\n") == []


@pytest.mark.parametrize("sheet", SHEETS, ids=lambda p: p.name)
def test_every_stylesheet_parses(sheet):
    assert SHEETS, f"no stylesheet under {STATIC}"
    assert nesting_problems(sheet.read_text(encoding="utf-8")) == []
