"""The admin of results, a table partitioned by run without an index on id: one run at a time;
and a deleted run takes its results along."""

from parity.models import Result, Run

A = "test/a.py::TestA::"


def test_the_results_list_opens_on_the_newest_run_and_lists_one_run(admin_client, upload_run):
    first = upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-01")
    newest = upload_run("cpu", {f"{A}test_1": "passed", f"{A}test_2": "passed"}, day="2026-04-02")

    response = admin_client.get("/admin/parity/result/")
    assert response.status_code == 302
    assert response["Location"].endswith(f"?run__id__exact={newest}")
    listed = admin_client.get(response["Location"])
    assert listed.status_code == 200
    assert listed.context["cl"].result_count == 2
    assert (
        admin_client.get(f"/admin/parity/result/?run__id__exact={first}").context["cl"].result_count
        == 1
    )


def test_deleting_a_run_deletes_its_results(upload_run):
    run = upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-01")
    other = upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-02")

    Run.objects.filter(pk=run).delete()  # as the admin and a project's cascade delete

    assert not Result.objects.filter(run_id=run).exists()
    assert Result.objects.filter(run_id=other).count() == 1
    assert not Result.objects.filter(run_id=run).exists()
