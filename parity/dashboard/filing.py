"""Filing an issue from the dashboard (maintainers only): the page's view (``views.file_issue``)
drafts it; this files what the maintainer edited through ``parity.services.issue_filing`` and says
what happened. Without a write token for the tracker the page offers the tracker's own prefilled
"new issue" page instead."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponseRedirect

from parity.dashboard.forms import IssueDraftForm
from parity.models import Project
from parity.selectors.issue_drafts import IssueSubject
from parity.services import issue_filing
from parity.trackers import TrackerError


def edited_draft(form: IssueDraftForm) -> issue_filing.IssueDraft:
    """The issue as the maintainer left it in ``form`` (bound and valid)."""
    data = form.cleaned_data
    return issue_filing.IssueDraft(title=data["title"], body=data["body"], labels=form.label_list())


def tracker_page_redirect(
    project: Project, form: IssueDraftForm, subject: IssueSubject
) -> HttpResponseRedirect | None:
    """The tracker's new-issue page prefilled with the edited ``form`` (None: no repository):
    the draft parity rendered would drop the maintainer's title, body and labels."""
    url = issue_filing.new_issue_url(project=project, subject=subject, draft=edited_draft(form))
    return HttpResponseRedirect(url) if url else None


def issue_file_post(
    request: HttpRequest, project: Project, form: IssueDraftForm, subject: IssueSubject
) -> bool:
    """Create the issue ``form`` (bound and valid) describes and link it to ``subject``'s gaps;
    True when it was filed (a message says where, and whether it was linked)."""
    try:
        filed = issue_filing.issue_file(
            project=project, subject=subject, draft=edited_draft(form), user=request.user
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
