"""A project's skip-reason rules, editable one by one; each save or delete re-classifies the
project's reasons through ``parity.services.classification`` (the version of the rules
changes, so every reason is classified again). A whole rule set is replaced from YAML on the
changelist's "Import YAML" page, as ``manage.py import_skip_rules`` does."""

from django import forms
from django.contrib import admin
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path

from parity.models import Project, SkipRule
from parity.pure.skip_rules import SkipRulesError, skip_rules_default, skip_rules_parse
from parity.services.classification import (
    skip_rule_check,
    skip_rule_save,
    skip_rules_delete,
    skip_rules_replace,
)


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


class SkipRulesImportForm(forms.Form):
    project = forms.ModelChoiceField(Project.objects.order_by("slug"))
    rules = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 20, "cols": 100}),
        required=False,
        help_text="YAML: a list of rules, or a mapping with 'rules' (and 'categories').",
    )
    default = forms.BooleanField(required=False, label="Use the default set instead")

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("default"):
            cleaned["parsed"] = skip_rules_default()
        elif not cleaned.get("rules", "").strip():
            raise forms.ValidationError("Paste the rules, or tick the default set.")
        else:
            try:
                cleaned["parsed"] = skip_rules_parse(cleaned["rules"])
            except SkipRulesError as exc:
                self.add_error("rules", str(exc))
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

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        return [path("import/", view, name="parity_skiprule_import"), *super().get_urls()]

    def import_view(self, request):
        """Replace a project's rules from YAML (or the default set), through the service."""
        if not self.has_add_permission(request) or not self.has_delete_permission(request):
            return redirect("admin:parity_skiprule_changelist")
        form = SkipRulesImportForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            project, rules = form.cleaned_data["project"], form.cleaned_data["parsed"]
            changed = skip_rules_replace(project=project, rules=rules)
            self.message_user(
                request,
                f"{len(rules.rules)} skip rules of {project.slug} (version {rules.version}); "
                f"{changed} reasons changed category.",
            )
            return redirect("admin:parity_skiprule_changelist")
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "opts": self.model._meta,
            "title": "Import skip rules",
        }
        return TemplateResponse(request, "admin/parity/skiprule/import.html", context)
