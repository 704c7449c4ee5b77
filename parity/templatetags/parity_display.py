"""The dashboard's display filters (``{% load parity_display %}``), from
``parity.dashboard.presenters``: ``{{ urls|issue_links }}``, ``{{ gap|gap_issue_links }}``,
``{{ outcome|outcome_symbol }}``, ``{{ outcome|shown_outcome:reason }}``,
``{{ test|test_id }}``, ``{{ test|test_suite }}``, ``{{ share|percent }}``, ``{{ share|shade }}``,
``{{ triage|triage_issue_links }}``, ``{{ match|pattern_scope }}``,
``{{ url|issue_link }}``, ``{{ seconds|duration }}``."""

from django import template

from parity.dashboard import presenters

register = template.Library()

register.filter("issue_links", presenters.issue_links)
register.filter("gap_issue_links", presenters.gap_issue_links)
register.filter("outcome_symbol", presenters.outcome_symbol)
register.filter("shown_outcome", presenters.shown_outcome)
register.filter("test_id", presenters.test_id)
register.filter("test_suite", presenters.test_suite)
register.filter("percent", presenters.percent)
register.filter("shade", presenters.shade)
register.filter("issue_link", presenters.issue_link)
register.filter("triage_issue_links", presenters.triage_issue_links)
register.filter("duration", presenters.duration)
register.filter("pattern_scope", presenters.pattern_scope)
