"""A project's skip-reason rules, editable one by one; each save or delete re-classifies the
project's reasons through ``parity.services.classification`` (the version of the rules
changes, so every reason is classified again). A whole rule set is imported from YAML with
``manage.py import_skip_rules``."""

from django import forms
from django.contrib import admin

from parity.models import SkipRule
from parity.pure.skip_rules import SkipRulesError
from parity.services.classification import skip_rule_check, skip_rule_save, skip_rules_delete


class SkipRuleForm(forms.ModelForm):
    class Meta:
        model = SkipRule
        fields = ["project", "position", "category", "disposition", "message", "file", "klass"]
        fields += ["name", "note"]

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        rule = SkipRule(**{k: v for k, v in cleaned.items() if k != "project"})
        try:
            skip_rule_check(rule=rule)
        except SkipRulesError as exc:
            raise forms.ValidationError(str(exc).removeprefix("rule 1: ")) from exc
        return cleaned


@admin.register(SkipRule)
class SkipRuleAdmin(admin.ModelAdmin):
    form = SkipRuleForm
    list_display = ["position", "category", "disposition", "message", "file", "klass", "name"]
    list_display_links = ["position", "category"]
    list_filter = ["project", "disposition", "category"]
    search_fields = ["category", "message", "file", "klass", "name", "note"]
    ordering = ["project", "position", "pk"]

    def save_model(self, request, obj, form, change) -> None:
        skip_rule_save(rule=obj)

    def delete_model(self, request, obj) -> None:
        skip_rules_delete(project=obj.project, ids=[obj.pk])

    def delete_queryset(self, request, queryset) -> None:
        by_project: dict = {}
        for rule in queryset.select_related("project"):
            by_project.setdefault(rule.project, []).append(rule.pk)
        for project, ids in by_project.items():
            skip_rules_delete(project=project, ids=ids)
