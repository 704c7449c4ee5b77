# Retention: a run whose raw results and files expired keeps its row, its roll-ups and this stamp.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0005_access"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="results_expired_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When retention deleted its results and raw files; roll-ups keep its numbers.",
                null=True,
            ),
        ),
    ]
