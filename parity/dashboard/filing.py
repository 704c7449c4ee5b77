"""Filing an issue from the dashboard (maintainers only): the page's view (``views.file_issue``)
drafts it; this files what the maintainer edited through ``parity.services.issue_filing`` and says
what happened. Without a write token for the tracker the page offers the tracker's own prefilled
"new issue" page instead."""

from django.contrib import messages
from django.http import HttpRequest

from parity.dashboard.forms import IssueDraftForm
from parity.models import Project
from parity.selectors.issue_drafts import IssueSubject
from parity.services import issue_filing
from parity.trackers import TrackerError


def issue_file_post(
    request: HttpRequest, project: Project, form: IssueDraftForm, subject: IssueSubject
) -> bool:
    """Create the issue ``form`` (bound and valid) describes and link it to ``subject``'s gaps;
    True when it was filed (a message says where, and whether it was linked)."""
    draft = issue_filing.IssueDraft(
        title=form.cleaned_data["title"], body=form.cleaned_data["body"], labels=form.label_list()
    )
    try:
        filed = issue_filing.issue_file(
            project=project, subject=subject, draft=draft, user=request.user
        )
    except TrackerError as exc:
        messages.error(request, f"Not filed: {exc}. Open the tracker's new-issue page instead.")
        return False
    if filed.link_error:
        messages.warning(request, f"Filed {filed.url}, but not linked: {filed.link_error}")
    else:
        if subject.reason_id is not None:
            what = "the reason"
        elif subject.file is not None:
            what = f"{subject.file} on {subject.backend}"
        else:
            what = f"{filed.linked} gap(s)"
        messages.success(
            request, f"Filed {filed.url} and linked it to {what}: they count tracked now."
        )
    return True
