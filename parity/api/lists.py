"""Import and export the lists teams keep (docs/lists.md): a maintainer posts a file's text and
gets the import's report; anyone who reads the project downloads its exemptions in a format."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from parity import selectors
from parity.api import serializers as s
from parity.pure.list_formats import FORMATS, ListFormatError
from parity.services.list_imports import ListFile, list_file_import
from parity.services.triage import TriageRejected
from parity.web.access import ProjectAccess, django_user, project_for_request
from parity.web.openapi import SLUG_PATH, error_responses

# Not "format": DRF reads a view's ``format`` argument as a renderer's name.
# Named list_format, not format: DRF reads a view's "format" argument as a renderer's name.
FORMAT_PATH = OpenApiParameter(
    "list_format",
    str,
    OpenApiParameter.PATH,
    pattern=r"^[-a-zA-Z0-9_]+$",  # the URL's converter: another format is a JSON 404
    description=f"The list's format: {', '.join(FORMATS)}.",
)
# The body's schema per content type: a format written as JSON is an object, parity's YAML a
# list of exemptions, the others text.
_BODIES = {
    "application/json": OpenApiTypes.OBJECT,
    "application/yaml": {"type": "array", "items": {"type": "object"}},
}
_EXPORT_RESPONSES = {
    (200, content_type): OpenApiResponse(
        _BODIES.get(content_type, OpenApiTypes.STR), description="The list, as a download."
    )
    for content_type in sorted({f.content_type for f in FORMATS.values()})
}


class ListImportView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH],
        request=s.ListImportSerializer,
        responses={
            200: s.ListImportReportSerializer,
            **error_responses(400, 401, 403, 404, 413, 415, 429),
        },
        summary="Import a list a team keeps (maintainers): what it matched, what it could not",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for_request(request, slug)
        body = s.ListImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        file = ListFile(
            format=data["format"],
            text=data["content"],
            name=data["name"],
            source=data["source"],
            kind=data["kind"],
            condition=data["condition"],
            backends=tuple(data["backends"]),
            prefix=data["prefix"],
        )
        try:
            report = list_file_import(
                project=project,
                file=file,
                dry_run=data["dry_run"],
                prune=data["prune"],
                user=django_user(request),
            )
        except (ListFormatError, TriageRejected) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(s.ListImportReportSerializer(report.as_dict()).data)


class ListExportView(APIView):
    permission_classes = [ProjectAccess]

    @extend_schema(
        parameters=[SLUG_PATH, FORMAT_PATH, s.ListExportQuery],
        responses={**_EXPORT_RESPONSES, **error_responses(400, 401, 403, 404, 429)},
        summary="The exemptions CI applies, as a list in a team's format (a download)",
    )
    def get(self, request: Request, slug: str, list_format: str) -> HttpResponse:
        project = project_for_request(request, slug)
        if list_format not in FORMATS:
            raise NotFound(f"No list format '{list_format}'. Known: {', '.join(FORMATS)}.")
        query = s.ListExportQuery(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        export = selectors.exemptions_export(
            project=project, query=selectors.ExportQuery(format=list_format, **query.validated_data)
        )
        response = HttpResponse(export.text, content_type=f"{export.content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
        # What the format could not spell, counted: the command names each (export_exemptions).
        response["X-Parity-Not-Written"] = str(len(export.skipped))
        return response
