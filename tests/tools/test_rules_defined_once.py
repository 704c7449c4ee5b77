"""Each rule the engine, the verdict and the aligned view share has one definition, in
``parity/definitions.py`` (issue 35): which run may be current, a test's outcome in a run, a
gap and its state, the pending condition, the run current at time t, the triage that applies.
Elsewhere a statement composes the definition; it does not spell the rule again. This looks
for each rule's characteristic spellings in the code of ``parity/`` and ``ingest/`` and fails
where one appears outside the definitions.

(``tests/parity/test_rules_model.py`` holds what the definitions answer to a plain-Python
reading of the rules.)"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "parity" / "definitions.py"
SOURCES = sorted(
    p
    for package in ("parity", "ingest")
    for p in (ROOT / package).rglob("*.py")
    if "migrations" not in p.parts
)

RULES = {
    "which run may be current": (
        r"NOT\s+\"?\w+\"?\.probe\b",  # NOT r.probe
        r"\bbranch\s*(=|IN)\s*\(?[^)\n]*''",  # r.branch = '' / branch IN (%(branch)s, '')
        r"Q\(branch=",
        r"\bbranch in \(",
    ),
    "a test's outcome in a run": (
        r"WHEN %\(error\)s THEN \d",  # the rank of outcomes
        r"DISTINCT ON \((run_id, )?test_id\)",
    ),
    "a gap and its state": (
        r"THEN\s+'(skipped|failed|error|pending|missing)'",
        r"coalesce\([^)]*'missing'\)",
        r"'pending'",
        r"'reference_missing'\s*,",  # a select list's state, not a filter on one
    ),
    "the pending condition": (
        r"\bsince\}?\s*>",  # the reference first ran the test after the run started
        r"\bsince\s*<=",
    ),
    "the run current at time t": (
        r"Q\(started_at=",  # the tie of two runs started at once, broken by id
        r"\bdefault_branch_runs\(",  # of the complete ones, latest first: current_runs
        r"\.started_at <= \{at\}",
    ),
    "the triage that applies": (
        r"~\s*\w+\.match_regex",
        r"\bmatch_shape\s*=\s*'",
        r"expires_on\s*(>=|<)",
        r"expires_on__(gte|lt|isnull)",
        r"kind = 'intended' DESC",
    ),
    # States from history as the surfaces show them (issue 46): whether the project keeps them,
    # and since when a broken test fails (the failing streak its window ends with).
    "a test's state from history, as surfaces read it": (
        r"history_rules[^\n]*\.get\(\s*[\"']enabled",
        r"rstrip\(\s*[\"']F[\"']\s*\)",
        r"\.state\s*==\s*[\"']broken[\"']",
    ),
}


def _spellings(path: Path) -> list[tuple[str, int, str]]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for rule, patterns in RULES.items():
            if any(re.search(p, line) for p in patterns):
                found.append((rule, number, line.strip()))
    return found


def test_the_definitions_hold_every_rule():
    rules = {rule for rule, _n, _line in _spellings(HOME)}
    assert rules == set(RULES), f"a rule's spelling no longer in definitions: {set(RULES) - rules}"


def test_no_rule_is_spelled_outside_the_definitions():
    again = {
        str(path.relative_to(ROOT)): found
        for path in SOURCES
        if path != HOME and (found := _spellings(path))
    }
    assert not again, f"shared rules spelled again (compose parity.definitions'): {again}"
