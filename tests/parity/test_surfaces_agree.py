"""The surfaces-agree oracle (issue 45): over seeded random histories, every surface that shows
where a test stands on a backend shows what the plain-Python rules model says
(``tests/parity/rules_model.standings``): the test API, the test page, the file page, the gaps
API (its list and its untracked filter), the gaps CSV, the family roll-ups ("fails on every
arch", "fails on k of n"), "Left to triage" and the snapshots' untracked counts, the CI
verdict of each backend's current run (its opened and uncovered gaps), the ``untracked_gaps``
webhook each current run announces (as recorded for an endpoint) and the weekly digest of each
week (rendered and parsed); a compare view's kept states (tpu against cpu: its page, CSV, paged
API, the test page and the test API) against the model's counts judged by scipy's Fisher test;
and every page and read endpoint of the history opens (200).

A history mixes what the states come from: a reference (cpu) and a rocm family of two arches
(gfx942, gfx90a) whose runs send a ROCm release that moves between 7.1 and 7.14, so a
``rocm < 7.14`` exemption starts and stops holding; a flat tpu; tests declared not applicable
(on rocm, on tpu); intended and tracked triages; run manifests naming files that crashed, timed
out, reported nothing or never started; runs started before the reference added tests (pending);
incomplete runs, probes and runs of another branch (never current); exemptions that expire and
are removed (deleted, or a declaration set aside) mid-history; and a tpu test that flips run
after run (flaky, states from history, which the oracle's project turns on).

``SURFACES`` is the oracle's registry: every URL of a page or an endpoint is in it or in
``NO_STANDING`` (with why it shows no test's standing); ``test_every_url_is_read_or_exempt``
fails when a URL is added to neither, so a new surface cannot escape the oracle."""

import csv
import dataclasses
import datetime
import io
import random
import re
from collections import Counter, defaultdict

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from parity import result_reads
from parity.engine import parity_recompute
from parity.engine.reference_suites import reference_suites_write
from parity.models import (
    Backend,
    BackendState,
    GapState,
    Outcome,
    PendingTest,
    Project,
    Run,
    Snapshot,
    Suite,
    TestCase,
    TrackingIssue,
    Triage,
    Upload,
)
from parity.pure.globs import pattern_literal, pattern_regex, pattern_shape
from parity.result_reads.verdict import run_verdict
from parity.selectors.families import families_failing, family_tests
from parity.selectors.files import file_grid
from parity.selectors.fragments import file_cell_counts
from parity.selectors.queue import triage_queue
from tests.parity import rules_model as model
from tests.parity.engine.rows import backend_of, results_upload
from tests.parity.engine.rows import testcase_of as case_of
from tests.parity.engine.test_absent_states import manifest_write
from tests.parity.engine.test_nightly_scope import FILES, MANIFEST_ENTRIES, TESTS, _results
from tests.parity.test_rules_model import _world

START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
ARCHES = ("gfx942", "gfx90a")
VARIANTS = tuple(f"rocm-{a}" for a in ARCHES)
BACKENDS = ("cpu", "cpu", *VARIANTS, *VARIANTS, "tpu")
ISSUE = "https://github.com/pytorch/xla/issues/{}"
FLIPPING = TESTS[5]
BROKEN = TESTS[4]  # fails in every run of tpu's ending: broken (states from history)
# Ends passing: its gap is held open, flaky, while the current run passes it.
FLIP_OUTCOMES = (Outcome.PASSED, Outcome.FAILED, Outcome.PASSED, Outcome.FAILED, Outcome.PASSED)


def _as_model(standing) -> model.Standing:
    """A surface's ``parity.definitions.Standing`` in the model's terms."""
    triage = "tracked" if standing.triage == "tracked_closed" else standing.triage
    return model.Standing(standing.outcome, triage, standing.cause)


# --- The project and its history -------------------------------------------------------------


def _family(project: Project) -> None:
    rocm = Backend.objects.create(project=project, name="rocm")
    for arch, name in zip(ARCHES, VARIANTS, strict=True):
        Backend.objects.create(project=project, name=name, family=rocm, attributes={"arch": arch})


def _triage(
    project, kind, *, backends=(), match="", test=None, condition="", number=None, expires_on=None
):
    derived = (
        {
            "match_regex": pattern_regex(match),
            "match_literal": pattern_literal(match),
            "match_shape": pattern_shape(match),
        }
        if match
        else {}
    )
    issue = None
    if number is not None:
        issue, _ = TrackingIssue.objects.get_or_create(
            project=project, key=f"pytorch/xla#{number}", defaults={"kind": "github",
                                                                    "url": ISSUE.format(number)}
        )  # fmt: skip
    triage = Triage.objects.create(
        project=project, kind=kind, note="x", match=match, test=test, condition=condition,
        issue=issue, expires_on=expires_on, **derived,
    )  # fmt: skip
    triage.backends.set([backend_of(project, b) for b in backends])
    return triage


# After the histories' May days and before the day the suite runs: an exemption with this expiry
# covered their runs' baselines and covers nothing now (expired since the previous run).
EXPIRED_ON = datetime.date(2026, 12, 1)


def _triages(project: Project, rng: random.Random) -> tuple[list[str], list[Triage]]:
    """A declaration on rocm and one on tpu, an intended and a tracked triage, a tracked one
    that holds only before ROCm 7.14, an intended one that expired, and two that a maintainer
    removes mid-history (a tracked one deleted, a declaration on rocm set aside), each on tests
    picked by the seed (outside the rocm declaration's file). Returns the tests of the last
    four, which the ending fails, and the two to remove."""
    files = rng.sample(FILES, 2)
    _triage(project, "not_applicable", backends=["rocm"], match=files[0])
    _triage(project, "not_applicable", backends=["tpu"], match=f"{files[1]}::T::t1")
    picked = rng.sample([t for t in TESTS if not t.startswith(files[0] + "::")], 6)
    _triage(project, "intended", test=case_of(project, picked[0]))
    _triage(project, "tracked", test=case_of(project, picked[1]), number=1)
    _triage(project, "tracked", backends=["rocm"], match=picked[2], condition="rocm < 7.14",
            number=2)  # fmt: skip
    _triage(project, "intended", match=picked[3], expires_on=EXPIRED_ON)
    removed = [
        _triage(project, "tracked", test=case_of(project, picked[4]), number=3),
        _triage(project, "not_applicable", backends=["rocm"], match=picked[5]),
    ]
    return picked[2:], removed


def _as_model_triage(t: Triage) -> model.Triage:
    return model.Triage(
        id=t.pk, kind=t.kind, created_at=t.created_at, test=t.test_id, reason=t.reason_id,
        match_regex=t.match_regex, backends=frozenset(b.pk for b in t.backends.all()),
        expires_on=t.expires_on, condition=t.condition,
    )  # fmt: skip


def _remove(
    project: Project, triages: list[Triage]
) -> list[tuple[model.Triage, datetime.datetime]]:
    """A maintainer deletes the first and sets the second (a declaration) aside: the removals
    the model counts, each with when parity recorded it."""
    from django.contrib.auth import get_user_model

    from parity.models import ExemptionRemoval
    from parity.services.triage import declaration_override, triages_delete

    maintainer, _ = get_user_model().objects.get_or_create(username="remover")
    gone = [_as_model_triage(t) for t in triages]
    triages_delete(triages=[triages[0]], user=maintainer)
    declaration_override(triage=triages[1], overridden=True, user=maintainer)
    at = dict(ExemptionRemoval.objects.values_list("triage_id", "removed_at"))
    return [(t, at[t.id]) for t in gone]


def _run(project: Project, backend: str, at, rng, n: int, forced: dict | None = None) -> Run:
    """A random run; ``forced``: its results and release instead (a complete run on the
    default branch)."""
    roll = rng.random()
    branch = "feature" if roll < 0.1 and not forced else project.default_branch
    attributes = {"rocm": rng.choice(("7.1", "7.14"))} if backend.startswith("rocm") else {}
    if forced and backend.startswith("rocm"):
        attributes = {"rocm": forced.pop("rocm")}
    run = Run.objects.create(
        project=project,
        backend=backend_of(project, backend),
        key=f"{n}-{backend}",
        commit=f"c{n}",
        branch=branch,
        probe=rng.random() < 0.05 and not forced,
        complete=rng.random() > 0.1 or bool(forced),
        started_at=at,
        attributes=attributes,
    )
    results = forced or _results(rng, reference=backend == "cpu")
    if results:
        results_upload(run, results)
    if backend != "cpu" and rng.random() < 0.6 and not forced:
        files = rng.sample(FILES, rng.randint(1, 2))
        manifest_write(run, *(rng.choice(MANIFEST_ENTRIES)(file) for file in files))
    return run


def _history(project: Project, seed: int, steps: int) -> model.World:
    rng = random.Random(seed)
    _family(project)
    project.history_rules = {"enabled": True}  # states from history are opt-in: on here
    project.save(update_fields=["history_rules"])
    for test in TESTS:
        case_of(project, test)
    ending_tests, to_remove = _triages(project, rng)
    removed = []
    latest: dict[str, datetime.datetime] = {}
    reference_history: list[int] = []
    # The history ends with an upgrade over the conditioned exemption's test: the reference
    # passes it, gfx942 fails it at 7.1 (covered) and still at 7.14 (uncovered); it fails the
    # expired exemption's test and the removed ones' too (uncovered: expired, removed).
    # Before it, tpu flips a test run after run: flaky (states from history), its open gap
    # reported as flaky on every surface; and fails another in each of those runs: broken.
    fails = dict.fromkeys(ending_tests, (Outcome.FAILED, "HIP error"))
    flips = [
        {**dict.fromkeys(TESTS[:4], Outcome.PASSED), BROKEN: Outcome.FAILED, FLIPPING: o}
        for o in FLIP_OUTCOMES
    ]
    ending = [
        ("cpu", dict.fromkeys(TESTS, Outcome.PASSED)),
        *(("tpu", f) for f in flips),
        ("rocm-gfx942", {**fails, "rocm": "7.1"}),
        ("rocm-gfx942", {**fails, "rocm": "7.14"}),
    ]
    for n in range(steps + len(ending)):
        if n == steps // 2:
            removed = _remove(project, to_remove)
        backend = BACKENDS[n % len(BACKENDS)] if n < len(BACKENDS) else rng.choice(BACKENDS)
        forced = None
        if n >= steps:
            backend, forced = ending[n - steps]
            forced = dict(forced)
        at = START + datetime.timedelta(hours=6 * n + rng.choice((-5, -1, 0, 1, 3)))
        at = max(at, latest.get(backend, at) + datetime.timedelta(minutes=1))
        latest[backend] = at
        run = _run(project, backend, at, rng, n, forced)
        if run.complete:
            parity_recompute(run=run)
        now = model.current_run(_world(project, ()), project.reference_backend_id)
        if now is not None and (not reference_history or reference_history[-1] != now.id):
            reference_history.append(now.id)
    world = _world(project, tuple(reference_history))
    backends = Backend.objects.filter(project=project)
    return model.World(
        runs=world.runs,
        tests=world.tests,
        reference=world.reference,
        default_branch=world.default_branch,
        # A declaration set aside applies nowhere: the model has it among the removed.
        triages=tuple(
            model.Triage(
                **{**t.__dict__, "condition": Triage.objects.get(pk=t.id).condition},
            )
            for t in world.triages
            if not Triage.objects.get(pk=t.id).overridden
        ),
        removed=tuple(removed),
        reference_history=world.reference_history,
        family={b.pk: b.family_id for b in backends if b.family_id},
        attributes={b.pk: b.attributes or {} for b in backends},
        run_attributes={r.pk: r.attributes or {} for r in Run.objects.filter(project=project)},
        history_states=bool(project.history_rules.get("enabled")),
    )


# --- The surfaces, each read as backend name -> test key -> model.Standing ----------------------


def _test_api(ctx) -> dict:
    read = defaultdict(dict)
    for test in ctx.tests:
        body = ctx.api.get(f"/api/v1/projects/{ctx.project.slug}/tests/{test.pk}/").json()
        for name, line in body["backends"].items():
            s = line["standing"]
            if not s["outcome"]:
                continue  # no result, no gap: nothing to compare
            read[name][test.key] = model.Standing(
                s["outcome"], "tracked" if s["triage"] == "tracked_closed" else s["triage"],
                s["cause"],
            )  # fmt: skip
            # ``gap`` says the same: a gap of the backend's own, or none.
            assert line["gap"] == (s["outcome"] if s["triage"] else None), (name, test.key)
        for name, line in body["backends"].items():
            state = (line["history_state"] or {}).get("state", "")
            assert state == ctx.history.get((name, test.key), ""), ("test API", name, test.key)
    return read


def _test_page(ctx) -> dict:
    read = defaultdict(dict)
    for test in ctx.tests:
        for line in result_reads.testcase_page(project=ctx.project, test=test).lines:
            state = line.history.state if line.history else ""
            assert state == ctx.history.get((line.backend, test.key), ""), (
                "test page", line.backend, test.key
            )  # fmt: skip
            if line.gap is not None:
                read[line.backend][test.key] = _as_model(line.gap.standing)
            elif line.pending:
                read[line.backend][test.key] = model.Standing("pending")
            elif line.outcome:
                read[line.backend][test.key] = model.Standing(line.outcome)
    return read


def _file_page(ctx) -> dict:
    """Each file's grid: a cell per test and backend, or one line for a backend that ran none
    of its tests (its state when they share one, which the oracle checks against theirs)."""
    read = defaultdict(dict)
    for file in FILES:
        grid = file_grid(project=ctx.project, file=file, per_page=1000)
        # Its header's flaky count per backend: the gaps of the file that read flaky.
        assert grid.flaky == _flaky_per_file(ctx).get(file, {}), ("file page", file)
        for row in grid.rows:
            for cell in row.cells:
                if cell.gap is not None:
                    read[cell.backend][row.key] = _as_model(cell.gap.standing)
                elif cell.pending:
                    read[cell.backend][row.key] = model.Standing("pending")
                elif cell.outcome:
                    read[cell.backend][row.key] = model.Standing(cell.outcome)
        for never in grid.never_ran:
            want = {
                s.cause or s.outcome
                for key, s in ctx.expected.get(never.backend, {}).items()
                if key.startswith(file + "::") and s.outcome not in ("pending",)
            }
            assert never.state == (want.pop() if len(want) == 1 else ""), (never, file)
            for key, s in ctx.expected.get(never.backend, {}).items():
                if key.startswith(file + "::"):
                    read[never.backend][key] = s  # the folded line stands for them
    return read


def _gaps_api(ctx) -> dict:
    """The gaps list: every open gap but declared ones, lost files' included, each with its
    standing; ``?tracked=false`` the untracked."""
    url = f"/api/v1/projects/{ctx.project.slug}/gaps/"
    read = defaultdict(dict)
    for g in _all(ctx.api, url, {}):
        s = g["standing"]
        triage = "tracked" if s["triage"] == "tracked_closed" else s["triage"]
        read[g["backend"]][g["test"]] = model.Standing(s["outcome"], triage, s["cause"])
        # Its other fields say the same; ``history`` is its test's state from history there.
        assert g["state"] == (s["cause"] or s["outcome"]), g
        assert g["tracked"] == (triage == "tracked") or triage == "", g
        assert g["history"] == ctx.history.get((g["backend"], g["test"]), ""), g
    listed = set(read_pairs := [(b, k) for b, tests in read.items() for k in tests])
    assert len(listed) == len(read_pairs)
    for state in ("flaky", "broken"):
        got = {(g["backend"], g["test"]) for g in _all(ctx.api, url, {"history": state})}
        want_state = {pair for pair in listed if ctx.history.get(pair) == state}
        assert got == want_state, f"gaps ?history={state}"
    untracked = _all(ctx.api, url, {"tracked": "false"})
    want = {
        (b, k)
        for b, tests in ctx.expected.items()
        for k, s in tests.items()
        if s.triage == "untracked"
    }
    assert {(g["backend"], g["test"]) for g in untracked} == want, "gaps ?tracked=false"
    return read


def _gaps_csv(ctx) -> dict:
    response = ctx.client.get(f"/p/{ctx.project.slug}/gaps.csv?open=1")
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    read = defaultdict(dict)
    for row in csv.DictReader(io.StringIO(body.decode())):
        assert row["history"] == ctx.history.get((row["backend"], row["test"]), ""), row
        if row["tracking"] == "lost":
            standing = model.Standing("lost", cause=row["state"])
        else:
            standing = model.Standing(row["state"], row["tracking"])
        read[row["backend"]][row["test"]] = standing
    return read


def _all(api, url: str, params: dict) -> list:
    found, offset = [], 0
    while True:
        body = api.get(url, {**params, "limit": 500, "offset": offset}).json()
        found += body["results"]
        if not body.get("next"):
            return found
        offset += 500


SURFACES = {
    "test-detail": _test_api,
    "project-test": _test_page,
    "project-file": _file_page,
    "gap-list": _gaps_api,
    "project-gaps-csv": _gaps_csv,
}
# Surfaces that roll standings up rather than list them: checked by count against the model.
ROLLUPS = ("families", "queue", "snapshots", "verdict", "parity", "webhooks", "digest")
SURFACE_URLS = {
    **{name: "read above" for name in SURFACES},
    "project": "the heatmap: its cells count the snapshots' (checked as 'snapshots')",
    "parity": "per backend untracked, tracked, intended, pending; file cells ('parity')",
    "project-queue": "Left to triage (checked as 'queue')",
    "overview": "families and untracked per backend (checked as 'families', 'snapshots')",
    "overview-data": "the overview's numbers (as 'overview')",
    "run-verdict": "the CI verdict (checked as 'verdict')",
    "project-run": "the run page, the verdict's (checked as 'verdict')",
    "project-gaps": "the gaps page: gaps_list, as the API's (checked as 'gap-list')",
    "digest-preview": "the digest as rendered: uncovered gaps, untracked counts ('digest')",
    "project-webhooks": "webhook deliveries: the untracked_gaps event's payload ('webhooks')",
}
# Every other URL, and why it shows no test's standing (or shows one the oracle reads elsewhere).
NO_STANDING = {
    "favicon": "an icon",
    "project-tests": "the test search: names and ids",
    "project-reasons": "skip reasons and their counts",
    "project-reasons-data": "skip reasons' trend data",
    "project-queue-exempt": "a form post",
    "project-owners": "code owners",
    "project-owners-import": "a form post",
    "project-runs": "runs and their verdict counts (the verdict's)",
    "project-matrix": "pass/fail pairs of backends from bitmaps of outcomes",
    "project-matrix-csv": "the matrix as CSV",
    "project-pair": "two backends' outcomes side by side",
    "project-pair-files": "two backends' outcomes by file",
    "project-pair-tests": "two backends' outcomes by test",
    "project-triage": "a form post",
    "project-file-issue": "an issue draft of a file's untracked gaps (untracked_q)",
    "project-exemptions": "exemptions, lapsed or stale",
    "project-not-applicable": "declarations",
    "project-trend": "each backend's score over time, from its snapshots, and its targets",
    "target-list": "targets: a score and date, their progress counted from the snapshots",
    "target-detail": "removes a target",
    "project-target-remove": "a form post",
    "project-webhooks": "webhook endpoints and their deliveries",
    "project-suites": "suites' run status per backend, from uploads: no test's standing",
    "api-suites": "the suites matrix as JSON, from uploads: no test's standing",
    "project-suites-csv": "the suites matrix as CSV, from uploads: no test's standing "
    "(it agrees with the page and the API: tests/parity/dashboard/test_suites_csv.py)",
    "project-transitions": "version transitions: two runs' outcomes compared, not a standing",
    "project-transition": "one version transition's tests by how their outcome moved",
    "transition-list": "version transitions: two runs' outcomes compared, not a standing",
    "transition-detail": "one version transition's tests by how their outcome moved",
    "project-compare-views": "compare views: their settings",
    "project-compare": "a compare view: two variants' pass rates over days by Fisher's test "
    "(held to the model's counts and scipy's Fisher test by _compare_holds)",
    "project-compare-csv": "a compare view as CSV (held by _compare_holds)",
    "project-compare-settings": "a compare view's settings and their preview",
    "project-compare-delete": "a form post",
    "project-history-settings": "the rules of states from history and their preview (what the "
    "new rules would change, judged by parity.pure.history_states as the engine judges)",
    "compare-list": "compare views: their settings",
    "compare-detail": "a compare view: two variants' pass rates over days by Fisher's test "
    "(held by _compare_holds, page by page)",
    "project-webhook": "a webhook endpoint's form",
    "project-webhook-delete": "a form post",
    "project-webhook-ping": "a form post",
    "project-webhook-secret": "a form post",
    "project-declaration-override": "a form post",
    "project-exemption-delete": "a form post",
    "skip-reason-list": "skip reasons",
    "skip-reason-trend": "skip reasons' trend",
    "test-list": "the test search",
    "triage-list": "triages",
    "triage-detail": "a triage",
    "manifest": "the exemption list CI applies",
    "manifest-resolve": "the exemption list resolved over tests",
    "exemptions-import": "a list import",
    "exemptions-export": "a list export",
    "login": "signing in",
    "logout": "signing out",
    "ci-index": "the CI client's files",
    "ci-file": "a CI client file",
    "schema": "the OpenAPI schema",
    "api-docs": "the API's documentation",
    "digest-unsubscribe": "a form post",
    "oidc-exchange": "a token exchange",
    "run-complete": "marks a run complete",
    "upload-create": "an upload",
    "upload-detail": "an upload's state",
    "parity_rekey_identity": "an admin view of a rekey",
}


def _url_names() -> set[str]:
    """The names of parity's own pages and endpoints (not the admin's, nor sign-in's)."""
    names = set()

    def walk(patterns):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns)
            elif isinstance(p, URLPattern) and p.name:
                module = getattr(p.callback, "__module__", "")
                if module.startswith(("parity.", "ingest.")) and not module.startswith(
                    "parity.admin"
                ):
                    names.add(p.name)

    walk(get_resolver().url_patterns)
    return names


def test_every_url_is_read_or_exempt():
    """A page or endpoint added without a place here fails: read its standings in
    ``SURFACES`` (or as a roll-up), or say in ``NO_STANDING`` why it shows none."""
    unplaced = sorted(_url_names() - set(SURFACE_URLS) - set(NO_STANDING))
    assert unplaced == [], f"URLs the surfaces-agree oracle neither reads nor exempts: {unplaced}"
    assert {"test-detail", "gap-list", "project-file"} <= _url_names()  # the walk finds them


# --- Every page of the history, opened once -----------------------------------------------------

# Endpoints that only take a write (a GET answers 405) or a token no history holds.
POST_ONLY = {
    "project-queue-exempt", "project-owners-import", "project-triage", "project-webhook-delete",
    "project-webhook-ping", "project-webhook-secret", "project-declaration-override",
    "project-exemption-delete", "project-compare-delete", "exemptions-import", "oidc-exchange",
    "run-complete", "upload-create", "logout", "digest-unsubscribe", "triage-detail",
    "manifest-resolve", "target-detail", "project-target-remove",
}  # fmt: skip
# Pages that answer a redirect, and why.
REDIRECTS = {"favicon": "the icon is a static file"}


def _patterns(patterns=None, prefix=""):
    """(name, route) of parity's own pages and endpoints, as ``_url_names`` walks them."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            yield from _patterns(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern) and p.name:
            module = getattr(p.callback, "__module__", "")
            if module.startswith(("parity.", "ingest.")) and not module.startswith("parity.admin"):
                yield p.name, prefix + str(p.pattern)


def _every_page_opens(ctx) -> int:
    """GET every page and read endpoint of the project, each ``<pk>`` a real one of the
    history, each required parameter a valid one: each answers 200."""
    from parity.ci_files import _served
    from parity.models import CompareView, Gap, Reason, Transition, Upload, WebhookEndpoint
    from parity.pure.list_formats import FORMATS
    from tests.parity.dashboard.conftest import member

    project = ctx.project
    hook = WebhookEndpoint.objects.create(project=project, url="https://hooks.example/parity")
    compare = CompareView.objects.get(project=project, name=COMPARE)  # ``_compare_holds``'s
    reason = Reason.objects.filter(project=project).first()
    transition = Transition.objects.filter(project=project).first()
    run = Run.objects.filter(project=project).order_by("-pk").first()
    triage = Triage.objects.filter(project=project).first()
    file, test = FILES[0], ctx.tests[0]
    pks = {
        "project-test": test.pk, "test-detail": test.pk, "project-run": run.pk,
        "run-verdict": run.pk,
        "upload-detail": Upload.objects.filter(run__project=project).values_list("pk").first()[0],
        "triage-detail": triage.pk, "project-webhook": hook.pk,
        "skip-reason-trend": reason and reason.pk,
        "project-transition": transition and transition.pk,
        "transition-detail": transition and transition.pk,
    }  # fmt: skip
    queries = {
        "project-file": {"path": file, "backend": "rocm-gfx942"},
        "project-pair": {"a": "cpu", "b": "tpu"},
        "project-pair-files": {"a": "cpu", "b": "tpu"},
        "project-pair-tests": {"a": "cpu", "b": "tpu"},
        "manifest": {"backend": "rocm-gfx942"},
        "project-file-issue": {
            "gap": Gap.objects.filter(project=project, is_open=True)
            .values_list("pk", flat=True)
            .first()
        },
    }
    client = member(project, "maintainer")  # the webhooks pages are a maintainer's
    opened, wrong = 0, []
    for name, route in _patterns():
        if name in POST_ONLY or route.startswith("admin/"):
            continue  # the admin's rekey page is staff's, behind the admin's own sign-in
        if "<int:pk>" in route and pks.get(name) is None:
            assert name in ("skip-reason-trend", "project-transition", "transition-detail"), name
            continue  # this history has none (a seed without a skip or an upgrade)
        url = "/" + (
            route.replace("<slug:slug>", project.slug)
            .replace("<int:pk>", str(pks.get(name)))
            .replace("<slug:list_format>", next(iter(FORMATS)))
            .replace("<str:name>", next(iter(_served())))
            .replace("<slug:name>", compare.name)
        )
        assert "<" not in url, url  # a new parameter: give it a real value above
        asks = ctx.api if url.startswith("/api/v1/") else client
        response = asks.get(url, queries.get(name, {}))
        if response.status_code != (301 if name in REDIRECTS else 200):
            wrong.append((name, url, response.status_code))
        opened += 1
    assert wrong == [], "pages that do not open"
    return opened


# --- A compare view ---------------------------------------------------------------------------

COMPARE = "tpu-vs-cpu"
# Loose settings, so a short random history has regressed and improved tests, and tests neither.
COMPARE_RULES = {"days": 365, "confidence": 50.0, "tolerance": 0.0, "min_failures": 1}


def _compare_model(ctx) -> dict[str, tuple[str, tuple, tuple, float | None]]:
    """test key -> (state, sample counts, basis counts, p) by the model's counts and Sippy's
    rules written again here, with scipy's Fisher test."""
    from scipy.stats import fisher_exact

    names = {b.name: b.pk for b in Backend.objects.filter(project=ctx.project)}
    since = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=COMPARE_RULES["days"])
    counts = model.compare_counts(ctx.world, sample=names["tpu"], basis=names["cpu"], since=since)
    alpha = 1 - COMPARE_RULES["confidence"] / 100
    judged = {}
    for test, ((sp, sf), (bp, bf)) in counts.items():
        state, p = "no_difference", None
        if sp + sf == 0:
            state = "missing_sample"
        elif bp + bf == 0:
            state = "missing_basis"
        else:
            drop = 100 * bp / (bp + bf) - 100 * sp / (sp + sf)
            table = [[sf, sp], [bf, bp]]
            if drop > COMPARE_RULES["tolerance"] and sf >= COMPARE_RULES["min_failures"]:
                p = fisher_exact(table, alternative="greater")[1]
                if p < alpha:
                    state = "extreme" if drop > 15 else "regressed"
            elif drop < 0:
                p = fisher_exact(table, alternative="less")[1]
                if p < alpha:
                    state = "improved"
        judged[ctx.keys[test]] = (state, (sp, sf), (bp, bf), p)
    return judged


def _compare_holds(ctx, where: str) -> None:
    """A compare view of tpu against cpu, made as a maintainer saves one (which computes it):
    its page, CSV, paged API, the test page and the test API say, per test, the state and
    counts the model's counts and scipy's Fisher test give."""
    from parity.services.compare_views import CompareRequest, compare_view_create
    from tests.parity.dashboard.conftest import member

    project = ctx.project
    view = compare_view_create(
        project=project,
        request=CompareRequest(
            name=COMPARE,
            sample=Backend.objects.get(project=project, name="tpu"),
            basis=Backend.objects.get(project=project, name="cpu"),
            **COMPARE_RULES,
        ),
    )
    want = _compare_model(ctx)
    states = {k: v[0] for k, v in want.items()}
    assert len(set(states.values())) >= 2, f"{where}: a history of one compare state"
    html = member(project, "viewer").get(f"/p/{project.slug}/compare/{COMPARE}/").content.decode()
    ids = {t.pk: t.key for t in ctx.tests}
    page = re.findall(r'<tr data-test="(\d+)" data-state="(\w+)">', html)
    assert {ids[int(t)]: s for t, s in page} == states, f"{where}: the compare page"
    download = ctx.client.get(f"/p/{project.slug}/compare/{COMPARE}.csv")
    lines = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert {
        d["test"]: (
            d["state"], (int(d["sample_passed"]), int(d["sample_failed"])),
            (int(d["basis_passed"]), int(d["basis_failed"])),
        )
        for d in lines
    } == {k: v[:3] for k, v in want.items()}, f"{where}: the compare CSV"  # fmt: skip
    api, url, rows = ctx.api, f"/api/v1/projects/{project.slug}/compare/{COMPARE}/", []
    params = {"limit": 3}
    while url:
        body = api.get(url, params).json()
        rows += body["tests"]
        url, params = body["next"], {}
    assert {
        t["test"]: (t["state"], (t["sample"]["passed"], t["sample"]["failed"]),
                    (t["basis"]["passed"], t["basis"]["failed"]))
        for t in rows
    } == {k: v[:3] for k, v in want.items()}, f"{where}: the compare API, page by page"  # fmt: skip
    assert body["counts"] == {s: list(states.values()).count(s) for s in body["counts"]}
    for t in rows:
        p = want[t["test"]][3]
        assert (t["p"] is None) == (p is None) and (p is None or abs(t["p"] - p) < 1e-9), where
    for test in ctx.tests:
        line = ctx.api.get(f"/api/v1/projects/{project.slug}/tests/{test.pk}/").json()["compare"]
        assert [(c["view"], c["state"]) for c in line] == [(COMPARE, states.get(test.key))], (
            f"{where}: the test API's compare state of {test.key}"
        )
        shown = re.findall(
            r'<tr data-view="([\w-]+)" data-state="(\w*)">',
            ctx.client.get(f"/p/{project.slug}/tests/{test.pk}/").content.decode(),
        )
        assert shown == [(COMPARE, states.get(test.key, ""))], f"{where}: the test page"
    assert view.computed_at is not None
    ctx.read["compare"] = len(want)


# --- The roll-ups --------------------------------------------------------------------------------


def _rollups_hold(ctx, where: str) -> None:
    expected, project = ctx.expected, ctx.project
    rocm = Backend.objects.get(project=project, name="rocm")
    compared = [v for v in VARIANTS if v in expected]
    failing: dict[str, set] = defaultdict(set)
    for variant in compared:
        for key, s in expected[variant].items():
            if s.triage in ("untracked", "tracked", "flaky"):  # scored: intended is not
                failing[key].add(variant)
    by_n = Counter(len(v) for v in failing.values())
    line = families_failing(family_ids=[rocm.pk]).get(rocm.pk)
    if compared:
        assert (line.compared, line.everywhere, line.somewhere) == (
            len(compared), by_n.get(len(compared), 0), len(failing)
        ), f"{where}: the family line"  # fmt: skip
        tests = family_tests(project=project, family="rocm", limit=1000)
        assert {t.test: set(t.failing) for t in tests.tests} == dict(failing), where
    untracked = {
        b: sum(s.triage == "untracked" for s in tests.values()) for b, tests in expected.items()
    }
    # The heatmap's cells (``file_cell_counts``, the roll-up the engine keeps): each counts the
    # gaps of its file and backend that read flaky.
    names = list(Backend.objects.filter(project=project).values_list("name", flat=True))
    cells = file_cell_counts(project=project, names=names)
    got = {
        file: {b: c["flaky"] for b, c in row.items() if c["flaky"]} for file, row in cells.items()
    }
    assert {f: c for f, c in got.items() if c} == _flaky_per_file(ctx), f"{where}: cells' flaky"
    queue = triage_queue(project=project)
    heads = {h.backend: h.untracked for h in queue.headlines}
    assert {b: n for b, n in heads.items() if n} == {b: n for b, n in untracked.items() if n}, (
        f"{where}: Left to triage"
    )
    snapshots = {}
    for backend in Backend.objects.filter(project=project, state__snapshot__isnull=False):
        snap = Snapshot.objects.get(pk=backend.state.snapshot_id)
        snapshots[backend.name] = snap.untracked
    assert {b: n for b, n in snapshots.items() if n} == {b: n for b, n in untracked.items() if n}, (
        f"{where}: the snapshots' untracked"
    )
    # The verdict of each current run: each gap it opened stands as the model says, and the
    # gaps it uncovered (a lapse) are the model's.
    for name, tests in expected.items():
        backend = Backend.objects.get(project=project, name=name)
        verdict = run_verdict(run=backend.state.current_run)
        run = ctx.world.run(backend.state.current_run_id)
        causes = model.uncovered(ctx.world, run, today=ctx.today)
        want = {ctx.keys[t]: cause for t, cause in causes.items()}
        assert {g.test: g.cause for g in verdict.uncovered} == want, (where, name, "uncovered")
        assert {_cause(g.why) for g in verdict.uncovered} <= set(want.values()), (where, name)
        assert verdict.opened["uncovered"] == len(want)
        ctx.uncovered.update(want.values())
        for g in verdict.gaps:
            want = tests[g.test]
            if g.infra:
                assert want.outcome == "lost", (where, name, g.test)
                continue
            triage = "intended" if g.intended else "tracked" if g.tracked else "untracked"
            if triage == "untracked" and g.triage == "flaky":
                triage = "flaky"  # flaky over the window: reported so, not untracked
            assert (g.state, triage) == (want.outcome, want.triage), (where, name, g.test)


def _flaky_per_file(ctx) -> dict[str, dict[str, int]]:
    """Per file, per backend, the model's gaps there that read flaky (none: left out)."""
    found: dict[str, Counter] = defaultdict(Counter)
    for name, tests in ctx.expected.items():
        for key, s in tests.items():
            if s.triage == "flaky":
                found[key.split("::")[0]][name] += 1
    return {file: dict(counts) for file, counts in found.items()}


def _cause(why: str) -> str:
    """The model's word for a surface's why: "expired 2026-12-01" -> expired."""
    if why.startswith("expired"):
        return "expired"
    if why.startswith(("removed", "set aside")):
        return "removed"
    assert why.startswith("condition "), why
    return "lapsed"


def _webhooks_hold(ctx, where: str) -> None:
    """The ``untracked_gaps`` event each backend's current run announces, read from the
    deliveries parity records for an endpoint: the gaps it uncovered (and why) are the model's,
    counted so, and each gap it says the run opened stands untracked in the model."""
    from parity.models import Gap, WebhookDelivery, WebhookEndpoint
    from parity.services.webhooks import notices_after_recompute

    hook = WebhookEndpoint.objects.create(project=ctx.project, url="https://hooks.example/oracle")
    backends = {
        b.name: b for b in Backend.objects.filter(project=ctx.project, name__in=ctx.expected)
    }
    for backend in backends.values():
        notices_after_recompute(run_id=backend.state.current_run_id, backend_ids=[backend.pk])
    bodies = {
        d.notice.payload["backend"]: d.notice.payload
        for d in WebhookDelivery.objects.filter(endpoint=hook, notice__event="untracked_gaps")
        .select_related("notice")
    }  # fmt: skip
    for name, standings in ctx.expected.items():
        run = ctx.world.run(backends[name].state.current_run_id)
        causes = model.uncovered(ctx.world, run, today=ctx.today)
        want = {(ctx.keys[t], cause) for t, cause in causes.items()}
        body = bodies.get(name, {"uncovered": [], "uncovered_total": 0, "opened": []})
        got = {(g["test"], _cause(g["why"])) for g in body["uncovered"]}
        assert got == want, (where, name, "webhook uncovered")
        assert body["uncovered_total"] == len(want), (where, name)
        # Each gap it says the run opened (and still open: announced late here, after later
        # runs, where the live event comes right after the run's recompute) stands untracked.
        still = set(Gap.objects.filter(is_open=True).values_list("pk", flat=True))
        for g in body["opened"]:
            if g["gap"] in still:
                assert standings[g["test"]].triage == "untracked", (where, name, g["test"])
        ctx.read["webhooks"] += 1
    _flaky_webhooks_hold(ctx, where)


def _flaky_webhooks_hold(ctx, where: str) -> None:
    """The ``flaky_tests`` event of every run that became its backend's current run: sent
    once, for those (only those) that moved a test into or out of flaky in the model, listing
    them, most surely flaky first. (The current runs' were announced above already.)"""
    from parity.models import WebhookNotice
    from parity.services.webhooks import notices_after_recompute

    moves = model.flaky_moves(ctx.world)
    for run in ctx.world.runs:
        if run.complete:
            notices_after_recompute(run_id=run.id, backend_ids=[run.backend])
    notices = WebhookNotice.objects.filter(project=ctx.project, event="flaky_tests")
    bodies = {n.payload["run"]["id"]: n.payload for n in notices}
    assert len(bodies) == notices.count(), (where, "flaky_tests once per run")
    assert set(bodies) == set(moves), (where, "flaky_tests runs")
    for run_id, (entered, left) in moves.items():
        body = bodies[run_id]
        ranked = sorted(entered, key=lambda t: (-entered[t], ctx.keys[t]))
        assert [i["test"] for i in body["entered"]] == [ctx.keys[t] for t in ranked], where
        assert {i["test"] for i in body["left"]} == {ctx.keys[t] for t in left}, where
        assert (body["entered_total"], body["left_total"]) == (len(entered), len(left)), where
        ctx.read["flaky webhooks"] += 1


_DIGEST_UNCOVERED = re.compile(r"^  - (\S+): (\S+) \((\w+); (.+)\)$")
_DIGEST_SCORE = re.compile(r"^  (\S+) .* (\d+) open gaps?, (\d+) untracked$")


def _digest_holds(ctx, where: str) -> None:
    """The weekly digest of each week of the history, rendered and parsed: its uncovered gaps
    (and why, and the count its summary gives) are those the model says the week's runs
    uncovered; and the last week's score lines count each backend's untracked gaps as the
    model's standings do."""
    from parity.digest.render import digest_render
    from parity.pure.weeks import Week
    from parity.result_reads.week_uncovered import week_uncovered
    from parity.selectors.digest import digest_content

    names = {b.pk: b.name for b in Backend.objects.filter(project=ctx.project)}
    runs = sorted(
        (
            r for r in ctx.world.runs
            if r.complete and model.may_be_current(r, ctx.world.default_branch)
            and r.backend != ctx.world.reference
        ),
        key=lambda r: (r.started_at, r.id),
    )  # fmt: skip
    weeks = sorted({Week.of(r.started_at) for r in runs})
    for week in weeks:
        want = {}
        for run in (r for r in runs if Week.of(r.started_at) == week):
            for test, cause in model.uncovered(ctx.world, run, today=ctx.today).items():
                want[(names[run.backend], ctx.keys[test])] = cause
        content = digest_content(
            project=ctx.project, week=week, uncovered=week_uncovered(project=ctx.project, week=week)
        )
        rendered = digest_render(content)
        lines = rendered.text.splitlines()
        got = {}
        if want:
            start = lines.index(next(line for line in lines if line.startswith("UNCOVERED (")))
            for line in lines[start + 1 :]:
                if not line.strip():
                    break
                if m := _DIGEST_UNCOVERED.match(line):
                    got[(m[1], m[2])] = _cause(m[4])
            assert f"{len(want)} uncovered" in rendered.subject, (where, week)
        else:
            assert "UNCOVERED (" not in rendered.text, (where, week)
        assert got == want, (where, str(week), "digest uncovered")
    _digest_flaky_holds(ctx, where, weeks, names)
    untracked = {
        b: sum(s.triage == "untracked" for s in tests.values()) for b, tests in ctx.expected.items()
    }
    scores = {
        m[1]: int(m[3])
        for line in rendered.text.splitlines()
        if (m := _DIGEST_SCORE.match(line))
    }  # fmt: skip
    for name, n in untracked.items():
        assert scores.get(name, 0) == n, (where, name, "digest's untracked")
    ctx.read["digest"] += len(weeks)


_DIGEST_FLAKY = re.compile(r"^  (\S+): (\d+) tests? entered flaky, (\d+) left$")
_DIGEST_FLAKY_TEST = re.compile(r"^    - (\S+) \(fails at least (\d+)%\)$")


def _digest_flaky_holds(ctx, where: str, weeks, names: dict) -> None:
    """Each week's FLAKY section: per backend, the tests the model says entered flaky in the
    week's runs (most surely flaky first, at the rank they entered with) and how many left."""
    from parity.digest.render import digest_render
    from parity.pure.weeks import Week
    from parity.selectors.digest import digest_content

    moves = model.flaky_moves(ctx.world)
    for week in weeks:
        entered: dict[str, dict[int, float]] = defaultdict(dict)
        left: dict[str, set] = defaultdict(set)
        for run_id, (came, went) in moves.items():
            run = ctx.world.run(run_id)
            if Week.of(run.started_at) != week:
                continue
            name = names[run.backend]
            for test, rank in came.items():
                entered[name][test] = max(rank, entered[name].get(test, 0.0))
            left[name] |= went
        want = {}
        for name in set(entered) | set(left):
            ranked = sorted(entered[name], key=lambda t: (-entered[name][t], ctx.keys[t]))
            want[name] = (
                len(ranked), len(left[name]),
                [(ctx.keys[t], f"{entered[name][t] * 100:.0f}") for t in ranked],
            )  # fmt: skip
        text = digest_render(digest_content(project=ctx.project, week=week)).text
        got, backend = {}, None
        for line in text.splitlines():
            if m := _DIGEST_FLAKY.match(line):
                backend = m[1]
                got[backend] = (int(m[2]), int(m[3]), [])
            elif backend and (m := _DIGEST_FLAKY_TEST.match(line)):
                got[backend][2].append((m[1], m[2]))
            elif not line.startswith("    "):
                backend = None
        assert got == want, (where, str(week), "digest flaky")
        assert ("FLAKY (" in text) == bool(want), (where, str(week))
        ctx.read["flaky digest"] += bool(want)


def _parity_api_holds(ctx, where: str) -> None:
    """The parity API's (and the overview's) numbers per backend: its untracked, tracked and
    intended gaps, and its pending tests, are the model's standings counted; and its file
    cells (the heatmap's) count the model's outcomes per file."""
    # The heatmap's cells (the API's ``files``) count each file's tests by their outcome in
    # the current run: the model's outcomes, but for tests declared not applicable or lost to
    # infrastructure, which a cell counts by what the run did (missing, skipped ...).
    rows = ctx.api.get(f"/api/v1/projects/{ctx.project.slug}/parity/").json()["files"]
    cells = {(r["file"], b): c for r in rows for b, c in r["cells"].items()}
    for name, want in ctx.expected.items():
        per_file = defaultdict(Counter)
        for key, st in want.items():
            # A held gap (failed · flaky) of a test its current run passed: the cell counts the
            # run's pass.
            outcome = "passed" if (name, key) in ctx.held else st.outcome
            per_file[key.split("::")[0]][outcome] += 1
        for file, count in per_file.items():
            cell = dict(cells[(file, name)])
            # Of its gaps, those that read flaky (the cell's marker): not an outcome.
            assert cell.pop("flaky") == _flaky_per_file(ctx).get(file, {}).get(name, 0), (
                where, name, file, "flaky"
            )  # fmt: skip
            aside = count["not_applicable"] + count["lost"]
            assert sum(cell.values()) == sum(count.values()), (where, name, file, "cell")
            excess = {o: cell[o] - count[o] for o in cell}
            assert min(excess.values()) >= 0 and sum(excess.values()) == aside, (
                where, name, file, cell, dict(count),
            )  # fmt: skip
    body = ctx.api.get(f"/api/v1/projects/{ctx.project.slug}/parity/", {"files": "false"})
    assert body.status_code == 200
    for line in body.json()["backends"]:
        want = ctx.expected.get(line["backend"])
        if want is None:
            continue  # the reference, or no current run
        count = Counter(s.triage for s in want.values())
        got = {
            "untracked": line["untracked"],
            "tracked": line["tracked"] + line["tracked_closed"],
            "intended": line["intended"],
            "pending": line["pending"],
        }
        pending = sum(s.outcome == "pending" for s in want.values())
        assert got == {
            "untracked": count["untracked"], "tracked": count["tracked"],
            "intended": count["intended"], "pending": pending,
        }, (where, line["backend"])  # fmt: skip


# --- The oracle -----------------------------------------------------------------------------------


def _suites_fold(ctx, where: str) -> None:
    """A suite never run on a backend is one row of the gaps lists (docs/suites.md): the
    reference's current run names its suite ``main`` (its engine row kept as a recompute keeps
    it), the map names it, and tpu has a run of it under way now (pending: it runs there), so
    the variants' missing gaps of it fold and tpu's do not. The gaps API and CSV list every gap
    the model does not fold, one row per suite and backend it folds with their count, and
    ``?suite=`` lists the folded ones."""
    project, now = ctx.project, datetime.datetime.now(datetime.UTC)
    reference = BackendState.objects.get(backend_id=project.reference_backend_id).current_run
    Upload.objects.filter(run=reference).update(suite="main")
    reference_suites_write(project_id=project.pk, run_id=reference.pk)
    Suite.objects.create(project=project, name="main")
    tpu = backend_of(project, "tpu")
    started = now - datetime.timedelta(hours=1)
    pending = Run.objects.create(
        project=project, backend=tpu, key="suite-main", commit="cz", started_at=started
    )
    Upload.objects.create(run=pending, sha256="0" * 64, size=0, suite="main")
    tests = model.outcomes(ctx.world.run(reference.pk))
    world = dataclasses.replace(
        ctx.world,
        runs=(*ctx.world.runs, model.Run(pending.pk, tpu.pk, started, complete=False)),
        test_suites={reference.pk: dict.fromkeys(tests, "main")},
        run_suites={reference.pk: frozenset({"main"}), pending.pk: frozenset({"main"})},
        mapped_suites=frozenset({"main"}),
    )
    names = {b.pk: b.name for b in Backend.objects.filter(project=project)}
    folds = {
        (suite, names[b]): {ctx.keys[t] for t in tests}
        for b, suites in model.folded(world, now=now, today=ctx.today).items()
        for suite, tests in suites.items()
    }
    assert folds and not any(b == "tpu" for _, b in folds), f"{where}: {folds}"
    url = f"/api/v1/projects/{project.slug}/gaps/"
    body = ctx.api.get(url, {"limit": 1}).json()
    assert {(r["suite"], r["backend"]): r["missing"] for r in body["suites"]} == {
        k: len(v) for k, v in folds.items()
    }, f"{where}: gaps API suites"
    listed = {(g["backend"], g["test"]) for g in _all(ctx.api, url, {})}
    csv_rows = list(csv.DictReader(io.StringIO(_csv_text(ctx))))
    in_csv = {(r["backend"], r["test"]) for r in csv_rows if r["test"]}
    assert {(r["suite"], r["backend"]): r["reason"] for r in csv_rows if not r["test"]} == {
        k: f"{len(v)} test{'' if len(v) == 1 else 's'} missing" for k, v in folds.items()
    }, f"{where}: gaps CSV suites"
    for backend, want in ctx.expected.items():
        gaps = {k for k, s in want.items() if s.triage or s.outcome == "lost"}
        gone = set().union(*(v for (_, b), v in folds.items() if b == backend))
        for surface, found in (("gaps API", listed), ("gaps CSV", in_csv)):
            mine = {k for b, k in found if b == backend}
            assert mine == gaps - gone, f"{where}: {surface} on {backend}, folded"
    for (suite, backend), tests in folds.items():
        query = {"suite": suite, "backend": backend, "state": "missing"}
        assert {g["test"] for g in _all(ctx.api, url, query)} == tests, f"{where}: ?suite="


def _csv_text(ctx) -> str:
    response = ctx.client.get(f"/p/{ctx.project.slug}/gaps.csv?open=1")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return body.decode()


class _Ctx:
    def __init__(self, project, api, client, expected, tests, world, keys, today):
        self.project, self.api, self.client = project, api, client
        self.expected, self.tests = expected, tests
        self.world, self.keys, self.today = world, keys, today
        # The model's held gaps (``model.held``): (backend name, test key).
        names = {b.pk: b.name for b in Backend.objects.filter(project=project)}
        self.held = {(names[b], keys[t]) for b, t in model.held(world)}
        self.uncovered: Counter = Counter()  # the verdicts' uncovered gaps, by cause
        self.read: Counter = Counter()
        self.history: dict[tuple[str, str], str] = {}  # (backend, test) -> flaky or broken


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(4))
def test_every_surface_says_what_the_rules_model_says(project, api, client, seed):
    world = _history(project, seed, steps=16)
    today = datetime.datetime.now(datetime.UTC).date()
    names = {b.pk: b.name for b in Backend.objects.filter(project=project)}
    keys = {pk: key for pk, (key, _file) in world.tests.items()}
    expected = {
        names[b]: {keys[t]: s for t, s in tests.items()}
        for b, tests in model.standings(world, today=today).items()
    }
    # The model's pending tests are the engine's (held by test_rules_model too).
    pending = PendingTest.objects.values_list("backend_id", "test_id")
    assert {(names[b], keys[t]) for b, t in pending} == {
        (b, k) for b, tests in expected.items() for k, s in tests.items() if s.outcome == "pending"
    }
    tests = list(TestCase.objects.filter(project=project).order_by("key"))
    ctx = _Ctx(project, api, client, expected, tests, world, keys, today)
    ctx.history = {
        (names[b], keys[t]): state for (b, t), state in model.history_states(world).items()
    }
    for surface, read in SURFACES.items():
        found = read(ctx)
        for backend, want in expected.items():
            got = found.get(backend, {})
            if surface in ("gap-list", "project-gaps-csv"):
                # A list holds the open gaps but declared ones (and no reference_missing).
                want = {
                    k: s for k, s in want.items()
                    if s.triage or s.outcome == "lost"
                }  # fmt: skip
            assert got == want, f"seed {seed}: {surface} on {backend}"
    _rollups_hold(ctx, f"seed {seed}")
    _webhooks_hold(ctx, f"seed {seed}")
    _digest_holds(ctx, f"seed {seed}")
    _parity_api_holds(ctx, f"seed {seed}")
    _compare_holds(ctx, f"seed {seed}")
    assert _every_page_opens(ctx) >= 40
    _suites_fold(ctx, f"seed {seed}")  # last: it names suites the surfaces above did not read
    # The ending's upgrade, expired and removed exemptions, at least; both surfaces read.
    assert {"lapsed", "expired", "removed"} <= set(ctx.uncovered), ctx.uncovered
    assert ctx.read["webhooks"] == len(expected) and ctx.read["digest"] >= 1
    # The ending's flipping test on tpu, at least, reads flaky (unless triaged by the seed),
    # its gap held open though its current run passes it.
    assert any(s.triage == "flaky" for tests in expected.values() for s in tests.values())
    assert ("tpu", FLIPPING) in ctx.held, "the flipping test's gap is held"
    # Its entering flaky was announced (a webhook) and digested (its week's section), at least.
    assert ctx.read["flaky webhooks"] >= 1 and ctx.read["flaky digest"] >= 1, ctx.read
    assert ctx.history.get(("tpu", BROKEN)) == "broken", ctx.history
    assert Snapshot.objects.exists() and GapState.MISSING
