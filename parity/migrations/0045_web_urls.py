"""Issue and CI-run URLs are http(s) links or nothing (``parity.pure.web_urls``): the fields
get the validator, the issue table a check constraint, and rows stored before the rule lose
their bad URL first (an issue named by its URL keeps a neutral key, so neither a page nor an
exported list ever carries the old text)."""

from django.db import migrations, models

import parity.models.links
from parity.pure.web_urls import is_web_url

_COARSE = r"^https?://[^/?#[:space:][:cntrl:]]"


def neutralize(apps, schema_editor):
    TrackingIssue = apps.get_model("parity", "TrackingIssue")
    Run = apps.get_model("parity", "Run")
    for issue in TrackingIssue.objects.exclude(url=""):
        if is_web_url(issue.url):
            continue
        if issue.key == issue.url[:200]:
            issue.key = f"unsafe URL removed (issue {issue.pk})"
        issue.url = ""
        issue.save(update_fields=["url", "key"])
    runs = Run.objects.exclude(ci_url="").values_list("pk", "ci_url").iterator()
    bad = [pk for pk, url in runs if not is_web_url(url)]
    Run.objects.filter(pk__in=bad).update(ci_url="")


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0044_declared_not_passed"),
    ]

    operations = [
        migrations.RunPython(neutralize, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="run",
            name="ci_url",
            field=models.URLField(
                blank=True, max_length=500, validators=[parity.models.links.validate_web_url]
            ),
        ),
        migrations.AlterField(
            model_name="trackingissue",
            name="url",
            field=models.URLField(
                blank=True, max_length=500, validators=[parity.models.links.validate_web_url]
            ),
        ),
        migrations.AddConstraint(
            model_name="trackingissue",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("url", ""),
                    models.Q(
                        ("url__iregex", _COARSE),
                        models.Q(("url__regex", "[[:space:][:cntrl:]]"), _negated=True),
                    ),
                    _connector="OR",
                ),
                name="issue_url_web",
            ),
        ),
    ]
