"""Pages read roll-ups: ``tools/rollup_reads.py`` (run by ``make lint``) refuses a selector that
names a raw-results model, the fragment that reads results, or their tables in SQL."""

import subprocess
import sys
from pathlib import Path

from tools.rollup_reads import crossings

REPO_DIR = Path(__file__).resolve().parents[2]


def test_no_selector_reads_raw_results():
    assert crossings(REPO_DIR / "parity" / "selectors") == []


def test_a_selector_that_reads_results_is_refused(tmp_path):
    (tmp_path / "history.py").write_text(
        "from parity.models import Gap, Result\n"
        "from parity.definitions import run_outcomes\n"
        "SQL = 'SELECT outcome FROM parity_result WHERE run_id = %s'\n"
        "def reads(run):\n"
        "    return Gap.objects.filter(run=run)\n"
    )
    assert crossings(tmp_path) == [
        "history.py:1: names Result",
        "history.py:2: names run_outcomes",
        "history.py:3: SQL names a raw-results table",
    ]
    run = subprocess.run(
        [sys.executable, REPO_DIR / "tools" / "rollup_reads.py", tmp_path],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "move the read to parity.result_reads" in run.stdout
