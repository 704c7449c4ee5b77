"""Cheaper bulk writes of results and tests (issue 11): results keep one index, (run, test); a
test's history probes it run by run. Tests' project key loses its database constraint and its
own index, like results' keys: the deferred check per row and the index cost a first ingest of a
million tests seconds, and the (project, file) and (project, key_digest) indexes serve every
lookup by project."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0008_tracker_sync_and_reproduce"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="result",
            name="result_test_run",
        ),
        migrations.AlterField(
            model_name="testcase",
            name="project",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="tests",
                to="parity.project",
            ),
        ),
    ]
