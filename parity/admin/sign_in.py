from django import forms
from django.conf import settings
from django.contrib import admin

from parity.models import GroupRole


class GroupRoleForm(forms.ModelForm):
    """A mapping rule; its provider is one the settings configure (a rule for another would
    never apply)."""

    class Meta:
        model = GroupRole
        fields = ["provider", "group", "project", "role"]

    def clean_provider(self) -> str:
        provider = self.cleaned_data["provider"].strip().lower()
        configured = [p.id for p in settings.PARITY_SIGN_IN_PROVIDERS]
        if provider not in configured:
            raise forms.ValidationError(
                f"No sign-in provider {provider!r} is configured; these are: "
                f"{', '.join(configured) or 'none (docs/sign-in.md)'}."
            )
        return provider


@admin.register(GroupRole)
class GroupRoleAdmin(admin.ModelAdmin):
    """Which provider's group grants which role in which project, at each sign-in."""

    form = GroupRoleForm
    list_display = ["provider", "group", "project", "role", "created_at"]
    list_filter = ["provider", "project", "role"]
    search_fields = ["group", "project__slug"]
