"""The weekly digest: subscriptions are edited here; deliveries are a read-only log (delete one
to let its week be sent again). The unsubscribe action goes through the digest's service."""

from django import forms
from django.contrib import admin, messages

from parity.digest.services import subscription_unsubscribe
from parity.models import DigestDelivery, Subscription
from parity.pure.codeowners import is_owner
from parity.selectors.owners import owner_clean


class SubscriptionForm(forms.ModelForm):
    class Meta:
        model = Subscription
        fields = ["project", "email", "backends", "owner", "active"]

    def clean(self):
        cleaned = super().clean()
        project, backends = cleaned.get("project"), cleaned.get("backends")
        if project and backends:
            foreign = [b.name for b in backends if b.project_id != project.pk]
            if foreign:
                self.add_error("backends", f"Not backends of {project}: {', '.join(foreign)}.")
        if cleaned.get("email"):
            cleaned["email"] = cleaned["email"].strip().lower()
        owner = owner_clean(cleaned.get("owner"))
        if owner and not is_owner(owner):
            self.add_error(
                "owner", "Give a code owner as CODEOWNERS names it: @user, @org/team or an email."
            )
        cleaned["owner"] = owner
        return cleaned


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = [
        "email",
        "project",
        "backend_names",
        "owner",
        "active",
        "created_at",
        "unsubscribed_at",
    ]
    list_filter = ["project", "active"]
    search_fields = ["email"]
    filter_horizontal = ["backends"]
    readonly_fields = ["created_at", "unsubscribed_at"]
    actions = ["deactivate"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("project").prefetch_related("backends")

    @admin.display(description="backends")
    def backend_names(self, obj: Subscription) -> str:
        return ", ".join(sorted(b.name for b in obj.backends.all())) or "all"

    @admin.action(description="Unsubscribe the selected subscriptions")
    def deactivate(self, request, queryset):
        active = list(queryset.filter(active=True))
        for subscription in active:
            subscription_unsubscribe(subscription=subscription)
        self.message_user(request, f"{len(active)} unsubscribed.", messages.SUCCESS)


@admin.register(DigestDelivery)
class DigestDeliveryAdmin(admin.ModelAdmin):
    list_display = ["week", "subscription", "status", "attempts", "sent_at", "detail"]
    list_filter = ["status", "week", "subscription__project"]
    search_fields = ["subscription__email", "email"]
    list_select_related = ["subscription__project"]
    date_hierarchy = "week"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
