"""Projects, their backends, members, upload tokens and OIDC trust rules."""

from django import forms
from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from parity.models import (
    Backend,
    CompareView,
    Membership,
    Project,
    TrustRule,
    UploadToken,
    UserToken,
)
from parity.oidc.exchange import trust_rule_delete
from parity.pure.normalize.presets import PRESETS, preset_rules
from parity.pure.reproduce import template_errors
from parity.services.projects import project_save, project_score_set


class BackendForm(forms.ModelForm):
    """A backend, with its command template checked: an unknown placeholder is refused."""

    class Meta:
        model = Backend
        fields = ["project", "name", "aliases", "reproduce_command"]
        widgets = {"reproduce_command": forms.TextInput(attrs={"size": 70})}

    def clean_reproduce_command(self) -> str:
        template = self.cleaned_data["reproduce_command"].strip()
        errors = template_errors(template)
        if errors:
            raise forms.ValidationError(errors)
        return template


class BackendInline(admin.TabularInline):
    model = Backend
    form = BackendForm
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


PRESET_CHOICES = [("", "keep these rules")] + [(p.name, f"{p.name}: {p.title}") for p in PRESETS]


class ProjectForm(forms.ModelForm):
    """A project, with a shipped identity preset to start its rules from (the preset's rules
    replace the field's; the model's ``clean`` then checks them as any rules)."""

    identity_preset = forms.ChoiceField(
        choices=PRESET_CHOICES,
        required=False,
        help_text="Replace the normalization rules with a shipped preset's, to edit from there. "
        "Stored tests keep their keys until re-keyed (the identity page).",
    )

    # No Meta: the admin makes the form of the project's fields from this one.

    def clean(self) -> dict:
        cleaned = super().clean()
        preset = cleaned.get("identity_preset")
        if preset:
            cleaned["normalization_rules"] = preset_rules(preset)
        return cleaned


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    form = ProjectForm
    list_display = ["slug", "name", "visibility", "reference_backend", "created_at"]
    list_filter = ["visibility"]
    search_fields = ["slug", "name"]
    inlines = [BackendInline, MembershipInline]
    readonly_fields = ["identity"]

    @admin.display(description="Test identity")
    def identity(self, obj) -> str:
        if obj is None or obj.pk is None:
            return "Once the project is saved: presets, a preview of joins and a re-key."
        # The page is ingest's (``ingest.admin``): it queues the re-key.
        url = reverse("admin:parity_rekey_identity", args=[obj.pk])
        return format_html(
            '<a href="{}">Identity rules: presets, a preview of joins, re-key</a>', url
        )

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Only the project's own backends can be its reference, its own views its headline.
        project_id = request.resolver_match.kwargs.get("object_id")
        if db_field.name == "reference_backend" and project_id:
            kwargs["queryset"] = Backend.objects.filter(project_id=project_id)
        if db_field.name == "headline_compare_view":
            kwargs["queryset"] = CompareView.objects.filter(project_id=project_id or 0)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change) -> None:
        if not change:  # a new project has no runs to compare (``create_project`` sets it up)
            super().save_model(request, obj, form, change)
            return
        # The form checked the branch and offered only the project's own backends.
        score_fields = {"score_definition", "score_counts_intended", "score_counts_not_applicable"}
        if score_fields & set(form.changed_data):
            project_score_set(
                project=obj,
                definition=obj.score_definition,
                counts_intended=obj.score_counts_intended,
                counts_not_applicable=obj.score_counts_not_applicable,
            )
        if project_save(project=obj):
            reference = obj.reference_backend.name if obj.reference_backend else "no reference"
            messages.info(
                request,
                f"Parity of {obj.slug} was rebuilt from its runs on {obj.default_branch}, "
                f"against {reference}.",
            )


@admin.register(Backend)
class BackendAdmin(admin.ModelAdmin):
    form = BackendForm
    list_display = ["name", "project", "aliases", "reproduce_command"]
    list_filter = ["project"]

    def get_readonly_fields(self, request, obj=None):
        # A backend stays in its project: its runs, results and gaps are that project's. Which
        # backend is the reference is the project's setting (``ProjectAdmin``, which recomputes).
        return ["project"] if obj is not None else []


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Who reads a private project (viewer) and who triages (maintainer)."""

    list_display = ["user", "project", "role", "granted_by", "created_at"]
    list_filter = ["project", "role", "granted_by"]
    search_fields = ["user__username", "user__email", "project__slug"]
    autocomplete_fields = ["user"]


@admin.register(UploadToken)
class UploadTokenAdmin(admin.ModelAdmin):
    list_display = [
        "prefix",
        "project",
        "label",
        "revoked",
        "created_at",
        "last_used_at",
        "expires_at",
        "trust_rule",
    ]
    list_filter = ["project", "revoked"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "expires_at"]


@admin.register(UserToken)
class UserTokenAdmin(admin.ModelAdmin):
    """Users' API tokens (``create_user_token``): revoke one here."""

    list_display = ["prefix", "user", "label", "revoked", "created_at", "last_used_at"]
    list_filter = ["revoked"]
    search_fields = ["user__username", "label", "prefix"]
    readonly_fields = ["user", "prefix", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        return False  # its key is shown once, by create_user_token


class TrustRuleForm(forms.ModelForm):
    """A rule's backends must be its project's own."""

    class Meta:
        model = TrustRule
        fields = [
            "project",
            "issuer",
            "repository",
            "repository_id",
            "ref",
            "workflow",
            "environment",
            "backends",
            "label",
        ]

    def clean(self) -> dict:
        cleaned = super().clean()
        project, backends = cleaned.get("project"), cleaned.get("backends") or []
        foreign = [str(b) for b in backends if project is not None and b.project_id != project.pk]
        if foreign:
            raise forms.ValidationError(
                {"backends": f"Not backends of {project.slug}: {', '.join(foreign)}."}
            )
        return cleaned


@admin.register(TrustRule)
class TrustRuleAdmin(admin.ModelAdmin):
    """Which CI identities (OIDC tokens) may upload to a project without a secret (docs/oidc.md).
    Deleting a rule revokes the tokens it minted (``trust_rule_delete``)."""

    form = TrustRuleForm
    list_display = ["pk", "project", "repository", "repository_id", "ref", "workflow", "issuer"]
    list_filter = ["project", "issuer"]
    search_fields = ["repository", "project__slug", "label"]
    filter_horizontal = ["backends"]

    def delete_model(self, request, obj) -> None:
        trust_rule_delete(rule_id=obj.pk)

    def delete_queryset(self, request, queryset) -> None:
        for pk in list(queryset.values_list("pk", flat=True)):
            trust_rule_delete(rule_id=pk)
