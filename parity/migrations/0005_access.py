# Access model: a project's visibility (public or private) and per-user memberships with roles.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import parity.models.projects


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0004_long_test_ids"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="visibility",
            field=models.CharField(
                choices=[("public", "public: anyone may read"), ("private", "private: members only")],
                default=parity.models.projects.default_visibility,
                help_text="Public: anyone may read the pages and the API. Private: members only. Either way only maintainers (and superusers) triage.",
                max_length=10,
            ),
        ),
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[("viewer", "viewer: reads a private project"), ("maintainer", "maintainer: reads and triages")],
                        default="viewer",
                        max_length=10,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "project",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="parity.project"),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="parity_memberships", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "ordering": ["project", "user"],
                "constraints": [models.UniqueConstraint(fields=("user", "project"), name="membership_unique_user")],
            },
        ),
    ]
