"""Query strings of the dashboard pages (every filter lives in the URL, so links are
shareable) and the triage forms. A bad value in a query string falls back to its default
instead of an error page: a stale shared link still opens."""

import datetime

from django import forms
from django.http import QueryDict

from parity.models import GapState, Project, TriageKind
from parity.models.links import validate_web_url
from parity.pure.globs import MAX_PATTERN_CHARS
from parity.selectors.families import GROUPINGS


def backend_choices(project: Project) -> list[tuple[str, str]]:
    names = sorted(project.backends.values_list("name", flat=True))
    return [("", "every backend"), *[(n, n) for n in names]]


def query_form(form_class: type[forms.Form], query: QueryDict, **kwargs) -> forms.Form:
    """A form bound to the query string, each missing field set to its initial value, so the
    form shows what the page shows."""
    unbound = form_class(**kwargs)
    data = query.copy()
    for name, field in unbound.fields.items():
        initial = unbound.get_initial_for_field(field, name)
        if name not in data and initial not in (None, ""):
            data[name] = initial.isoformat() if isinstance(initial, datetime.date) else initial
    return form_class(data, **kwargs)


def cleaned(form: forms.Form) -> dict:
    """Each field's valid value, or its initial value when it is missing or invalid."""
    form.is_valid()
    values = {}
    for name, field in form.fields.items():
        value = form.cleaned_data.get(name)
        if value in (None, ""):
            value = form.get_initial_for_field(field, name)
        values[name] = value
    return values


class OwnerField(forms.CharField):
    """A code owner as CODEOWNERS names it (@user, @org/team, an email), compared without case:
    stored lower-cased (``parity.selectors.owners.owner_clean``)."""

    def to_python(self, value) -> str:
        return super().to_python(value).strip().lower()


class HeatmapQuery(forms.Form):
    dir = forms.BooleanField(required=False, label="Folders")
    folder = forms.CharField(required=False, max_length=500)
    q = forms.CharField(required=False, max_length=200, label="Filter files")
    sort = forms.CharField(required=False, max_length=60, initial="worst")
    owner = OwnerField(required=False, max_length=200)  # a code owner's files only
    aligned = forms.BooleanField(required=False, label="Aligned commits")
    # A column per variant (the default) or per family (``parity.selectors.families``).
    by = forms.ChoiceField(required=False, choices=[(g, g) for g in GROUPINGS])
    # The row whose "Exempt…" was clicked: its file's one triage form is drawn there alone.
    exempt = forms.CharField(required=False, max_length=500)


class TestSearchQuery(forms.Form):
    q = forms.CharField(required=False, max_length=2000, label="Find a test")


class FileQuery(forms.Form):
    path = forms.CharField(max_length=500)
    backend = forms.CharField(required=False, max_length=50)


class ProjectQuery(forms.Form):
    """A form whose ``backend`` field offers the project's backends."""

    backend = forms.ChoiceField(required=False)

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["backend"].choices = backend_choices(project)


class PairQuery(forms.Form):
    """Two different backends of the project: ``a`` (the row) against ``b`` (the column)."""

    a = forms.ChoiceField()
    b = forms.ChoiceField()

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        names = [(n, n) for n in sorted(project.backends.values_list("name", flat=True))]
        self.fields["a"].choices = self.fields["b"].choices = names

    def clean(self) -> dict:
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Choose two different backends.")
        return data


class ReasonsQuery(ProjectQuery):
    days = forms.TypedChoiceField(
        choices=[(7, "7 days"), (28, "28 days"), (90, "90 days")],
        coerce=int,
        required=False,
        initial=28,
        empty_value=28,
    )
    by = forms.ChoiceField(
        choices=[("category", "category"), ("reason", "reason")],
        required=False,
        initial="category",
        label="Stack by",
    )
    sort = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)


class GapsQuery(ProjectQuery):
    TRACKED_CHOICES = [
        ("", "tracked or not"),
        ("untracked", "untracked"),
        ("tracked", "tracked"),
        ("closed", "tracked by closed issues only"),
        ("intended", "intended"),
    ]
    DEFAULT_DAYS = 7
    since = forms.DateField(
        required=False, widget=forms.DateInput(attrs={"type": "date"}), label="Since"
    )
    open = forms.BooleanField(required=False, label="every open gap, however old")
    state = forms.ChoiceField(required=False, choices=[("", "every state"), *GapState.choices])
    tracked = forms.ChoiceField(required=False, choices=TRACKED_CHOICES)
    # States from history (docs/history-states.md): offered when the project keeps them.
    HISTORY_CHOICES = [("", "any"), ("flaky", "flaky"), ("broken", "broken")]
    history = forms.ChoiceField(required=False, choices=HISTORY_CHOICES)
    owner = OwnerField(
        required=False,
        max_length=200,
        label="Owner",
        widget=forms.TextInput(attrs={"placeholder": "@org/team", "size": 14}),
    )
    # A triage queue group's tests: kept in the URL, not offered as fields.
    file = forms.CharField(required=False, max_length=500, widget=forms.HiddenInput)
    reason = forms.IntegerField(required=False, widget=forms.HiddenInput)
    # A category's gaps, from the reasons page.
    category = forms.CharField(required=False, max_length=100, widget=forms.HiddenInput)
    # A suite's tests, one by one: from its row of a suite never run on a backend.
    suite = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)
    page = forms.IntegerField(required=False, min_value=1, initial=1, widget=forms.HiddenInput)
    fixed_page = forms.IntegerField(
        required=False, min_value=1, initial=1, widget=forms.HiddenInput
    )
    sort = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    def __init__(self, *args, today: datetime.date, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Default: the last week, so the page answers "what broke since last Monday".
        self.fields["since"].initial = today - datetime.timedelta(days=self.DEFAULT_DAYS)


class QueueQuery(ProjectQuery):
    owner = OwnerField(
        required=False,
        max_length=200,
        label="Owner",
        widget=forms.TextInput(attrs={"placeholder": "@org/team", "size": 14}),
    )
    page = forms.IntegerField(required=False, min_value=1, initial=1, widget=forms.HiddenInput)
    reason_page = forms.IntegerField(
        required=False, min_value=1, initial=1, widget=forms.HiddenInput
    )


class QueueGroupField(forms.Field):
    """Groups of the triage queue ticked (``group``, repeated): ``backend::file`` or
    ``backend::#reason id`` (``parity.selectors.queue.QueueGroup.key``), at most ``LIMIT``."""

    widget = forms.MultipleHiddenInput
    LIMIT = 200

    def to_python(self, value) -> list[tuple[str, str | None, int | None]]:
        """(backend, file, reason id) per group."""
        values = list(dict.fromkeys(v for v in (value or []) if str(v).strip()))  # once each
        if len(values) > self.LIMIT:
            raise forms.ValidationError(f"At most {self.LIMIT} groups at once.")
        groups = []
        for v in values:
            backend, sep, what = str(v).partition("::")
            if not (backend and sep and what):
                raise forms.ValidationError(f"Not a group of the queue: {v}")
            if what.startswith("#"):
                if not what[1:].isdigit():
                    raise forms.ValidationError(f"Not a group of the queue: {v}")
                groups.append((backend, None, int(what[1:])))
            else:
                groups.append((backend, what, None))
        return groups


class QueueExemptForm(forms.Form):
    """Exempt the groups ticked in the triage queue, each on its backend: a test file (a
    file-level exemption: CI leaves it out) or a skip reason; tracked by one issue, or
    intended for one reason."""

    KINDS = [(TriageKind.TRACKED, "tracked by issue"), (TriageKind.INTENDED, "intended")]
    group = QueueGroupField(required=True)
    kind = forms.ChoiceField(choices=KINDS, widget=forms.RadioSelect, initial=TriageKind.TRACKED)
    issue_url = forms.URLField(
        required=False, max_length=500, assume_scheme="https", validators=[validate_web_url]
    )
    note = forms.CharField(required=False, max_length=2000)
    next = forms.CharField(required=False, max_length=2000)

    def requests_fields(self) -> list[dict]:
        """Keyword arguments of ``parity.services.triage.TriageRequest``, one per group."""
        data = self.cleaned_data
        common = {"kind": data["kind"], "issue_url": data["issue_url"], "note": data["note"]}
        return [
            {**common, "backend": backend, **({"match": file} if file else {"reason": reason})}
            for backend, file, reason in data["group"]
        ]


class RunsQuery(ProjectQuery):
    page = forms.IntegerField(required=False, min_value=1, initial=1, widget=forms.HiddenInput)
    sort = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)


class ExemptionsQuery(ProjectQuery):
    kind = forms.ChoiceField(required=False, choices=[("", "every kind"), *TriageKind.choices])
    expired = forms.ChoiceField(
        required=False,
        choices=[("", "in force or expired"), ("no", "in force"), ("yes", "expired")],
    )
    stale = forms.ChoiceField(
        required=False, choices=[("", "stale or not"), ("no", "covers open gaps"), ("yes", "stale")]
    )
    issue = forms.ChoiceField(
        required=False, choices=[("", "any issue"), ("closed", "its issue closed")]
    )
    probe = forms.ChoiceField(
        required=False, choices=[("", "any probe outcome"), ("passes", "passes now")]
    )
    files = forms.ChoiceField(required=False)  # whose test files the page lists
    page = forms.IntegerField(required=False, min_value=1, initial=1, widget=forms.HiddenInput)
    sort = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, project=project, **kwargs)
        self.fields["files"].choices = self.fields["backend"].choices[1:]

    def list_filters(self, query: dict) -> dict:
        """Keyword arguments of ``parity.selectors.exemptions_list`` from ``cleaned`` values."""
        flags = {"yes": True, "no": False}
        return {
            "backend": query["backend"] or None,
            "kind": query["kind"] or None,
            "expired": flags.get(query["expired"]),
            "stale": flags.get(query["stale"]),
            "issue_closed": True if query["issue"] == "closed" else None,
            "sort": query["sort"] or "",
            "passes_now": True if query["probe"] == "passes" else None,
        }


class ExemptionForm(forms.Form):
    """A new exemption on the exemptions page: a pattern over test IDs, on the backends ticked
    (none: every backend). ``parity.services.triage`` checks the rules; ``reject`` shows its refusal
    beside the field at fault."""

    match = forms.CharField(
        max_length=MAX_PATTERN_CHARS,
        label="Tests",
        help_text="A test file (test/test_ops.py), a glob over files (test/spmd/**) or over "
        "test IDs (test/test_ops.py::TestOps::test_*_complex64).",
        widget=forms.TextInput(attrs={"placeholder": "test/test_ops.py", "autocomplete": "off"}),
    )
    backends = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every backend.",
    )
    kind = forms.ChoiceField(
        choices=TriageKind.choices, widget=forms.RadioSelect, initial=TriageKind.TRACKED
    )
    issue_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        validators=[validate_web_url],
        label="Issue URL",
        help_text="Required for tracked and quarantine.",
        widget=forms.URLInput(attrs={"placeholder": "https://github.com/…/issues/123"}),
    )
    note = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Why; required for intended.",
        widget=forms.TextInput(attrs={"placeholder": "e.g. TPUs have no complex64"}),
    )
    expires_on = forms.DateField(
        required=False,
        label="Expires on",
        help_text="Optional: after this day it no longer applies.",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    condition = forms.CharField(
        required=False,
        max_length=1000,
        help_text="Optional: applies only where a run's attributes match (docs/variants.md).",
        widget=forms.TextInput(
            attrs={"placeholder": "arch in (gfx942, gfx90a) and rocm < 7.14", "autocomplete": "off"}
        ),
    )

    # ``TriageRejected.field`` -> the form's field.
    FIELD_OF = {"issue": "issue_url", "match": "match", "note": "note", "kind": "kind",
                "backends": "backends", "expires_on": "expires_on",
                "condition": "condition"}  # fmt: skip

    def __init__(self, *args, backends: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["backends"].choices = [(name, name) for name in backends]

    def request_fields(self) -> dict:
        """Keyword arguments of ``parity.services.triage.TriageRequest``."""
        return dict(self.cleaned_data)

    def reject(self, message: str, field: str | None) -> None:
        self.add_error(self.FIELD_OF.get(field or ""), message)


class TriageForm(forms.Form):
    """Triage one gap, its test on every backend, its reason on one or every backend, or its
    test file on one or every backend (a file-level exemption: CI leaves the file out)."""

    SCOPES = [
        ("gap", "this test on this backend"),
        ("test", "this test on every backend"),
        ("reason_backend", "this reason on this backend"),
        ("reason", "this reason on every backend"),
        ("file", "this file on the backend named, or on every backend"),
    ]
    kind = forms.ChoiceField(choices=TriageKind.choices, widget=forms.RadioSelect)
    scope = forms.ChoiceField(choices=SCOPES)
    gap = forms.IntegerField(required=False)
    test = forms.IntegerField(required=False)
    reason = forms.IntegerField(required=False)
    file = forms.CharField(required=False, max_length=500)
    backend = forms.CharField(required=False, max_length=50)
    issue_url = forms.URLField(
        required=False, max_length=500, assume_scheme="https", validators=[validate_web_url]
    )
    note = forms.CharField(required=False, max_length=2000)
    next = forms.CharField(required=False, max_length=2000)

    def clean(self) -> dict:
        data = super().clean()
        scope = data.get("scope")
        needs = {"gap": "gap", "test": "test", "reason_backend": "reason", "reason": "reason",
                 "file": "file"}  # fmt: skip
        if scope and data.get(needs[scope]) in (None, ""):
            raise forms.ValidationError(f"Nothing to triage for '{scope}'.")
        if scope == "reason_backend" and not data.get("backend"):
            raise forms.ValidationError("Name the backend.")
        return data

    def request_fields(self) -> dict:
        """Keyword arguments of ``parity.services.triage.TriageRequest``."""
        data = self.cleaned_data
        target = {
            "gap": {"gap": data["gap"]},
            "test": {"test": data["test"]},
            "reason_backend": {"reason": data["reason"], "backend": data["backend"]},
            "reason": {"reason": data["reason"]},
            "file": {"match": data["file"], "backend": data["backend"] or None},
        }[data["scope"]]
        return {
            "kind": data["kind"],
            "issue_url": data["issue_url"],
            "note": data["note"],
            **target,
        }


class IdsField(forms.Field):
    """Repeated ids (``?gap=1&gap=2``), at most ``limit``."""

    widget = forms.MultipleHiddenInput

    def __init__(self, *args, limit: int = 500, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.limit = limit

    def to_python(self, value) -> list[int]:
        values = [v for v in (value or []) if str(v).strip()]
        if len(values) > self.limit:
            raise forms.ValidationError(f"At most {self.limit} at once.")
        try:
            return [int(v) for v in values]
        except (TypeError, ValueError):
            raise forms.ValidationError("Ids are numbers.") from None


class IssueSubjectForm(forms.Form):
    """What an issue filed from parity is about: gaps (``gap``, repeated), a skip reason
    (``reason``) on a backend (``backend``; empty: every backend), or a test file (``file``) on
    a backend (a group of the triage queue)."""

    gap = IdsField(required=False)
    reason = forms.IntegerField(required=False, widget=forms.HiddenInput)
    file = forms.CharField(required=False, max_length=500, widget=forms.HiddenInput)
    backend = forms.CharField(required=False, max_length=50, widget=forms.HiddenInput)
    next = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    SUBJECT_FIELDS = ("gap", "reason", "file", "backend")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("file") and not data.get("backend"):
            raise forms.ValidationError("Name the backend of the file.")
        if not data.get("gap") and data.get("reason") is None and not data.get("file"):
            raise forms.ValidationError("Choose gaps, or a skip reason, to file an issue about.")
        return data

    def subject_valid(self) -> bool:
        """Whether the gaps, reason or file are (other fields may still be wrong)."""
        self.is_valid()
        return not any(name in self.errors for name in (*self.SUBJECT_FIELDS, "__all__"))

    def subject_fields(self) -> dict:
        """Keyword arguments of ``parity.selectors.issue_subject``."""
        data = self.cleaned_data
        if data.get("reason") is not None:
            return {"reason_id": data["reason"], "backend": data["backend"] or None}
        if data.get("file"):
            return {"file": data["file"], "backend": data["backend"]}
        return {"gap_ids": data["gap"]}


class IssueDraftForm(IssueSubjectForm):
    """The issue as the maintainer edits it before parity files it."""

    title = forms.CharField(max_length=256)
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 16, "cols": 100}))
    labels = forms.CharField(
        required=False,
        max_length=500,
        help_text="Comma-separated; the project's labels for issues filed from parity.",
    )

    @classmethod
    def drafted(cls, subject: IssueSubjectForm, *, draft, back: str) -> "IssueDraftForm":
        """The form for a valid ``subject``, filled with parity's ``draft``
        (``parity.services.issue_filing.IssueDraft``)."""
        fields = {name: subject.cleaned_data[name] for name in cls.SUBJECT_FIELDS}
        labels = ", ".join(draft.labels)
        return cls(
            initial={
                **fields,
                "next": back,
                "title": draft.title,
                "body": draft.body,
                "labels": labels,
            }
        )

    def label_list(self) -> list[str]:
        return [label.strip() for label in self.cleaned_data["labels"].split(",") if label.strip()]


class OwnersUploadForm(forms.Form):
    """A maintainer's import of the project's code owners: a CODEOWNERS file or a YAML, as a
    file or pasted (``parity.services.owners.owners_import``)."""

    file = forms.FileField(required=False, label="CODEOWNERS or YAML file")
    text = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "placeholder": "/test/spmd/  @org/spmd-team"}),
        label="or paste it",
    )
    yaml = forms.BooleanField(required=False, label="pasted text is YAML")
    root = forms.CharField(
        required=False,
        max_length=500,
        label="Test paths start at",
        widget=forms.TextInput(attrs={"placeholder": "the repository's root"}),
    )

    def clean(self) -> dict:
        data = super().clean()
        upload = data.get("file")
        if upload:
            try:
                data["text"] = upload.read().decode()
            except UnicodeDecodeError as exc:
                raise forms.ValidationError("The file is not UTF-8 text.") from exc
            data["name"] = upload.name
        elif (data.get("text") or "").strip():
            data["name"] = "pasted.yaml" if data.get("yaml") else "CODEOWNERS"
        else:
            raise forms.ValidationError("Choose a file, or paste its text.")
        return data
