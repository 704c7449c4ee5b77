"""Every setting that steers the Postgres planner lives in ``parity/plans.py``, each with its
one reason: the join methods, the memory for sorts, and the fence (``OFFSET 0``) that keeps a
subquery a loop (issue 35). Statements compose them by name (``{fence}``,
``plans.hash_joins``); this fails where the code of ``parity/`` or ``ingest/`` spells one
elsewhere, comments included, so the reasons stay in one place."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "parity" / "plans.py"
SOURCES = sorted(
    p
    for package in ("parity", "ingest")
    for p in (ROOT / package).rglob("*.py")
    if "migrations" not in p.parts
)
STEERING = re.compile(r"OFFSET\s+0\b|\benable_[a-z]+\b|\bwork_mem\b|\bjit\b|SET\s+LOCAL", re.I)


def _steering(path: Path) -> list[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(n, line.strip()) for n, line in enumerate(lines, start=1) if STEERING.search(line)]


def test_the_plans_module_holds_the_three_settings():
    text = HOME.read_text(encoding="utf-8")
    for name in ("HASH_JOINS_UNTIL_COMMIT", "SORTS_IN_MEMORY_UNTIL_COMMIT", "FENCE"):
        assert f"\n{name} = " in text, name


def test_no_planner_setting_is_spelled_outside_the_plans_module():
    elsewhere = {
        str(path.relative_to(ROOT)): found
        for path in SOURCES
        if path != HOME and (found := _steering(path))
    }
    assert not elsewhere, f"planner steering outside parity/plans.py: {elsewhere}"


def test_the_fences_are_composed_from_the_plans_module():
    """A statement fences with ``{fence}``, filled from ``parity.plans.FENCE``."""
    users = [p for p in SOURCES if "{fence}" in p.read_text(encoding="utf-8")]
    assert len(users) >= 5
    for path in users:
        assert "FENCE" in path.read_text(encoding="utf-8"), path.relative_to(ROOT)
