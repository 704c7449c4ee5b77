"""A digest as an email: subject, plain-text and HTML parts (``templates/digest/``), headers.

The templates get display-ready strings (percentages, changes, dates) from here, so the text
and HTML parts say exactly the same thing.
"""

import datetime
import re
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from parity.digest.links import (
    compare_url,
    dashboard_links,
    suite_gaps_url,
    suites_url,
    target_url,
    transition_url,
)
from parity.pure.compare import CompareState
from parity.pure.skip_rules import DISPOSITION_NAMES
from parity.selectors.classification import CategoryCount
from parity.selectors.compare_views import CompareHeadline
from parity.selectors.digest import (
    ClosedTracking,
    DigestContent,
    DigestTransition,
    FlakyWeek,
    PassingExemptions,
    ScoreRow,
)


@dataclass(frozen=True)
class RenderedDigest:
    subject: str
    text: str
    html: str


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def percent(score: float | None) -> str:
    return "n/a" if score is None else f"{score * 100:.1f}%"


def change(row: ScoreRow) -> str:
    """The score's move over the week, in percentage points."""
    if row.score is None:
        return "no run yet"
    if row.change is None:
        return "first run"
    points = row.change * 100
    if abs(points) < 0.05:
        return "no change"
    return f"{points:+.1f} pts"


def summary(content: DigestContent) -> str:
    if content.quiet:
        return "quiet week"
    untracked = sum(g.untracked for b in content.new_gaps for g in b.groups)
    parts = []
    if content.new_total:
        parts.append(plural(content.new_total, "new gap") + f" ({untracked} untracked)")
    if content.unrun_suites:  # one each, however many tests it holds
        parts.append(plural(len(content.unrun_suites), "suite") + " never run")
    if content.fixed_total:
        parts.append(f"{content.fixed_total} fixed")
    if content.new_reasons:
        parts.append(plural(len(content.new_reasons), "new skip reason"))
    if content.link_changes:
        parts.append(plural(len(content.link_changes), "issue link change"))
    if content.transitions:
        parts.append(plural(len(content.transitions), "version transition"))
    if content.targets_at_risk:
        parts.append(plural(len(content.targets_at_risk), "target") + " at risk")
    if content.uncovered:
        parts.append(f"{len(content.uncovered)} uncovered")
    if entered := sum(f.entered_total for f in content.flaky):
        parts.append(f"{entered} entered flaky")
    if content.tier_moves:
        parts.append(plural(len(content.tier_moves), "suite tier move"))
    if content.compare_views:
        parts.append(plural(len(content.compare_views), "compare view") + " with regressions")
    return ", ".join(parts)


def subject(content: DigestContent) -> str:
    scopes = [", ".join(content.backends)] if content.backends else []
    if content.owner:
        scopes.append(f"{content.owner}'s gaps")
    scope = f" ({'; '.join(scopes)})" if scopes else ""
    return f"[parity] {content.project}{scope} {content.week}: {summary(content)}"


def scope(content: DigestContent) -> str:
    """What the digest is narrowed to, after the project's name: " (tpu): @alice's gaps"."""
    text = f" ({', '.join(content.backends)})" if content.backends else ""
    return text + (f": {content.owner}'s gaps" if content.owner else "")


def week_dates(content: DigestContent) -> str:
    monday, sunday = content.week.monday, content.week.sunday
    return f"{monday.day} {monday:%b} to {sunday.day} {sunday:%b %Y}"


def day(moment: datetime.datetime | None) -> str:
    return f"{moment.day} {moment:%b %Y}" if moment else ""


def closed_headline(row: ClosedTracking) -> str:
    """The line of a backend's gaps tracked by closed issues, e.g. "5 tpu skips cite issues
    closed since 2 Mar 2026"."""
    what = f"{row.total} {row.backend} {row.noun}"
    verb = "cites" if row.total == 1 else "cite"
    if row.since is None:
        return f"{what} {verb} only closed issues"
    return f"{what} {verb} issues closed since {day(row.since)}"


def passes_now_headline(row: PassingExemptions) -> str:
    """E.g. "3 tpu exemptions pass now: remove them"."""
    if row.total == 1:
        return f"1 {row.backend} exemption passes now: remove it"
    return f"{row.total} {row.backend} exemptions pass now: remove them"


def transition_headline(row: DigestTransition) -> str:
    """E.g. "rocm-gfx942: rocm 7.1 → 7.14: Fail→Pass 1,366, Pass→Fail 220, new 12, gone 3"."""
    changed = ", ".join(
        f"{key} {before or '(none)'} → {after or '(none)'}" for key, before, after in row.changed
    )
    c = row.counts
    line = (
        f"{row.backend}: {changed}: Fail→Pass {c['fail_to_pass']:,}, "
        f"Pass→Fail {c['pass_to_fail']:,}, new {c['new']:,}, gone {c['gone']:,}"
    )
    if row.lapses:
        line += f"; {plural(row.lapses, 'exemption')} stopped or started holding"
    return line


def target_headline(row) -> str:
    """E.g. "tpu: 90 % by 2027-03-01: forecast 2027-04-02 (12 a day), 410 tests to go" or
    "...: no progress, 410 tests to go" (a ``selectors.TargetProgress`` at risk)."""
    target, result = row.target, row.forecast
    when = (
        "no progress"
        if result.no_progress
        else f"forecast {result.on.isoformat()} ({result.rate:,.1f} a day)"
    )
    return (
        f"{row.backend}: {percent(target.score)} by {target.due.isoformat()}: {when}, "
        f"{plural(result.remaining, 'test')} to go"
    )


def category_line(row: CategoryCount) -> str:
    """E.g. "needs more devices [infra]: 91 skipped, 3 gaps, 3 untracked"."""
    where = f"{row.label} [{DISPOSITION_NAMES.get(row.disposition, row.disposition)}]"
    gaps = f"{row.gaps:,} gap{'' if row.gaps == 1 else 's'}"
    return f"{where}: {row.tests:,} skipped, {gaps}, {row.untracked:,} untracked"


def unrun_line(suite) -> str:
    """A suite never run on a backend as the digest's one line for its tests."""
    where = (
        f"is excluded on {suite.backend} ({suite.reason})"
        if suite.status == "excluded"
        else f"never ran on {suite.backend}"
    )
    return f"suite {suite.suite} {where}: {suite.missing:,} tests missing"


def no_run(row: ScoreRow) -> str:
    """What a backend with no score this week says instead ("" when it has one)."""
    if row.score is not None:
        return ""
    if row.variants:
        return f"a family, no run of its own: its variants {', '.join(row.variants)}"
    return "no run yet"


def flaky_headline(row: FlakyWeek) -> str:
    """A backend's line of the flaky section: "tpu: 3 tests entered flaky, 1 left"."""
    return (
        f"{row.backend}: {plural(row.entered_total, 'test')} entered flaky, {row.left_total} left"
    )


def digest_context(content: DigestContent, *, unsubscribe_url: str | None) -> dict:
    """What the templates read: the content and its display strings."""
    width = max([len(s.backend) for s in content.scores] + [len("backend")])
    return {
        "c": content,
        # The dashboard's pages, absolute: the selector reads, the digest says where to look.
        "links": dashboard_links(
            slug=content.project, week=content.week, backends=content.backends, owner=content.owner
        ),
        "summary": summary(content),
        "unrun_suites": [
            {
                "line": unrun_line(u),
                "url": suite_gaps_url(slug=content.project, suite=u.suite, backend=u.backend),
            }
            for u in content.unrun_suites
        ],
        "scope": scope(content),
        "dates": week_dates(content),
        "scores_title": (
            f"{content.score_definition.title} against {content.reference} "
            f"(the reference backend; {content.score_definition.decisions})"
        ),
        "scores": [
            {
                "row": row,
                "no_run": no_run(row),
                "score": percent(row.score),
                "change": change(row),
                "backend": row.backend.ljust(width),
                "gaps": f"{plural(row.open_gaps, 'open gap')}, {row.untracked} untracked",
            }
            for row in content.scores
        ],
        "closed_tracking": [
            {
                "row": row,
                "headline": closed_headline(row),
                "issues": [(entry, day(entry.issue.closed_at)) for entry in row.issues],
            }
            for row in content.closed_tracking
        ],
        "passes_now": [
            {"row": row, "headline": passes_now_headline(row), "probed": day(row.probed_at)}
            for row in content.passes_now
        ],
        "category_lines": [category_line(row) for row in content.skip_categories],
        "transitions": [
            {
                "headline": transition_headline(row),
                "day": day(row.at),
                "url": transition_url(slug=content.project, pk=row.id),
            }
            for row in content.transitions
        ],
        "targets_at_risk": [
            {
                "headline": target_headline(row),
                "url": target_url(slug=content.project, backend=row.backend),
            }
            for row in content.targets_at_risk
        ],
        "flaky": [
            {
                "row": row,
                "headline": flaky_headline(row),
                "tests": [(t, f"{t.rank * 100:.0f}%") for t in row.entered],
            }
            for row in content.flaky
        ],
        "tier_moves": [
            {
                "headline": f"{row.backend}: {row.suite} {row.move} ({row.before} → {row.after})",
                "day": day(row.at),
            }
            for row in content.tier_moves
        ],
        "suites_url": suites_url(slug=content.project),
        "compare_views": [
            {
                "headline": compare_headline(row),
                "url": compare_url(slug=content.project, name=row.view.name),
            }
            for row in content.compare_views
        ],
        "unsubscribe_url": unsubscribe_url,
    }


def compare_headline(row: CompareHeadline) -> str:
    """A compare view's line: its variants, window and red tests, as its overview headline."""
    view, counts = row.view, row.counts
    return (
        f"{view.name}: {view.sample.name} vs {view.basis.name} over {view.days} days, "
        f"{plural(row.red, 'test')} regressed ({counts[CompareState.EXTREME]} extreme)"
    )


def _tidy(text: str) -> str:
    # Block tags on their own lines leave blank lines and trailing spaces behind; a text part
    # reads best with single blank lines between sections.
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def digest_render(content: DigestContent, *, unsubscribe_url: str | None = None) -> RenderedDigest:
    context = digest_context(content, unsubscribe_url=unsubscribe_url)
    return RenderedDigest(
        subject=subject(content),
        text=_tidy(render_to_string("digest/email.txt", context)),
        html=render_to_string("digest/email.html", context),
    )


def digest_message(
    rendered: RenderedDigest, *, to: str, unsubscribe_url: str, message_id: str
) -> EmailMultiAlternatives:
    """The email of one delivery. ``List-Unsubscribe`` with ``List-Unsubscribe-Post`` lets
    mail clients unsubscribe in one click (RFC 8058: a POST to the same link)."""
    message = EmailMultiAlternatives(
        subject=rendered.subject,
        body=rendered.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        headers={
            "Message-ID": message_id,
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
        },
    )
    message.attach_alternative(rendered.html, "text/html")
    return message
