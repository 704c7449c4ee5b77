"""Run attributes on the upload API, and the backend variants they make: stored on the run, a
family's run sent to its variant (created once, even by concurrent shards), a token scoped to
the family, and the clear 400s of attributes that cannot be kept."""

import json
import threading
import time

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from parity.models import Backend, Run, Upload
from parity.services.projects import upload_token_create
from parity.services.variants import backend_for_run
from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"
MI300 = {"arch": "gfx942", "rocm": "7.1"}


@pytest.fixture
def rocm(project) -> Backend:
    return Backend.objects.create(project=project, name="rocm", reproduce_command="python {file}")


def _attrs(attributes: dict) -> str:
    return json.dumps(attributes)


def test_a_familys_run_with_an_arch_goes_to_its_variant_made_on_first_upload(rocm, ingest):
    response = ingest(PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300), complete="true")

    assert response.status_code == 202, response.content
    run = Run.objects.select_related("backend").get(pk=response.json()["run"])
    assert run.attributes == MI300
    variant = run.backend
    assert (variant.name, variant.family_id, variant.attributes) == (
        "rocm-gfx942",
        rocm.pk,
        {"arch": "gfx942"},
    )
    assert variant.reproduce_command == "python {file}"
    assert run.key.endswith(":rocm-gfx942")  # the default run key names the variant
    assert run.complete and Upload.objects.get(run=run).status == "done"

    again = ingest(PYTEST_SMALL, backend="rocm", commit="b" * 40, attributes=_attrs(MI300))
    assert Run.objects.get(pk=again.json()["run"]).backend_id == variant.pk
    assert Backend.objects.filter(family=rocm).count() == 1


def test_attributes_without_a_variant_key_stay_on_the_run_of_the_backend(rocm, ingest):
    response = ingest(PYTEST_SMALL, backend="rocm", attributes=_attrs({"rocm": "7.1"}))

    run = Run.objects.select_related("backend").get(pk=response.json()["run"])
    assert (run.backend.name, run.attributes) == ("rocm", {"rocm": "7.1"})
    assert not Backend.objects.filter(family=rocm).exists()


def test_the_reference_never_splits_into_variants(project, ingest):
    response = ingest(PYTEST_SMALL, backend="cpu", attributes=_attrs({"arch": "x86_64"}))

    run = Run.objects.select_related("backend").get(pk=response.json()["run"])
    assert (run.backend.name, run.attributes) == ("cpu", {"arch": "x86_64"})


def test_a_variant_takes_uploads_by_its_own_name_too(rocm, ingest):
    made = ingest(PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300)).json()["run"]
    direct = ingest(PYTEST_SMALL, backend="rocm-gfx942", commit="c" * 40)
    repeated = ingest(
        PYTEST_SMALL, backend="rocm-gfx942", commit="d" * 40, attributes=_attrs(MI300)
    )

    variant = Run.objects.get(pk=made).backend_id
    assert Run.objects.get(pk=direct.json()["run"]).backend_id == variant
    assert Run.objects.get(pk=repeated.json()["run"]).backend_id == variant


def test_a_variant_refuses_attributes_that_contradict_it(rocm, ingest):
    ingest(PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300))
    response = ingest(
        PYTEST_SMALL, backend="rocm-gfx942", commit="e" * 40, attributes=_attrs({"arch": "gfx90a"})
    )

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "Backend 'rocm-gfx942' is the variant for arch=gfx942; this upload says arch=gfx90a. "
        "Send it to the family's name instead."
    )


def test_a_backend_of_the_variants_name_that_is_no_variant_is_not_taken_over(rocm, project, ingest):
    Backend.objects.create(project=project, name="rocm-gfx942")
    response = ingest(PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300))

    assert response.status_code == 400
    assert (
        "Backend 'rocm-gfx942' already exists and is not rocm's variant for arch=gfx942"
        in (response.json()["detail"])
    )
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("first", "second"),
    [("gfx90a:xnack+", "gfx90a:xnack-"), ("gfx942", "GFX942"), ("gfx1100", "gfx1100!")],
)
def test_two_archs_of_one_slug_are_two_variants_and_both_kept(rocm, ingest, first, second):
    answers = [
        ingest(PYTEST_SMALL, backend="rocm", run=f"n{i}", attributes=_attrs({"arch": arch}))
        for i, arch in enumerate((first, second, first))
    ]

    assert [a.status_code for a in answers] == [202, 202, 202], [a.content for a in answers]
    backends = [Run.objects.get(pk=a.json()["run"]).backend for a in answers]
    assert [b.attributes for b in backends] == [{"arch": first}, {"arch": second}, {"arch": first}]
    assert backends[0] == backends[2] != backends[1]  # the first keeps its plain name
    slug = backends[0].name
    assert backends[1].name.startswith(f"{slug}-") and len(backends[1].name) == len(slug) + 9
    assert all(b.family == rocm for b in backends)


def test_a_later_shard_with_other_attributes_is_refused_naming_them(rocm, ingest):
    first = ingest(PYTEST_SMALL, backend="rocm", run="nightly-7", attributes=_attrs(MI300))
    other = {"arch": "gfx942", "rocm": "7.2"}
    second = ingest(
        ("shard2.xml", PYTEST_SMALL.read_bytes().replace(b"test_add", b"test_mul")),
        backend="rocm",
        run="nightly-7",
        attributes=_attrs(other),
    )
    silent = ingest(
        ("shard3.xml", PYTEST_SMALL.read_bytes().replace(b"test_add", b"test_div")),
        backend="rocm-gfx942",
        run="nightly-7",
    )

    assert second.status_code == 400
    detail = second.json()["detail"]
    assert detail.startswith("Run 'nightly-7' has attributes {'arch': 'gfx942', 'rocm': '7.1'}")
    assert "(they differ in rocm)" in detail
    assert silent.status_code == 202  # a shard sending none takes the run's
    assert silent.json()["run"] == first.json()["run"]
    assert Run.objects.get(pk=first.json()["run"]).attributes == MI300


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ('{"Arch": "gfx942"}', "Attribute key 'Arch': use lowercase letters"),
        ('{"arch": ""}', "Attribute 'arch': the value must be 1 to 100 characters."),
        ('{"arch": "' + "x" * 101 + '"}', "Attribute 'arch': the value must be 1 to 100"),
        ('{"arch": {"v": 1}}', "Attribute 'arch': the value must be text or a number."),
        ('["arch=gfx942"]', 'Attributes are a JSON object, e.g. {"arch": "gfx942"}.'),
        ("arch=gfx942", "not JSON: "),
        (json.dumps({f"k{i}": "v" for i in range(21)}), "At most 20 attributes; got 21."),
    ],
)
def test_bad_attributes_are_a_400_naming_the_key_and_store_nothing(
    rocm, ingest, attributes, message
):
    response = ingest(PYTEST_SMALL, backend="rocm", attributes=attributes)

    assert response.status_code == 400
    assert message in response.json()["attributes"][0]
    assert not Run.objects.exists() and not Backend.objects.filter(family=rocm).exists()


def _client(project, backends: list[str]) -> APIClient:
    client = APIClient()
    key = upload_token_create(project=project, backends=backends)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_scoped_to_the_family_uploads_to_its_variants(
    rocm, project, django_capture_on_commit_callbacks
):
    family_token = _client(project, ["rocm"])
    tpu_token = _client(project, ["tpu"])
    with django_capture_on_commit_callbacks(execute=True):
        via_family = post_upload(
            family_token, PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300)
        )
        by_name = post_upload(family_token, PYTEST_SMALL, backend="rocm-gfx942", commit="f" * 40)
        refused = post_upload(tpu_token, PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300))
        refused_variant = post_upload(tpu_token, PYTEST_SMALL, backend="rocm-gfx942")

    assert (via_family.status_code, by_name.status_code) == (202, 202)
    run = Run.objects.get(pk=via_family.json()["run"])
    assert family_token.post(f"/api/v1/runs/{run.pk}/complete/").status_code == 200
    assert (refused.status_code, refused_variant.status_code) == (403, 403)
    assert "not 'rocm-gfx942'" in refused_variant.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_shards_of_a_new_variant_create_it_once(project, token):
    """One shard's transaction has inserted the variant and not committed; another shard's
    upload waits on the name's unique index, then takes the committed row."""
    rocm = Backend.objects.create(project=project, name="rocm")
    holding, release, answers, failed = threading.Event(), threading.Event(), [], []

    def first_shard() -> None:
        try:
            with transaction.atomic():
                backend_for_run(project=project, backend=rocm, attributes=MI300)
                holding.set()
                release.wait(60)
        except Exception as exc:  # reported below
            failed.append(exc)
            holding.set()
        finally:
            connection.close()

    def second_shard() -> None:
        try:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            answers.append(
                post_upload(client, PYTEST_SMALL, backend="rocm", attributes=_attrs(MI300))
            )
        finally:
            connection.close()

    holder = threading.Thread(target=first_shard)
    holder.start()
    assert holding.wait(30) and not failed, failed
    waiter = threading.Thread(target=second_shard)
    waiter.start()
    try:
        _await_lock_wait()
    finally:
        release.set()
        holder.join()
        waiter.join(60)

    assert not failed, failed
    assert answers and answers[0].status_code == 202, answers and answers[0].content
    variants = Backend.objects.filter(project=project, family=rocm)
    assert [v.name for v in variants] == ["rocm-gfx942"]
    assert Run.objects.get(pk=answers[0].json()["run"]).backend_id == variants[0].pk


def _await_lock_wait(deadline_seconds: float = 30) -> None:
    """Until another connection waits on a lock (the second shard on the first's insert)."""
    deadline = time.monotonic() + deadline_seconds
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the second shard never waited on the first one's variant")
