"""A check run on a run's commit, posted by parity as a GitHub App (docs/check-runs.md): the
verdict's conclusion and counts, its first untracked gaps and a link to the run's page. The
server posts it, so it reaches pull requests from forks, whose workflow tokens cannot write
checks.

Which repository: the one the project files issues in (its issue URL template, on github.com
or a GitHub Enterprise host in ``PARITY_TRACKER_API_URLS``). No App configured, or a project
without a GitHub template: no check run."""

import logging

from django.conf import settings
from django.urls import reverse

from parity.models import Project, Run
from parity.result_reads.verdict import Verdict, run_verdict
from parity.trackers import api_url, repo_address
from parity.trackers.base import RepoAddress
from parity.trackers.github_app import GitHubApp, private_key

logger = logging.getLogger(__name__)

# Untracked gaps the check's text lists; its summary counts them all.
GAPS_LISTED = 20


def check_runs_repo(project: Project) -> RepoAddress | None:
    """Where the project's check runs go, or None when it gets none."""
    if not (settings.PARITY_GITHUB_APP_ID and settings.PARITY_GITHUB_APP_PRIVATE_KEY):
        return None
    repo = repo_address(project.issue_url_template)
    return repo if repo and repo.tracker == "github" else None


def conclusion(verdict: Verdict) -> str:
    """failure: the gate fails (an untracked gap, a coverage drop). neutral: a probe run (never
    a gate), or a run infrastructure broke (crashed, timed-out or failed shards) with nothing
    else wrong: rerun them before reading it. success otherwise."""
    if verdict.probe:
        return "neutral"
    if not verdict.ok:
        return "failure" if verdict.gates else "neutral"  # an informing suite reports
    return "success" if verdict.healthy else "neutral"


def _title(verdict: Verdict, outcome: str) -> str:
    untracked = verdict.opened["untracked"]
    if verdict.probe:
        return "Probe run: not a gate"
    if not verdict.gates and not verdict.ok:
        tiers = ", ".join(f"{s.name} {s.tier}" for s in verdict.suites)
        return f"Reports only (suite {tiers}): {untracked} untracked"
    if untracked:
        return f"{untracked} untracked gap{'s' if untracked != 1 else ''}"
    if verdict.coverage_drop:
        return "Coverage dropped"
    if outcome == "neutral":
        return f"Rerun {len(verdict.rerun.shards)} shard(s): infrastructure failed"
    return "No untracked gaps"


def check_run_payload(verdict: Verdict, *, commit: str, run_url: str) -> dict:
    outcome = conclusion(verdict)
    opened = verdict.opened
    summary = [
        f"**{verdict.test_count}** tests on **{verdict.backend}**"
        + ("" if verdict.baseline_run else " (first run: no baseline)"),
        "",
        "| Opened gaps | |",
        "|---|---|",
        f"| untracked | {opened['untracked']} |",
        f"| tracked | {opened['tracked']} |",
        f"| intended | {opened['intended']} |",
        f"| infrastructure (rerun) | {opened['infra']} |",
        f"| closed | {verdict.closed} |",
        "",
    ]
    if verdict.coverage_drop:
        summary.append(
            f"The run has more than {settings.PARITY_COVERAGE_DROP_PERCENT}% fewer tests "
            f"than the baseline ({verdict.baseline_test_count})."
        )
    summary.append(f"[The run on parity]({run_url})")
    untracked = [g for g in verdict.gaps if not g.tracked and not g.intended and not g.infra]
    text = []
    if untracked:
        text.append("### Untracked gaps")
        text.append("")
        for g in untracked[:GAPS_LISTED]:
            reason = f": {g.reason}" if g.reason else ""
            text.append(f"- `{g.test}` {g.state}{reason}")
        if opened["untracked"] > GAPS_LISTED:
            text.append(f"- ... and {opened['untracked'] - GAPS_LISTED} more on the run's page")
    if verdict.unrun_files:
        text += ["", "### Files infrastructure lost", ""]
        text += [f"- `{f.file}` {f.state} {f.status}".rstrip() for f in verdict.unrun_files[:20]]
    return {
        "name": f"parity: {verdict.backend}",
        "head_sha": commit,
        "status": "completed",
        "conclusion": outcome,
        "details_url": run_url,
        "external_id": str(verdict.run),
        "output": {
            "title": _title(verdict, outcome),
            "summary": "\n".join(summary),
            "text": "\n".join(text).strip(),
        },
    }


def check_run_post(*, run_id: int) -> str:
    """Post the run's check run; its page's URL ('' when the run gets none). Raises
    ``TrackerUnavailable`` or ``RateLimited`` (worth another attempt) and ``CheckRunRefused``
    (not)."""
    run = Run.objects.select_related("project", "backend").filter(pk=run_id).first()
    if run is None or not run.complete or not run.commit:
        return ""
    repo = check_runs_repo(run.project)
    if repo is None:
        return ""
    # Only untracked gaps are listed: the first GAPS_LISTED of them come first in CI's order.
    verdict = run_verdict(run=run, gaps_limit=GAPS_LISTED)
    path = reverse("project-run", kwargs={"slug": run.project.slug, "pk": run.pk})
    payload = check_run_payload(verdict, commit=run.commit, run_url=f"{settings.SITE_URL}{path}")
    app = GitHubApp(
        host=repo.host,
        api_url=api_url("github", repo.host),
        app_id=settings.PARITY_GITHUB_APP_ID,
        key=private_key(settings.PARITY_GITHUB_APP_PRIVATE_KEY),
        timeout=settings.PARITY_TRACKER_TIMEOUT_SECONDS,
    )
    url = app.check_run_create(repo.repo, payload)
    logger.info("check run for run %s posted on %s: %s", run.pk, repo.repo, payload["conclusion"])
    return url
