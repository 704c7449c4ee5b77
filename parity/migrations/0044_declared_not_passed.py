import django.db.models.deletion
from django.db import migrations, models


# Empty until each agreement project's next recount of its current snapshots (a run, a triage
# change, a change of definition) writes what its declarations cover.
class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0043_webhook_secrets_encrypted"),
    ]

    operations = [
        migrations.CreateModel(
            name="DeclaredNotPassed",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("tests", models.PositiveIntegerField()),
                (
                    "backend",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="parity.backend",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="parity.project",
                    ),
                ),
                (
                    "triage",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="parity.triage",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["project", "triage"], name="declarednotpassed_triage"),
                    models.Index(fields=["backend"], name="declarednotpassed_backend"),
                ],
            },
        ),
    ]
