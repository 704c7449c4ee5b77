"""The manifest CI applies (a backend's exemptions and the files it must run) and the resolve
endpoint (which of a runner's tests are exempted), through the API with runs ingested from
JUnit XML."""

import datetime

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from parity.models import Gap
from parity.services.projects import project_create, upload_token_create
from tests.parity.families_scenario import family_add

URL = "/api/v1/projects/pytorch-xla"
OPS = "test/test_ops.py::TestOps::"
VIEW = "test/test_view_ops.py::TestViewOps::"
SPMD = "test/spmd/test_xla_sharding.py::TestSharding::"
ISSUE = "https://github.com/pytorch/xla/issues/9017"


@pytest.fixture
def runs(upload_run):
    """The reference runs three files; TPU skips the complex64 ops and never runs spmd."""
    reference = {
        f"{OPS}test_add_complex64": "passed",
        f"{OPS}test_add_float32": "passed",
        f"{VIEW}test_view_float32": "passed",
        f"{SPMD}test_shard": "passed",
    }
    upload_run("cpu", reference, day="2026-04-01")
    upload_run(
        "tpu",
        {
            f"{OPS}test_add_complex64": ("skipped", "complex64 not supported"),
            f"{OPS}test_add_float32": "passed",
            f"{VIEW}test_view_float32": "passed",
        },
        day="2026-04-01",
    )


def exempt(api, **body):
    response = api.post(f"{URL}/triage/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_files_are_the_references_minus_file_level_exemptions(runs, api):
    exempt(api, match="test/spmd/**", backends=["tpu"], kind="intended", note="no mesh on TPU")
    exempt(api, match="test/test_view_ops.py", backends=["tpu"], kind="quarantine", issue_url=ISSUE)

    tpu = api.get(f"{URL}/manifest/?backend=tpu").json()
    gpu = api.get(f"{URL}/manifest/?backend=gpu").json()

    # Quarantined tests still run: their file stays.
    assert tpu["files"] == ["test/test_ops.py", "test/test_view_ops.py"]
    assert gpu["files"] == [
        "test/spmd/test_xla_sharding.py",
        "test/test_ops.py",
        "test/test_view_ops.py",
    ]
    assert [e["match"] for e in gpu["exemptions"]] == []
    text = api.get(f"{URL}/manifest/?backend=tpu&format=files")
    assert text["Content-Type"].startswith("text/plain")
    assert text.content.decode() == "test/test_ops.py\ntest/test_view_ops.py\n"


def test_a_new_test_file_of_the_reference_runs_everywhere(runs, upload_run, api):
    exempt(api, match="test/spmd/**", backends=["tpu"], kind="intended", note="no mesh on TPU")
    upload_run(
        "cpu",
        {f"{OPS}test_add_float32": "passed", "test/test_new.py::TestNew::test_it": "passed"},
        day="2026-04-02",
    )

    assert "test/test_new.py" in api.get(f"{URL}/manifest/?backend=tpu").json()["files"]


def test_exemptions_carry_the_skip_message_and_the_gap_is_tracked(runs, api):
    made = exempt(
        api,
        match=f"{OPS}test_*_complex64",
        backends=["tpu"],
        kind="tracked",
        note="XLA has no complex64",
        issue_url=ISSUE,
        expires_on="2099-01-31",
    )

    body = api.get(f"{URL}/manifest/?backend=tpu").json()

    assert body["exemptions"] == [
        {
            "id": made["id"],
            "match": f"{OPS}test_*_complex64",
            "kind": "tracked",
            "reason": "XLA has no complex64",
            "issue": ISSUE,
            "expires": "2099-01-31",
            "message": f"XLA has no complex64 ({ISSUE})",
            "file_level": False,
            "passes_now": False,
            "condition": "",
        }
    ]
    gap = Gap.objects.get(is_open=True, backend__name="tpu", test__name="test_add_complex64")
    assert (gap.triage_id, gap.tracked) == (made["id"], True)


def test_an_unchanged_manifest_answers_304_and_a_change_a_new_etag(runs, api):
    first = api.get(f"{URL}/manifest/?backend=tpu")
    etag = first["ETag"]

    assert api.get(f"{URL}/manifest/?backend=tpu", HTTP_IF_NONE_MATCH=etag).status_code == 304
    exempt(api, match="test/spmd/**", backends=["tpu"], kind="intended", note="no mesh")
    changed = api.get(f"{URL}/manifest/?backend=tpu", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag


def test_manifest_refusals_are_clear(runs, api):
    missing = api.get(f"{URL}/manifest/")
    unknown = api.get(f"{URL}/manifest/?backend=ipu")
    bad_token = APIClient()
    bad_token.credentials(HTTP_AUTHORIZATION="Token nope")

    assert missing.status_code == 400 and "backend" in missing.json()
    assert unknown.status_code == 400
    assert unknown.json()["backend"] == ["Unknown backend 'ipu'. Known: cpu, gpu, neuron, tpu."]
    assert bad_token.get(f"{URL}/manifest/?backend=tpu").status_code == 401
    assert api.get("/api/v1/projects/nope/manifest/?backend=tpu").status_code == 404


@pytest.fixture
def device_suffixed(upload_run):
    """PyTorch's device-generic tests: one canonical test, a class and name per device."""
    upload_run("cpu", {f"{VIEW}test_view_float32": "passed"}, day="2026-04-01")


def test_three_dialects_of_one_test_resolve_to_its_exemption(device_suffixed, api):
    made = exempt(
        api,
        match=f"{VIEW}test_view_float32",
        backends=["tpu"],
        kind="tracked",
        issue_url=ISSUE,
    )
    tests = [
        "test/test_view_ops.py::TestViewOpsXLA::test_view_xla_float32",  # pytest
        "test.test_view_ops.TestViewOpsXLA.test_view_xla_float32",  # unittest
        {"classname": "__main__.TestViewOpsXLA", "name": "test_view_xla_float32",
         "file": "test/test_view_ops.py"},  # JUnit, a script run by unittest.main()
        "test/test_view_ops.py::TestViewOpsXLA::test_other_xla_float32",
    ]  # fmt: skip

    body = api.post(
        f"{URL}/manifest/resolve/", {"backend": "tpu", "tests": tests}, format="json"
    ).json()

    assert body["count"] == 3
    assert [(r["index"], r["key"], r["triage"]) for r in body["exempted"]] == [
        (i, f"{VIEW}test_view_float32", made["id"]) for i in range(3)
    ]
    assert body["exempted"][2]["test"] == tests[2]
    assert body["exempted"][0]["message"] == f"Exempted: a known issue ({ISSUE})"


def test_an_expired_exemption_stops_applying(runs, api, xla):
    made = exempt(api, match=f"{OPS}test_add_complex64", kind="tracked", issue_url=ISSUE)
    resolve = {"backend": "tpu", "tests": [f"{OPS}test_add_complex64"]}
    assert api.post(f"{URL}/manifest/resolve/", resolve, format="json").json()["count"] == 1

    yesterday = timezone.now().date() - datetime.timedelta(days=1)
    xla.triages.filter(pk=made["id"]).update(expires_on=yesterday)

    assert api.post(f"{URL}/manifest/resolve/", resolve, format="json").json()["count"] == 0
    assert api.get(f"{URL}/manifest/?backend=tpu").json()["exemptions"] == []


def test_a_glob_never_matches_a_test_of_a_file_it_does_not_name(runs, api):
    exempt(api, match="test/test_ops*", kind="intended", note="x")  # files only: no '::'
    exempt(api, match="test/spmd/*::*", kind="intended", note="y")
    tests = [
        "test/test_ops.py::TestOps::test_add_float32",  # test_ops* names test_ops.py
        "test/test_ops/nested.py::TestN::test_x",  # '*' stays within a folder
        "test/spmd/test_xla_sharding.py::TestSharding::test_shard",
        "test/spmd/deep/test_y.py::TestY::test_y",
        "test/spmd_other.py::TestSpmd::test_z",
    ]

    body = api.post(
        f"{URL}/manifest/resolve/", {"backend": "tpu", "tests": tests}, format="json"
    ).json()

    assert [r["index"] for r in body["exempted"]] == [0, 2]


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"tests": []}, "backend", "required"),
        ({"backend": "tpu", "tests": "test_x"}, "tests", "list"),
        ({"backend": "tpu", "tests": [12]}, "tests", "string"),
        ({"backend": "tpu", "tests": [{"classname": "A"}]}, "tests", "'name'"),
        ({"backend": "tpu", "tests": ["x"] * 200_001}, "tests", "200000"),
    ],
)
def test_bad_resolve_requests_are_refused_with_the_reason(runs, api, body, field, says):
    exempt(api, match="test/spmd/**", kind="intended", note="x")  # something to resolve against

    response = api.post(f"{URL}/manifest/resolve/", body, format="json")

    assert response.status_code == 400
    assert says in str(response.json()[field])


def test_resolve_is_a_read_a_token_of_another_project_may_not_make(runs, api):
    jax = project_create(slug="jax", backends=["cpu"], reference="cpu")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=jax)}")
    body = {"backend": "tpu", "tests": []}

    assert api.post(f"{URL}/manifest/resolve/", body, format="json").status_code == 200
    assert other.post(f"{URL}/manifest/resolve/", body, format="json").status_code == 403
    assert APIClient().post(f"{URL}/manifest/resolve/", body, format="json").status_code == 200


def test_durations_are_the_files_seconds_on_this_backend(runs, api):
    body = api.get(f"{URL}/manifest/?backend=tpu").json()

    # Each case of the fixture's reports takes 0.01 s; spmd never ran on TPU.
    assert body["durations"] == {"test/test_ops.py": 0.02, "test/test_view_ops.py": 0.01}


def test_a_reason_whose_gaps_an_exemption_covers_is_triaged_not_untracked(runs, api, client):
    def reason_row():
        body = api.get(f"{URL}/skip-reasons/").json()
        row = next(r for r in body["results"] if r["reason"] == "complex64 not supported")
        return body["untracked"], row["gaps"]["tpu"], row["untriaged"]["tpu"]

    assert reason_row() == (1, 1, 1)

    exempt(api, match=f"{OPS}test_*_complex64", backends=["tpu"], kind="tracked", issue_url=ISSUE)

    assert reason_row() == (0, 1, 0)
    page = client.get("/p/pytorch-xla/skip-reasons/").content.decode()
    row = page.split("complex64 not supported", 1)[1].split("</tr>", 1)[0]
    assert '<span class="badge triaged">triaged</span>' in row


def test_a_variant_s_exemptions_are_its_own_its_family_s_and_every_backend_s(project, api):
    family_add(project)
    family = exempt(api, match=f"{OPS}test_a", backends=["rocm"], kind="tracked", issue_url=ISSUE)
    own = exempt(api, match=f"{OPS}test_b", backends=["rocm-gfx942"], kind="intended", note="n")
    every = exempt(api, match=f"{OPS}test_c", kind="intended", note="nowhere")
    exempt(api, match=f"{OPS}test_d", backends=["rocm-gfx90a", "tpu"], kind="intended", note="n")

    def ids(backend: str) -> list[int]:
        answer = api.get(f"{URL}/triage/", {"backend": backend, "limit": 10}).json()
        assert answer["count"] == len(answer["results"])
        return sorted(t["id"] for t in answer["results"])

    assert ids("rocm-gfx942") == sorted([family["id"], own["id"], every["id"]])
    assert ids("rocm") == sorted([family["id"], every["id"]])
    assert ids("gpu") == [every["id"]]
    unknown = api.get(f"{URL}/triage/", {"backend": "nope"})
    assert unknown.status_code == 400
    assert "Unknown backend 'nope'" in unknown.json()["backend"][0]
