"""The dashboard's display filters (``{% load parity_display %}``), from
``parity.dashboard.presenters``: ``{{ urls|issue_links }}``, ``{{ gap|gap_issue_links }}``,
``{{ outcome|outcome_symbol }}``, ``{{ outcome|shown_outcome:reason }}``,
``{{ test|test_id }}``, ``{{ test|test_suite }}``, ``{{ share|percent }}``, ``{{ share|shade }}``,
``{{ triage|triage_issue_links }}``, ``{{ match|pattern_scope }}``,
``{{ url|issue_link }}``, ``{{ seconds|duration }}``, ``{{ status|upload_status_word }}``,
``{{ run|run_title }}``, ``{{ burndown|burndown_chart }}``, ``{{ n|count }}``,
``{{ reason.disposition|disposition }}``, ``{{ run.ci_url|web_url }}``,
``{{ moment|ago }}``, ``{{ state|run_state_words:status }}``,
``{{ n|variant_noun:project.variant_keys }}``, ``{{ family|family_new_gaps:variant_keys }}``;
and eight tags,
``{% family_rollup rollup project %}``, ``{% also_failing also project %}``,
``{% outcome_cell cell %}``, ``{% heat_cells row heatmap file_url %}``,
``{% sparkline trends project backend days %}``,
``{% owners names %}`` (``owners names gaps_url``: links to that page),
``{% sort_header "Label" "column" sort_in_force %}`` and
``{% triage_form_state gap_id test_id reason_id file backend as state %}``."""

from html import escape
from urllib.parse import quote, urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from parity.dashboard import presenters
from parity.definitions import gap_standing
from parity.pure.web_urls import web_url_or_empty

register = template.Library()

register.filter("issue_links", presenters.issue_links)
register.filter("gap_issue_links", presenters.gap_issue_links)
register.filter("outcome_symbol", presenters.outcome_symbol)
register.filter("shown_outcome", presenters.shown_outcome)
register.filter("test_id", presenters.test_id)
register.filter("test_suite", presenters.test_suite)
register.filter("percent", presenters.percent)
register.filter("target_forecast", presenters.target_forecast_text)
register.filter("score_kind", presenters.score_kind)
register.filter("shade", presenters.shade)
register.filter("issue_link", presenters.issue_link)
register.filter("triage_issue_links", presenters.triage_issue_links)
register.filter("duration", presenters.duration)
register.filter("pattern_scope", presenters.pattern_scope)
register.filter("passes_now_on", presenters.passes_now_on)
register.filter("probe_counts", presenters.probe_counts)
register.filter("upload_status_word", presenters.upload_status_word)
register.filter("suite_status_words", presenters.suite_status_words)
register.filter("run_title", presenters.run_title)
register.filter("burndown_chart", presenters.burndown_chart)
register.filter("count", presenters.count)
register.filter("disposition", presenters.disposition)
register.filter("ago", presenters.ago)
register.filter("run_state_words", presenters.run_state_words)
register.filter("variant_noun", lambda n, keys: presenters.variant_noun(keys, n))
register.filter("family_new_gaps", presenters.family_new_gaps_text)
# A stored URL as an href: itself when http(s), else "" (then no link is drawn).
register.filter("web_url", web_url_or_empty)


@register.inclusion_tag("parity/_owners.html", takes_context=True)
def owners(context: template.Context, names, owner_url: str = "") -> dict:
    """A test file's code owners as links: to the gaps page filtered to each (``owner_url``),
    or to this page filtered to each (its query string kept)."""
    return {"owners": names or (), "owner_url": owner_url, "request": context.get("request")}


@register.simple_tag
def sparkline(trends: dict, project: str, backend: str, days: int) -> SafeString:
    """A backend's parity over ``days`` as an inline SVG line (``presenters.sparkline``)."""
    line = presenters.sparkline(trends.get(project, {}).get(backend), backend=backend, days=days)
    if line is None:
        return mark_safe('<span class="muted">no data</span>')
    shapes = format_html_join(
        "", '<polyline points="{}" vector-effect="non-scaling-stroke"/>', ((p,) for p in line.lines)
    ) + format_html_join("", '<circle cx="{}" cy="{}" r="2"/>', line.dots)
    # Linked to the dated trend: the sparkline says how it moved, the trend page when and why.
    trend = reverse("project-trend", kwargs={"slug": project})
    return format_html(
        '<a class="spark-link" href="{}?{}"><svg class="spark" viewBox="0 0 {} {}" '
        'preserveAspectRatio="none" role="img" aria-label="{}" data-backend="{}"><title>{}'
        "</title>{}</svg></a>",
        trend,
        urlencode({"backend": backend}),
        presenters.SPARK_WIDTH,
        presenters.SPARK_HEIGHT,
        line.title,
        backend,
        line.title,
        shapes,
    )


# --- A sortable column's header ---------------------------------------------------------------

_ARROWS = {"ascending": "▲", "descending": "▼"}


@register.simple_tag(takes_context=True)
def sort_header(context, label: str, column: str, current: str, css: str = "") -> SafeString:
    """A ``<th>`` whose link sorts the list by ``column`` (ascending, or descending when it is
    already ascending), keeping the page's other parameters and going back to its first page;
    ``current`` is the sort in force (the selector's), shown by an arrow and ``aria-sort``."""
    state = {column: "ascending", f"-{column}": "descending"}.get(current)
    query = context["request"].GET.copy()
    query["sort"] = f"-{column}" if state == "ascending" else column
    for name in ("page", "fixed_page"):
        query.pop(name, None)
    return format_html(
        '<th scope="col" class="{}"{}><a class="sort" href="?{}" title="Sort by {}">{}</a>'
        '<span class="arrow{}" aria-hidden="true">{}</span></th>',
        f"sortable {css}".strip(),
        format_html(' aria-sort="{}"', state) if state else "",
        query.urlencode(),
        label.lower(),
        label,
        "" if state else " off",
        _ARROWS.get(state, "↕"),
    )


# --- One test on one backend -----------------------------------------------------------------
# The file page shows a cell per test and backend (800 on its largest file), the test page one
# per backend: one function for both, in Python, since an {% include %} per cell cost more than
# the rest of the file page (bench/README.md).

_BADGES = {
    "intended": '<span class="badge intended" title="{}">intended</span>',
    "closed": '<span class="badge closed">tracked · issue closed</span>',
    "tracked": '<span class="badge tracked">tracked</span>',
    "untracked": '<span class="badge untracked">untracked</span>',
    "flaky": '<span class="badge history-flaky" title="Its test flips over the backend\'s window '
    'of runs: reported as flaky, not untracked">flaky</span>',
    "not_applicable": '<span class="badge not_applicable" title="{}">not applicable</span>',
    "lost": '<span class="badge lost" title="Its file {}: run health, to rerun; in no score and '
    "no gap of the backend's\">lost to infrastructure</span>",
}


@register.filter
def standing_of(gap):
    """Where a gap's test stands (``parity.definitions.Standing``): a page's ``GapInfo`` carries
    it; an open ``Gap`` row (the gaps page's) is read."""
    return getattr(gap, "standing", None) or gap_standing(gap)


@register.simple_tag
def outcome_cell(cell, hide_gap: bool = False) -> SafeString:
    """A cell's symbol and word; unless it passed, its reason and issues; its gap unless
    ``hide_gap``. ``cell``: a ``TestCell`` (or anything with its attributes)."""
    shown = presenters.shown_outcome(cell.outcome, cell.reason)
    if shown is None and getattr(cell, "pending", False):
        return format_html(
            '<span class="sym" aria-hidden="true">–</span> <span class="word pending" title="{}">'
            "not yet run there</span>",
            "The reference first ran this test after this backend's current run: no gap until "
            "a run of the backend at least as new lacks it.",
        )
    # No result: "missing", the gap state's name, unless the gap names what happened instead
    # (the file crashed, timed out, ran no test or never started, or the test does not apply
    # here), which its line says.
    ran_state = shown is None and cell.gap and cell.gap.standing.outcome != "missing"
    html = format_html(
        '<span class="sym" aria-hidden="true">{}</span> <span class="word">{}</span>',
        presenters.outcome_symbol(shown),
        "" if ran_state else shown or "missing",
    )
    if cell.outcome and cell.outcome != "passed":
        html += _reason_html(cell.reason) + _issues_html(cell.issues)
    if cell.gap and not hide_gap:
        html += _gap_html(cell.gap)
    return mark_safe(html)


@register.simple_tag
def grid_cell(cell, chosen: str | None = None) -> SafeString:
    """A test grid's cell (a ``TestCell``): the ``<td>`` around ``outcome_cell``, marked when its
    backend is the ``chosen`` one. A Python tag, not template markup: a page of a file's tests
    on many backends draws thousands of them."""
    shown = presenters.shown_outcome(cell.outcome, cell.reason) or "none"
    css = f"outcome o-{shown}"
    if cell.gap:
        css += " gap"
    if cell.pending:
        css += " pending"
    if chosen and cell.backend == chosen:
        css += " chosen"
    return format_html(
        '<td class="{}" data-backend="{}">{}</td>', css, cell.backend, outcome_cell(cell)
    )


@register.filter
def slash_breaks(text: str) -> SafeString:
    """``text`` escaped, free to break after each slash: a path in a narrow column breaks
    between its folders, not inside a name."""
    return mark_safe(escape(text).replace("/", "/<wbr>"))  # noqa: S308 (escaped above)


@register.simple_tag(takes_context=True)
def heat_cells(context, row, heatmap, file_url: str) -> SafeString:
    """A heatmap row's cells (``presenters.HeatCell``), each with its link and hover text: one
    string a row, escaped here, since a page draws thousands of cells (a tag or markup a cell
    cost more than the rest of the page). A folder's cell opens that folder sorted by its
    backend; a file's, the file page on its backend (a family's worst variant). A label may
    break after its slash (``slash_breaks``): twenty columns leave cells narrower than
    "5286/5778"."""
    name = escape(row.name)
    if heatmap.folders:
        query = context["request"].GET.copy()
        for key in ("dir", "q", "page"):
            query.pop(key, None)
        query["folder"] = row.name
    else:
        file_href = f"{file_url}?path={quote(row.name, safe='/')}&backend="
    variant_keys = context["project"].variant_keys
    out = []
    for cell in row.cells:
        backend = escape(cell.backend)
        if heatmap.folders:
            query["sort"] = cell.backend
            href = f"?{query.urlencode()}"
        else:
            href = file_href + (cell.worst or cell.backend)
        marks = ""
        if cell.pending:
            marks += f' data-pending="{cell.pending}"'
        if cell.run_state:
            marks += f' data-run-state="{escape(cell.run_state)}"'
        failing = ""
        if cell.variants_failing:
            noun = presenters.variant_noun(variant_keys, cell.variants)
            failing = (
                f' <span class="variants-failing">on {cell.variants_failing} of {cell.variants}'
                f" {escape(noun)}</span>"
            )
        flaky = ""
        if cell.flaky and not cell.is_reference:
            marks += f' data-flaky="{cell.flaky}"'
            flaky = (
                f' <span class="cell-flaky" title="{escape(presenters.flaky_words(cell.flaky))}">'
                f"~{cell.flaky}</span>"
            )
        out.append(
            f'<td class="{escape(cell.css)}" data-backend="{backend}"{marks}><a'
            f' href="{escape(href)}" title="{backend} · {name}: {escape(cell.counts_text)}">'
            f"{slash_breaks(cell.label)}{failing}{flaky}</a></td>"
        )
    return mark_safe("".join(out))  # noqa: S308 (every value above is escaped)


_NO_REASON = '<span class="reason" title=""><span class="muted">no reason given</span></span>'


def _reason_html(reason) -> SafeString:
    if reason is None:
        return mark_safe(_NO_REASON)
    text = Truncator(reason.text).chars(90)
    return format_html('<span class="reason" title="{}">{}</span>', reason.text, text)


def _issues_html(issues) -> SafeString:
    links = presenters.issue_links(issues)
    linked = '<a class="issue {}" href="{}" rel="noopener" title="{}">{}</a>'
    bare = '<span class="issue {}" title="{}">{}</span>'
    return format_html_join(
        "",
        " {}",
        (
            (
                format_html(linked, i.state, i.url, i.title, i.label)
                if i.url
                else format_html(bare, i.state, i.title, i.label),
            )
            for i in links
        ),
    )


def _gap_html(gap) -> SafeString:
    standing = gap.standing
    if standing.outcome == "not_applicable":
        return format_html(_BADGES["not_applicable"], _declared_by(standing.source))
    if standing.outcome == "lost":
        return format_html(_BADGES["lost"], presenters.run_state_words(standing.cause))
    if gap.intended:
        badge = format_html(_BADGES["intended"], gap.note)
    elif gap.tracked_closed:
        badge = mark_safe(_BADGES["closed"])
    elif standing.triage == "flaky":
        badge = mark_safe(_BADGES["flaky"])
    else:
        badge = mark_safe(_BADGES["tracked" if gap.tracked else "untracked"])
    missing = " (passes on the reference)" if gap.state == "missing" else ""
    return format_html('<span class="gapline">gap: {}{} {}</span>', gap.state, missing, badge)


def _declared_by(source: str) -> str:
    return (
        f"Declared not applicable here ({source}): no gap, outside the score"
        if source
        else ("Declared not applicable here: no gap, outside the score")
    )


@register.simple_tag(takes_context=True)
def triage_form_state(context, *parts) -> dict:
    """A small triage form's ``key`` (posted back) and ``anchor`` (its id); and when the last
    post of this very form was refused (``triage_refused``, from the session), what it held and
    the ``error`` with its ``field``: the form opens again, the refusal beside that field."""
    key = presenters.triage_form_key(*parts)
    state = {"key": key, "anchor": presenters.triage_anchor(key)}
    refused = context.get("triage_refused") or {}
    return {**refused, **state} if refused.get("key") == key else state


@register.simple_tag
def family_rollup(rollup, project) -> str:
    """A family's roll-up line on the overview (``presenters.family_rollup_text``)."""
    return presenters.family_rollup_text(rollup, project.variant_keys)


@register.simple_tag
def also_failing(also, project) -> SafeString:
    """Under a gap's test: on how many of its family's variants the test fails, and the other
    backends failing it (``parity.selectors.families.AlsoFailing``); nothing when none."""
    parts = [
        text
        for text in (
            presenters.fails_on_text(also, project.variant_keys),
            presenters.also_failing_text(also),
        )
        if text
    ]
    if not parts:
        return mark_safe("")
    return format_html('<div class="also-failing muted">{}</div>', " · ".join(parts))
