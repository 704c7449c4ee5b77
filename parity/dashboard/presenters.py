"""How the dashboard shows what the selectors answer: issue labels, the heatmap's colour bins,
hover texts and labels, outcome symbols. Display decisions only; no queries. Templates reach
them through ``parity.templatetags.parity_display``."""

import datetime
import hashlib
import re
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from parity.models import Gap, ProbeOutcome, Triage
from parity.pure.globs import is_file_level
from parity.pure.normalize import display_id, is_expected_failure, suite_of
from parity.pure.skip_rules import DISPOSITION_NAMES
from parity.pure.suite_runs import STATUS_LABELS as SUITE_STATUS_LABELS
from parity.pure.web_urls import web_url_or_empty
from parity.selectors import IssueInfo, issue_infos
from parity.selectors.heatmap import CellCounts, Heatmap, HeatRow

# --- Issues ---------------------------------------------------------------------------------

_GITHUB = re.compile(r"^https?://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull)/(\d+)")


TITLE_CHARS = 60  # of an issue's title in its label; the whole title is its hover text


@dataclass(frozen=True)
class IssueLink:
    label: str  # "pytorch/xla#9017 XLA does not support complex64 (open)"
    url: str  # empty for a bare key (``b/123456``) the project has no URL for
    state: str = "unknown"  # open, closed or unknown (not read from its tracker): a CSS class
    title: str = ""  # the whole title


def _short(url_or_key: str) -> str:
    """``pytorch/xla#4298`` for a GitHub URL, else the key, or the URL without its scheme."""
    match = _GITHUB.match(url_or_key)
    if match:
        return f"{match[1]}#{match[2]}"
    if url_or_key.startswith(("http://", "https://")):
        short = url_or_key.split("://", 1)[1]
        return short if len(short) <= 40 else short[:39] + "…"
    return url_or_key


def issue_link(issue: IssueInfo | str) -> IssueLink:
    """An issue as a link: its number, its title as the tracker last said, and its state, so
    ``#9017`` reads "#9017 XLA does not support complex64 (open)". A bare URL or key (what
    ``issue_urls`` gives) has neither title nor state."""
    if isinstance(issue, str):
        return IssueLink(label=_short(issue), url=web_url_or_empty(issue))
    short = _short(issue.key if "://" not in issue.key else issue.url or issue.key)
    parts = [short]
    if issue.title:
        title = issue.title
        parts.append(title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…")
    if issue.state != "unknown":
        parts.append(f"({issue.state})")
    # Only an http(s) URL is a link, whatever a row stored before the rule held (a script's
    # ``javascript:`` URL reads as text).
    url = web_url_or_empty(issue.url)
    return IssueLink(label=" ".join(parts), url=url, state=issue.state, title=issue.title)


def issue_links(issues: list[IssueInfo | str]) -> list[IssueLink]:
    return [issue_link(issue) for issue in issues]


def gap_issue_links(gap: Gap) -> list[IssueLink]:
    """A gap row's issues: its reason's, then its triage's (prefetched by ``gaps_page``)."""
    return issue_links(issue_infos(reason=gap.reason, triage=gap.triage))


# --- Exemptions (triages) -------------------------------------------------------------------


def triage_target(triage: Triage) -> str:
    """What a triage names, in words: a test's ID, a reason's text, or its pattern. Reads
    ``triage.test`` and ``triage.reason`` (select them)."""
    if triage.test is not None:
        return test_id(triage.test)
    if triage.reason is not None:
        return f"skip reason “{triage.reason.text[:80]}”"
    return triage.match


def triage_issue_links(triage: Triage) -> list[IssueLink]:
    """A triage's own issue (select ``triage.issue``)."""
    return issue_links(issue_infos(reason=None, triage=triage))


def pattern_scope(match: str) -> str:
    """What a pattern covers: whole files (CI leaves them out of its run) or some tests."""
    return "every test of the matching files" if is_file_level(match) else "matching tests"


def passes_now_on(triage: Triage) -> list[str]:
    """The backends on whose latest probe run every test of the exemption passed (its probes
    prefetched, as ``parity.selectors.exemptions_list`` reads them)."""
    return [probe.backend.name for probe in triage.probes.all() if probe.passes_now]


def probe_counts(probe: ProbeOutcome) -> str:
    """How the exemption's tests did: "3 of 3 passed", or what did not pass, "1 failed, 1
    error of 3"."""
    if probe.passes_now:
        return f"{probe.tests} of {probe.tests} passed"
    counts = [(probe.failed, "failed"), (probe.error, "error"), (probe.skipped, "skipped")]
    shown = ", ".join(f"{n} {word}" for n, word in counts if n)
    return f"{shown} of {probe.tests}"


def duration(seconds: float) -> str:
    """A file's run time, as precise as a reader needs: "0.3 s", "42 s", "3 min"."""
    if seconds < 0.1:
        return "< 0.1 s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


# --- Test IDs -------------------------------------------------------------------------------


def test_id(test) -> str:
    """A test's real ID, to read and to paste into its runner; the key's escaping stays
    internal. Takes a ``TestCase`` or anything with its ``file``, ``class_name`` and ``name``."""
    return display_id(test.file, test.class_name, test.name)


test_id.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def test_suite(test) -> str | None:
    """The suite of a test that its report ran in several suites, each run a test of its own
    (``parity.pure.normalize.suites``); None for every other test."""
    return suite_of(test.name)[1]


test_suite.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


# --- Outcomes -------------------------------------------------------------------------------

# Each outcome has a symbol as well as a colour, for readers who cannot tell the colours apart.
SYMBOLS = {"passed": "✓", "failed": "✗", "error": "!", "skipped": "⊘", "xfail": "⊗"}


# An upload's state as the runs page says it; any other state is still queued.
UPLOAD_STATUS_WORDS = {"done": "ingested", "failed": "failed", "processing": "being ingested"}


def upload_status_word(status: str) -> str:
    return UPLOAD_STATUS_WORDS.get(status, "queued")


def suite_status_words(status: str) -> str:
    """A suites-matrix cell's status as the page says it: "failed to run", "never ran"."""
    return SUITE_STATUS_LABELS.get(status, status)


def run_title(run) -> str:
    """A test's run on its timeline, as its mark's tooltip says it: when, the commit and branch,
    its outcome and reason, and whether the run is incomplete or the test flaky there."""
    shown = shown_outcome(run.outcome, run.reason)
    parts = [f"{timezone.localtime(run.started_at):%Y-%m-%d %H:%M}", run.commit[:10]]
    if run.branch:
        parts[-1] += f" ({run.branch})"
    parts.append(f"{shown}")
    if run.reason:
        parts[-1] += f": {run.reason}"
    if not run.complete:
        parts.append("incomplete run")
    if run.flaky:
        parts.append("flaky: its reruns disagreed")
    return " · ".join(parts)


def outcome_symbol(outcome: str | None) -> str:
    return SYMBOLS.get(outcome, "–")


def shown_outcome(outcome: str | None, reason=None) -> str | None:
    """An outcome (or a gap's state) as readers see it: an expected failure's skip reads
    "xfail" (it counts as a skip everywhere else). ``reason``: its reason (anything with a
    ``text``), its text, or None."""
    text = getattr(reason, "text", reason)
    if outcome == "skipped" and text and is_expected_failure(text):
        return "xfail"
    return outcome


# --- The heatmap ----------------------------------------------------------------------------

# Lower bounds of the colour bins, best first (site.css .s6 … .s0).
SHADE_BOUNDS = (1.0, 0.95, 0.8, 0.6, 0.4, 0.2, 0.0)


def shade(share: float | None) -> str:
    """The colour bin of a share: 6 (all) … 0 (under 20 %), or "none" (no share)."""
    if share is None:
        return "none"
    for index, bound in enumerate(SHADE_BOUNDS):
        if share >= bound:
            return str(len(SHADE_BOUNDS) - 1 - index)
    return "0"


# How a card names the headline next to its figure, per score definition (parity.pure.scores).
_SCORE_KINDS = {
    "reference_passing": "parity",
    "agree_reference_passed": "agree where the reference passed",
    "agree_any": "agree on any difference",
}


def score_kind(kind: str) -> str:
    """A score definition's short name beside a figure: "parity", "agree on any difference"."""
    return _SCORE_KINDS.get(kind, kind)


def percent(share: float | None) -> str:
    """``0.2571`` -> ``26 %``; "–" for no share. Rounded down near the ends, so a share that is
    not whole never reads 100 % and one that is not zero never reads 0 %."""
    if share is None:
        return "–"
    whole = round(share * 100)
    if whole == 100 and share < 1:
        whole = 99
    elif whole == 0 and share > 0:
        return "< 1 %"
    return f"{whole} %"


def flaky_words(flaky: int) -> str:
    """A cell's flaky count, as its marker's hover text says it."""
    verb = "is" if flaky == 1 else "are"
    return (
        f"{flaky} of its gaps {verb} flaky: the test flips over the backend's window of runs "
        "(states from history), reported as flaky, not untracked"
    )


@dataclass(frozen=True)
class HeatCell(CellCounts):
    """A heatmap cell as drawn: its colour bin, label and hover text, computed here once per
    cell (a template would take ten lookups per cell). Colour and label read parity against the
    reference; the reference's own cells show its counts, uncoloured."""

    @property
    def shade(self) -> str:
        """The colour bin of the parity, 6 (all the reference passes) … 0 (under 20 %), "ref"
        (the reference's own column), or "none" (nothing the reference passes to compare)."""
        if self.is_reference:
            return "ref"
        if self.all_not_applicable:
            return "not_applicable"
        return "intended" if self.all_intended else shade(self.parity)

    @property
    def absent(self) -> bool:
        """None of the row's tests is in the backend's run, though the reference passes some."""
        return self.missing > 0 and self.passed + self.failed + self.error + self.skipped == 0

    @property
    def pending_only(self) -> bool:
        """The backend's run has none of the row's tests, and the reference first ran them all
        after it: not yet run there (grey), no gap."""
        return self.pending > 0 and self.total == 0

    @property
    def css(self) -> str:
        """The cell's classes: its colour bin, and what the run says of the file."""
        if self.all_not_applicable:  # declared: no gap, no colour of failure, no crash's marks
            return "cell snot_applicable"
        if self.all_intended:  # by design: neither a colour of failure nor a crash's marks
            return "cell sintended"
        marks = (("absent", self.absent), ("unrun", self.run_state), ("pending", self.pending_only))
        return " ".join([f"cell s{self.shade}", *(name for name, on in marks if on)])

    @property
    def no_gap_possible(self) -> bool:
        """The reference passes none of the row's tests: what this backend does is no gap."""
        return not self.is_reference and not self.reference_passed and self.total > 0

    @property
    def reference_says(self) -> str:
        """Why nothing here is a gap, short enough for a cell: the reference lacks the row's
        tests, skips them all, or fails (or skips) every one."""
        if not self.reference_tests:
            return "not on ref"
        if self.reference_skipped == self.reference_tests:
            return "ref skips"
        return "ref fails" if not self.reference_skipped else "ref: 0 pass"

    @property
    def counts_text(self) -> str:
        """The hover text."""
        text = self._counts_sentence()
        if self.variants:
            text = (
                f"worst of its variants, {self.worst}: {text} · gaps on {self.variants_failing} "
                f"of {self.variants} variants with a current run"
            )
        if self.run_state:
            text += f" · the file {run_state_words(self.run_state, self.run_status)}"
        if self.not_applicable and not self.is_reference:
            text += (
                f" · {self.not_applicable} declared not applicable here: neither gaps nor in "
                "the score"
            )
        if self.pending and not self.is_reference:
            text += (
                f" · {self.pending} not yet run there: the reference first ran them after "
                "this backend's current run"
            )
        if self.flaky and not self.is_reference:
            text += f" · {flaky_words(self.flaky)}"
        return text

    def _counts_sentence(self) -> str:
        counts = (
            f"{self.passed} passed, {self.failed} failed, {self.error} error, "
            f"{self.skipped} skipped, {self.missing} missing"
        )
        if self.is_reference:
            return f"{counts} (the reference)"
        if not self.total:
            return "none of these tests in the current run"
        if not self.compared:
            return f"{counts}; the reference passes none of these tests, so none is a gap"
        gaps = f"{self.gaps} gap" if self.gaps == 1 else f"{self.gaps} gaps"
        text = (
            f"{counts}; of the {self.compared} tests the reference passes, "
            f"{self.compared - self.gaps} pass here ({gaps})"
        )
        if not self.intended:
            return text
        scores = self.scores  # some are compared: never None here
        return (
            f"{text}; {self.intended} of them intended (by design), not counted: parity "
            f"{percent(scores.headline)} ({percent(scores.raw)} counting them)"
        )

    @property
    def label(self) -> str:
        # A file the backend never ran has no "passed / tests" of its own: say so, with how
        # many of the reference's tests it misses, so no cell can be read as 0 of N run; and
        # why, when its run manifest says (a crash is no list to edit).
        if self.all_not_applicable:
            return f"not applicable · {self.not_applicable}"
        if self.all_intended:
            return self._intended_label()
        if self.absent:
            word = ABSENT_LABELS.get(self.run_state, "missing")
            return f"{word} · {self.missing}"
        if self.is_reference:
            return f"{self.passed}/{self.total}" if self.total else "–"
        if self.pending_only:
            return f"not yet run there · {self.pending}"
        if self.no_gap_possible:
            return self.reference_says
        if not self.compared:
            return "–"
        # As the headline score (``parity.pure.scores``): "47/47" of the tests meant to run
        # here, when intended gaps are not counted.
        passing = self.compared - self.gaps
        return f"{passing}/{passing + self.counted_gaps}"

    def _intended_label(self) -> str:
        """Every gap is intended: how many, and what passes of the rest, if any do."""
        passing = self.compared - self.gaps
        if not passing:
            return f"intended · {self.intended}"
        return f"{passing}/{passing} · {self.intended} intended"


# A gap state of a test absent from the backend's run, as a heatmap cell labels its file.
ABSENT_LABELS = {
    "missing": "missing",
    "crashed": "crashed",
    "timed_out": "timed out",
    "empty": "no tests",
    "not_run": "not started",
    "truncated": "truncated",
}


def run_state_words(state: str, status: str = "") -> str:
    """What happened to a file a backend's CI was told to run, as a sentence's end: "crashed
    (SIGSEGV)", "timed out", "ran no test (exit 5)", "never started"."""
    words = {
        "crashed": "crashed",
        "timed_out": "timed out",
        "empty": "ran no test",
        "not_run": "never started",
        "truncated": "was cut short",
    }.get(state, state)
    shown = status if status and status not in ("timed out", "not started") else ""
    return f"{words} ({shown})" if shown else words


def heatmap_cells(heatmap: Heatmap) -> Heatmap:
    """The heatmap with each cell as drawn (``HeatCell``): its page's rows only. Cells the
    selector built as ``HeatCell`` already (its ``cell_type``) stay as they are."""
    names = [f.name for f in fields(CellCounts)]  # not what a cell caches

    def drawn(cell: CellCounts) -> HeatCell:
        if isinstance(cell, HeatCell):
            return cell
        return HeatCell(**{n: getattr(cell, n) for n in names})

    rows = [
        HeatRow(name=row.name, cells=[drawn(cell) for cell in row.cells], owners=row.owners)
        for row in heatmap.rows
    ]
    return replace(heatmap, rows=rows)


# --- A page of a list counted in SQL -----------------------------------------------------------


@dataclass(frozen=True)
class ListPage:
    """Page ``number`` of a list of ``count`` read ``per_page`` at a time, ``shown`` of it here:
    the pager of a list its selector cut (``LIMIT``/``OFFSET``), not a Django ``Paginator``."""

    number: int
    per_page: int
    count: int
    shown: int

    @property
    def start_index(self) -> int:
        return (self.number - 1) * self.per_page + 1 if self.shown else 0

    @property
    def end_index(self) -> int:
        return (self.number - 1) * self.per_page + self.shown

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.shown > 0 and self.end_index < self.count

    @property
    def previous_page_number(self) -> int:
        return self.number - 1

    @property
    def next_page_number(self) -> int:
        return self.number + 1

    @property
    def has_other_pages(self) -> bool:
        return self.has_previous or self.has_next


# --- The overview's sparklines ----------------------------------------------------------------
# Inline SVG drawn here: three small lines do not need the charting library's bundle.

SPARK_WIDTH, SPARK_HEIGHT = 140, 30


@dataclass(frozen=True)
class Sparkline:
    lines: list[str]  # SVG polyline points, one list per stretch without a missing score
    dots: list[tuple[float, float]]  # a stretch of one snapshot, drawn as a dot
    title: str  # what a reader hovering it (or a screen reader) gets


def sparkline(series: dict[str, list] | None, *, backend: str, days: int) -> Sparkline | None:
    """A backend's parity scores (``score_trends``' series: "at" and "score") as SVG points in
    a ``SPARK_WIDTH`` x ``SPARK_HEIGHT`` box; None without a known score. At least 4 points of
    height, so a flat line stays flat and small wobbles stay small."""
    scores = (series or {}).get("score") or []
    known = [s * 100 for s in scores if s is not None]
    if not known:
        return None
    low, high = min(known), max(known)
    middle, half = (low + high) / 2, max((high - low) / 2, 2) * 1.15
    step = SPARK_WIDTH / max(len(scores) - 1, 1)
    stretches: list[list[tuple[float, float]]] = [[]]
    for index, score in enumerate(scores):
        if score is None:
            stretches.append([])
            continue
        y = SPARK_HEIGHT / 2 - (score * 100 - middle) / half * (SPARK_HEIGHT / 2 - 1)
        stretches[-1].append((round(index * step, 1), round(y, 1)))
    span = f"{low:.0f} %" if round(low) == round(high) else f"{low:.0f}–{high:.0f} %"
    return Sparkline(
        lines=[" ".join(f"{x},{y}" for x, y in s) for s in stretches if len(s) > 1],
        dots=[s[0] for s in stretches if len(s) == 1],
        title=f"score of {backend}, last {days} days: {known[-1]:.0f} % now, {span}",
    )


def _percent_of(share: float | None) -> float | None:
    return None if share is None else round(share * 100, 2)


def trend_chart(series, targets=()) -> dict:
    """The trend page's chart data (``selectors.score_history``), for its ``json_script``
    block: per backend its dated points (ISO times, scores in %) and its marks; per target
    (``selectors.targets_progress``) its score and date, and its forecast's date (none without
    progress: the chart draws no line toward it)."""
    return {
        "targets": [target_mark(t) for t in targets],
        "series": [
            {
                "backend": line.backend,
                "at": [p.at.isoformat() for p in line.points],
                "score": [
                    None if p.score is None else round(p.score * 100, 2) for p in line.points
                ],
                "passing": [p.passing for p in line.points],
                "compared": [p.compared for p in line.points],
                "run": [p.run for p in line.points],
                "marks": [
                    {"at": m.at.isoformat(), "kind": m.kind, "text": m.text, "run": m.run}
                    for m in line.marks
                ],
            }
            for line in series
        ],
    }


FORECAST_DRAWN_PAST = datetime.timedelta(days=90)


def target_mark(progress) -> dict:
    """A target as the trend chart marks it: its score (%) at its date, and where the forecast
    lands; ``hover`` is what a reader hovering it reads."""
    target, result = progress.target, progress.forecast
    return {
        "backend": progress.backend,
        "score": round(target.score * 100, 2),
        "due": target.due.isoformat(),
        "forecast": result.on.isoformat() if result.on else None,
        # A forecast far past the date is not drawn (it would squash the trend to a sliver);
        # the table and the star's hover still say it.
        "drawn": result.on is not None and result.on <= target.due + FORECAST_DRAWN_PAST,
        "at_risk": progress.at_risk,
        "hover": f"{target_forecast_text(progress)}",
    }


def target_forecast_text(progress) -> str:
    """A target's forecast in words: "met", "no progress" or "forecast 2027-03-01 (12 a day)"."""
    result = progress.forecast
    if result.met:
        return "met"
    if result.no_progress:
        return "no progress (the rate over the last weeks is zero or less)"
    return f"forecast {result.on.isoformat()} ({result.rate:,.1f} tests a day)"


# --- Skip categories ---------------------------------------------------------------------------


def disposition(value: str) -> str:
    """A skip category's disposition as a reader says it: ``needs_work`` -> ``needs work``,
    ``intended`` -> ``by design``."""
    return DISPOSITION_NAMES.get(value, value.replace("_", " "))


# --- Numbers and ages -------------------------------------------------------------------------


def count(n: int | None) -> str:
    """``1819`` -> ``1,819``: counts of thousands read at a glance."""
    return "–" if n is None else f"{n:,}"


def ago(moment: datetime.datetime | None) -> str:
    """``3 hours, 2 minutes ago``; "just now" under a minute (never "0 minutes ago")."""
    if moment is None:
        return ""
    if timezone.now() - moment < datetime.timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


# --- The burn-down of untracked gaps (overview) ---------------------------------------------

BURN_WIDTH, BURN_HEIGHT = 600, 150
BURN_PAD = {"left": 2, "right": 2, "top": 4, "bottom": 2}  # the axis labels are HTML, outside
# Colour-blind-safe (Okabe-Ito), in backend order.
BURN_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")


@dataclass(frozen=True)
class BurnLine:
    backend: str
    colour: str
    points: str  # an SVG polyline's points
    last: int  # untracked at its last point


@dataclass(frozen=True)
class BurnChart:
    width: int
    height: int
    lines: list[BurnLine]
    top: int  # the y axis's largest value
    first_day: str
    last_day: str
    plot: dict  # the plotting area: left, right, top, bottom (px)


def burndown_chart(burndown) -> BurnChart | None:
    """Untracked gaps per backend over time (``parity.selectors.BurnDown``) as polylines on a
    shared day axis, drawn inline as SVG (no chart library); None without two days to draw."""
    if burndown is None or len(burndown.days) < 2:
        return None
    days = burndown.days
    left, right = BURN_PAD["left"], BURN_WIDTH - BURN_PAD["right"]
    top, bottom = BURN_PAD["top"], BURN_HEIGHT - BURN_PAD["bottom"]
    span = (days[-1] - days[0]).days or 1
    highest = max((n for points in burndown.series.values() for _, n in points), default=0)
    scale = max(highest, 1)

    def xy(day, n) -> str:
        x = left + (right - left) * (day - days[0]).days / span
        y = bottom - (bottom - top) * n / scale
        return f"{x:.1f},{y:.1f}"

    lines = [
        BurnLine(
            backend=name,
            colour=BURN_COLOURS[i % len(BURN_COLOURS)],
            points=" ".join(xy(day, n) for day, n in points),
            last=points[-1][1],
        )
        for i, (name, points) in enumerate(sorted(burndown.series.items()))
    ]
    return BurnChart(
        width=BURN_WIDTH,
        height=BURN_HEIGHT,
        lines=lines,
        top=highest,
        first_day=days[0].isoformat(),
        last_day=days[-1].isoformat(),
        plot={"left": left, "right": right, "top": top, "bottom": bottom},
    )


def triage_form_key(*parts: object) -> str:
    """Which small triage form on a page (the gap, test, reason, file and backend it names):
    posted with it, so that a refusal reopens that form and no other."""
    return ":".join("" if part is None else str(part) for part in parts)


def triage_anchor(key: str) -> str:
    """The element id of the triage form of ``key``, to go back to it after a refusal."""
    return "triage-" + hashlib.sha256(key.encode()).hexdigest()[:12]


# --- Backend families ---------------------------------------------------------------------------

# A variant key's plural, as the roll-ups say it ("3 arches").
_PLURALS = {"arch": "arches", "os": "OSes"}


def variant_noun(variant_keys: list[str] | None, n: int) -> str:
    """What a project's variants are called: its one variant key ("arch", "2 arches"), else
    "variant"."""
    keys = list(variant_keys or [])
    noun = keys[0] if len(keys) == 1 and keys[0] else "variant"
    return noun if n == 1 else _PLURALS.get(noun, f"{noun}s")


def family_rollup_text(rollup, variant_keys: list[str] | None) -> str:
    """A family's overview line: "3 arches; scores 91–97 %; 12 tests fail on every arch, 40 on
    some". ``rollup``: a ``parity.selectors.families.FamilyRollup``."""
    n = len(rollup.variants)
    parts = [f"{n} {variant_noun(variant_keys, n)}"]
    low, high = rollup.low, rollup.high
    if low is not None:
        span = (
            percent(low)
            if percent(low) == percent(high)
            else (f"{percent(low).removesuffix(' %')}–{percent(high)}")
        )
        parts.append(f"score{'s' if len(rollup.headlines) > 1 else ''} {span}")
    failing = rollup.failing
    if failing is None:
        parts.append("no current run")
    elif failing.compared > 1:
        noun = variant_noun(variant_keys, 1)
        tests = "test fails" if failing.everywhere == 1 else "tests fail"
        every = (
            f"every {noun}"
            if failing.compared == n
            else (f"every {noun} of the {failing.compared} with a run")
        )
        parts.append(
            f"{count(failing.everywhere)} {tests} on {every}, {count(failing.somewhere)} on some"
        )
    return "; ".join(parts)


def also_failing_text(also) -> str:
    """ "also failing in rocm-gfx90a, xpu" (``parity.selectors.families.AlsoFailing``); ""
    where no other backend fails the test."""
    return f"also failing in {', '.join(also.backends)}" if also and also.backends else ""


def fails_on_text(also, variant_keys: list[str] | None) -> str:
    """ "fails on 2 of 3 arches" for a variant's gap; "" for a flat backend's, and where no
    variant's score counts it (an intended gap alone: it fails on none)."""
    if also is None or not also.family or not also.family_failing:
        return ""
    noun = variant_noun(variant_keys, also.family_compared)
    return f"fails on {also.family_failing} of {also.family_compared} {also.family} {noun}"


def family_new_gaps_text(found, variant_keys: list[str] | None) -> str:
    """The digest's line of a family's new gaps: "rocm: 5 new gaps (3 untracked), on 2 of 3
    arches" (``parity.selectors.digest.FamilyNewGaps``)."""
    gaps = "new gap" if found.total == 1 else "new gaps"
    noun = variant_noun(variant_keys, found.of)
    return (
        f"{found.family}: {found.total} {gaps} ({found.untracked} untracked), "
        f"on {len(found.variants)} of {found.of} {noun}"
    )


# --- Exports ---------------------------------------------------------------------------------

# The formats the exemptions page links (docs/lists.md), as their users call them.
EXPORT_LABELS = (
    ("amd-csv", "CSV"),
    ("deselect", "pytest --deselect"),
    ("set-test-configs", "set_test_configs"),
    ("skip-dict", "skip_dict"),
    ("disabled-json", "disabled-tests JSON"),
    ("na-list", "not-applicable list"),
    ("yaml", "parity YAML"),
)


def export_links(slug: str, *, backend: str = "", kind: str = "") -> list[tuple[str, str]]:
    """(label, URL) of each format's download of the exemptions the page's backend and kind
    filters select."""
    params = urlencode({k: v for k, v in (("backend", backend), ("kind", kind)) if v})
    suffix = f"?{params}" if params else ""
    return [
        (label, reverse("exemptions-export", args=[slug, name]) + suffix)
        for name, label in EXPORT_LABELS
    ]
