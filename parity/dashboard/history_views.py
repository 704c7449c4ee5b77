"""The settings of states from history (docs/history-states.md, "Changing the rules"), a
maintainer's page: a form with each rule, **Preview** listing every (test, backend) whose state
the new rules would change, from what to what, with its window's counts (nothing is written),
and **Save**, which writes them and judges the stored windows again at once."""

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from parity import selectors
from parity.dashboard.views import _render_project as render_project
from parity.models import Project
from parity.pure.history_states import RULE_RANGES, HistoryRules, history_rules_problems
from parity.services.history_settings import HistoryRulesRejected, history_rules_save
from parity.web.access import project_maintainer_page

PREVIEW_SHOWN = 500  # of a preview's changes

# Rates are asked in percent, as people say them; the rules keep fractions.
PERCENT = ("flip_rate", "infra_fail_fraction")
HELP = {
    "window_runs": "The newest runs a window holds.",
    "window_days": "…none older than this many days before the newest.",
    "flip_rate": "Flaky: flips at least this percent of the window's runs…",
    "min_flips": "…and at least this many flips.",
    "break_length": "Broken: the newest runs this many failures in a row (a break, not flips).",
    "exit_green": "Leaving flaky: this many passing runs in a row.",
    "infra_fail_fraction": "A run with more than this percent of its tests failed is "
    "infrastructure's: left out.",
}


LABELS = {
    "window_runs": "Window: runs",
    "window_days": "Window: days",
    "flip_rate": "Flip rate (%)",
    "min_flips": "Fewest flips",
    "break_length": "Break: failures in a row",
    "exit_green": "Leaving flaky: passes in a row",
    "infra_fail_fraction": "Infrastructure's run: failed (%)",
}


def _field(name: str) -> forms.Field:
    low, high = RULE_RANGES[name]
    default = getattr(HistoryRules(), name)
    if name in PERCENT:
        return forms.FloatField(
            min_value=low * 100,
            max_value=high * 100,
            label=LABELS[name],
            help_text=f"{HELP[name]} Default {default * 100:g}.",
        )
    return forms.IntegerField(
        min_value=int(low),
        max_value=int(high),
        label=LABELS[name],
        help_text=f"{HELP[name]} Default {default}.",
    )


class HistoryRulesForm(forms.Form):
    enabled = forms.BooleanField(
        required=False, label="Keep states from history", help_text="Off: the current run decides."
    )
    window_runs = _field("window_runs")
    window_days = _field("window_days")
    flip_rate = _field("flip_rate")
    min_flips = _field("min_flips")
    break_length = _field("break_length")
    exit_green = _field("exit_green")
    infra_fail_fraction = _field("infra_fail_fraction")

    @staticmethod
    def initial_of(rules: HistoryRules) -> dict:
        values = {f: getattr(rules, f) for f in HistoryRules.__dataclass_fields__}
        return {k: round(v * 100, 6) if k in PERCENT else v for k, v in values.items()}

    def rules(self) -> HistoryRules:
        data = self.cleaned_data
        return HistoryRules(**{k: data[k] / 100 if k in PERCENT else data[k] for k in data})

    def rejected(self, exc: HistoryRulesRejected) -> None:
        for field, problem in exc.errors.items():
            self.add_error(field if field in self.fields else None, problem)


@require_http_methods(["GET", "HEAD", "POST"])
@project_maintainer_page
def history_settings(request: HttpRequest, project: Project) -> HttpResponse:
    """The rules; ``action=preview`` lists what would change, only ``action=save`` writes."""
    now = HistoryRules.of(project.history_rules)
    data = request.POST if request.method == "POST" else None
    form = HistoryRulesForm(data, initial=HistoryRulesForm.initial_of(now))
    context = {}
    if data is not None and form.is_valid():
        if data.get("action") == "save":
            try:
                history_rules_save(project=project, rules=form.rules())
            except HistoryRulesRejected as exc:
                form.rejected(exc)
            else:
                messages.success(request, "Rules of states from history saved.")
                return redirect(reverse("project-history-settings", args=[project.slug]))
        else:
            proposed = form.rules()
            problems = history_rules_problems(proposed)
            if problems:
                form.rejected(HistoryRulesRejected(problems))
            else:
                preview = selectors.history_preview(project=project, rules=proposed)
                context = {
                    "proposed": proposed,
                    "flip_percent": proposed.flip_rate * 100,
                    "preview": preview,
                    "changes": preview.changes[:PREVIEW_SHOWN],
                    # The stored windows hold the runs of the rules they were kept under.
                    "larger": proposed.window_runs > now.window_runs
                    or proposed.window_days > now.window_days,
                    "first_time": proposed.enabled and not now.enabled,
                }
    return render_project(
        request,
        project,
        "parity/history_settings.html",
        tab="compare",
        form=form,
        rules=now,
        **context,
    )
