# Test identities of any length: text columns, unique by an md5 of the key (a btree entry is capped near 2.7 kB).

import django.db.models.functions.comparison
import django.db.models.functions.text
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0003_digest"),
    ]

    operations = [
        migrations.AddField(
            model_name="upload",
            name="attempts",
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text="Times a worker took it up; past PARITY_UPLOAD_MAX_ATTEMPTS it fails.",
            ),
        ),
        migrations.AddField(
            model_name="upload",
            name="requeued_at",
            field=models.DateTimeField(
                blank=True, help_text="When recovery last queued it again.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="uploadfile",
            name="name",
            field=models.TextField(),
        ),
        migrations.RemoveConstraint(
            model_name="testcase",
            name="testcase_unique_key",
        ),
        migrations.AlterField(
            model_name="testcase",
            name="class_name",
            field=models.TextField(blank=True),
        ),
        migrations.AlterField(
            model_name="testcase",
            name="key",
            field=models.TextField(help_text="Canonical ID: file::Class::name"),
        ),
        migrations.AlterField(
            model_name="testcase",
            name="name",
            field=models.TextField(),
        ),
        migrations.AddField(
            model_name="testcase",
            name="key_digest",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.db.models.functions.comparison.Cast(
                    django.db.models.functions.text.MD5("key"), output_field=models.UUIDField()
                ),
                help_text="md5 of the key: the unique, indexable stand-in for a key of any length.",
                output_field=models.UUIDField(),
            ),
        ),
        migrations.AddConstraint(
            model_name="testcase",
            constraint=models.UniqueConstraint(
                fields=("project", "key_digest"), name="testcase_unique_key"
            ),
        ),
    ]
