"""The runs list says each run's verdict at a glance (``runs_page``'s ``RunVerdict``): the gaps
it opened, how many of those are still untracked, the gaps it closed, and the files its run
manifest says did not run normally, read from the engine's gaps and the manifest."""

from parity import selectors
from tests.junit_builder import Case, junit_xml
from tests.parity.dashboard_scenario import DAY2, runs_by_day, upload_history


def _verdicts(project) -> dict:
    page = selectors.runs_page(project=project, per_page=50)
    return {row.run.pk: row.verdict for row in page.rows}


def test_each_run_says_what_it_opened_and_closed(upload_run, xla):
    runs = upload_history(upload_run)
    pull = upload_run("gpu", runs_by_day()[DAY2]["cpu"], day=DAY2, branch="pr-7")
    verdicts = _verdicts(xla)
    # tpu's first run opened a2 (skipped, its reason cites an issue: tracked), a3 and a4; its
    # second run fixed a3, so only a4 is still open and untracked.
    tpu1 = verdicts[runs["tpu1"]]
    assert (tpu1.judged, tpu1.opened, tpu1.untracked, tpu1.closed) == (True, 3, 1, 0)
    tpu2 = verdicts[runs["tpu2"]]
    assert (tpu2.opened, tpu2.closed) == (0, 1)
    gpu2 = verdicts[runs["gpu2"]]  # c2 fails on day 2
    assert (gpu2.opened, gpu2.untracked, gpu2.closed) == (1, 1, 0)
    assert verdicts[runs["cpu2"]].judged and not verdicts[runs["cpu2"]].opened
    # A pull request's run never became current: its verdict is its page's.
    assert not verdicts[pull].judged


def test_a_run_names_its_files_that_crashed(client, ingest, xla):
    a, b = Case("TestA", "test_one", file="test/a.py"), Case("TestB", "test_one", file="test/b.py")
    ingest(("cpu.xml", junit_xml(a, b)), backend="cpu", run="cpu-1", complete="true")
    manifest = '{"files": [{"file": "test/a.py", "signal": "SIGSEGV"}]}'
    ingest(("tpu.xml", junit_xml(b)), backend="tpu", run="tpu-1",
           run_manifest=manifest, complete="true")  # fmt: skip
    (row,) = [r for r in selectors.runs_page(project=xla).rows if r.run.backend.name == "tpu"]
    assert row.verdict.unrun == {"crashed": 1}
    # The crashed file's test is a gap lost to infrastructure: a rerun, never untracked.
    assert (row.verdict.opened, row.verdict.untracked) == (1, 0)
    html = client.get(f"/p/{xla.slug}/runs/").content.decode()
    cell = html.split(f'id="run-{row.run.pk}"', 1)[1].split('class="verdict"', 1)[1]
    verdict = " ".join(cell.split("</td>", 1)[0].split())
    assert ">+1 gap</span>" in verdict and "1 file crashed" in verdict
