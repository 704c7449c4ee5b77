from django.db import migrations, models


# Older snapshots keep zero: the agreement definitions counted the reference's non-passing
# tests declared not applicable as differing until now, and the next recount of a current
# snapshot (a run, a triage change, a change of definition) moves them apart.
class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0041_raw_files_left"),
    ]

    operations = [
        migrations.AddField(
            model_name="snapshot",
            name="not_applicable_not_passed",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
    ]
