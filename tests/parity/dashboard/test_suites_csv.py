"""The suites matrix as CSV (``/p/<slug>/suites.csv``), linked from its page: one row per suite
and backend, and each the same cell the page and the API show, read from one selector
(docs/suites.md)."""

import csv
import io
from html.parser import HTMLParser

from parity.services.suites import suite_map_load
from tests.parity.selectors.test_suites import send

P = "/p/pytorch-xla"
ISSUE = "https://github.com/pytorch/xla/issues/9577"


class SuiteCells(HTMLParser):
    """The page's cells: (suite, backend) -> what a reader sees in it."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], dict] = {}
        self.suite = ""
        self.cell: dict | None = None
        self.in_reason = False
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "tr" and "data-suite" in a:
            self.suite = a["data-suite"]
        elif tag == "td" and "suite-cell" in classes:
            self.cell = {"status": a["data-status"], "tier": "", "reason": "", "issue": ""}
            self.cells[(self.suite, a["data-backend"])] = self.cell
        elif self.cell is not None and "data-tier" in a:
            self.cell["tier"] = a["data-tier"]
        elif self.cell is not None and "data-runs" in a:
            self.cell.update(
                runs=int(a["data-runs"]),
                greens=int(a["data-greens"]),
                timeouts=int(a["data-timeouts"]),
                streak=int(a["data-streak"]),
            )
        elif self.cell is not None and "suite-reason" in classes:
            self.in_reason = True
        elif self.cell is not None and "suite-issue" in classes:
            self.cell["issue"] = a["href"]
            self.in_reason = False
        elif self.cell is not None and "suite-run" in classes:
            self.cell["run"] = int(a["href"].rstrip("/").rsplit("/", 1)[-1])
        if tag == "a" and "href" in a:
            self.links.append((a["href"], a.get("id") or ""))

    def handle_endtag(self, tag):
        if tag == "td":
            self.cell = None
        if tag in ("div", "a"):
            self.in_reason = False

    def handle_data(self, data):
        if self.in_reason and self.cell is not None:
            self.cell["reason"] += data.strip()


def seed(project, ingest) -> None:
    suite_map_load(
        project=project,
        suites={
            "main": {
                "promote_after": 3,
                "backends": {"cpu": "test/run_tests.sh", "tpu": "test/tpu/run_tests.sh"},
            },
            "torch_ops": {
                "backends": {
                    "neuron": {"excluded": True, "reason": "=never called", "issue_url": ISSUE}
                }
            },
        },
    )
    for day in (3, 2, 1, 0):  # blocking on cpu
        send(ingest, "cpu", "test/run_tests.sh", day, "passed", "skipped")
    # A test the reference passes fails: an untracked gap, the gate fails, the run is red.
    send(ingest, "tpu", "test/tpu/run_tests.sh", 1, "failed", "passed")
    timed_out = [{"file": "test/a.py", "started": True, "timed_out": True, "exit_code": -9}]
    send(ingest, "tpu", "test/tpu/run_tests.sh", 0, "passed", manifest=timed_out)
    send(ingest, "neuron", "main", 5, "passed")  # stale
    send(ingest, "cpu", "torch_ops", 0, manifest=[{"file": "test/b.py", "started": False}])
    send(ingest, "gpu", "nightly-extras", 0, "passed")  # unmapped


def test_the_csv_the_api_and_the_page_agree_cell_by_cell(client, project, ingest):
    seed(project, ingest)

    response = client.get(f"{P}/suites.csv")
    api = client.get(f"/api/v1/projects/{project.slug}/suites/").json()
    page = SuiteCells()
    page.feed(client.get(f"{P}/suites/").content.decode())

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="pytorch-xla-suites.csv"'
    assert (f"{P}/suites.csv", "suites-csv") in page.links  # the page links its download
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert list(rows[0]) == [
        "suite",
        "backend",
        "status",
        "reason",
        "issue",
        "last_run",
        "pass_rate",
        "timeouts",
        "greens_in_a_row",
        "tier",
    ]
    api_cells = {(r["name"], c["backend"]): c for r in api["suites"] for c in r["cells"]}
    by_cell = {(r["suite"], r["backend"]): r for r in rows}
    # One row per suite and backend, in the API's order, and the page has the same cells.
    assert [(r["suite"], r["backend"]) for r in rows] == list(api_cells)
    assert set(page.cells) == set(api_cells)
    assert len(rows) == 3 * 4
    for key, cell in api_cells.items():
        row, shown = by_cell[key], page.cells[key]
        health, last = cell["health"], cell["last_run"]
        assert row["status"] == cell["status"] == shown["status"], key
        assert shown["reason"] == cell["reason"], key
        assert row["reason"] == _spreadsheet(cell["reason"]), key
        assert row["issue"] == cell["issue_url"] == shown["issue"], key
        has_tier = last is not None and cell["status"] != "excluded"
        assert row["tier"] == shown["tier"] == (cell["tier"] if has_tier else ""), key
        assert row["last_run"] == (last["started_at"].replace("Z", "+00:00") if last else ""), key
        assert shown.get("run") == (last["run"] if last else None), key
        rate = health["pass_rate"]
        assert row["pass_rate"] == ("" if rate is None else f"{rate:.3f}"), key
        assert int(row["timeouts"]) == health["timeouts"], key
        assert int(row["greens_in_a_row"]) == health["consecutive_greens"], key
        if health["runs"]:
            assert (shown["timeouts"], shown["streak"]) == (
                health["timeouts"],
                health["consecutive_greens"],
            ), key
    # What a reader depends on, in the download itself.
    cpu = by_cell[("main", "cpu")]
    assert (cpu["status"], cpu["pass_rate"], cpu["greens_in_a_row"], cpu["tier"]) == (
        "ran",
        "1.000",
        "4",
        "blocking",
    )
    tpu = by_cell[("main", "tpu")]
    assert (tpu["pass_rate"], tpu["timeouts"], tpu["tier"]) == ("0.000", "1", "informing")
    excluded = by_cell[("torch_ops", "neuron")]
    assert (excluded["status"], excluded["reason"], excluded["issue"], excluded["tier"]) == (
        "excluded",
        "'=never called",  # a spreadsheet does not run it as a formula
        ISSUE,
        "",
    )
    assert by_cell[("main", "neuron")]["status"] == "stale"
    assert by_cell[("torch_ops", "cpu")]["status"] == "failed_to_run"
    never = by_cell[("main", "gpu")]
    assert (never["status"], never["last_run"], never["pass_rate"], never["tier"]) == (
        "never_ran",
        "",
        "",
        "",
    )
    assert by_cell[("nightly-extras", "gpu")]["status"] == "ran"


def _spreadsheet(text: str) -> str:
    return "'" + text if text.startswith("=") else text
