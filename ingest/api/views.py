from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiRequest, OpenApiResponse, extend_schema
from rest_framework import exceptions, parsers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest import services
from ingest.api.auth import HasOidcToken, HasUploadToken, OidcTokenAuthentication
from ingest.api.serializers import (
    JSON_PARTS,
    ExchangedTokenSerializer,
    OidcExchangeSerializer,
    RunSerializer,
    UploadCreateSerializer,
    UploadSerializer,
)
from ingest.api.throttles import UploadRateThrottle
from parity.models import Run, Upload
from parity.oidc.exchange import upload_token_exchange
from parity.oidc.tokens import OidcRefused
from parity.services import lifecycle
from parity.web.openapi import ID_PATH, ErrorSerializer, error_responses


def _too_large(request: Request) -> Response | None:
    # Checked before the body is read: an oversized upload is never spooled to disk.
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    limit = settings.PARITY_MAX_UPLOAD_BYTES
    if length <= limit:
        return None
    detail = (
        f"The upload is {length:,} bytes; the limit is {limit:,} bytes "
        "(PARITY_MAX_UPLOAD_BYTES). Split it into shards with the same 'run' key."
    )
    return Response({"detail": detail}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)


class UploadCreateView(APIView):
    permission_classes = [HasUploadToken]
    throttle_classes = [UploadRateThrottle]
    parser_classes = [parsers.MultiPartParser]

    @extend_schema(
        request={
            "multipart/form-data": OpenApiRequest(
                UploadCreateSerializer,
                encoding={name: {"contentType": "application/json"} for name in JSON_PARTS},
            )
        },
        responses={
            202: OpenApiResponse(UploadSerializer, description="Stored and queued for ingest."),
            200: OpenApiResponse(
                UploadSerializer, description="This run already has this content: that upload."
            ),
            **error_responses(400, 401, 403, 413, 415, 429),
        },
        summary="Upload JUnit XML of one backend's run (or one shard of it)",
    )
    def post(self, request: Request) -> Response:
        rejected = _too_large(request)
        if rejected is not None:
            return rejected
        # A plain dict, not request.data.copy(): copying deep-copies the files Django spooled to
        # disk (over FILE_UPLOAD_MAX_MEMORY_SIZE), and a body-less request's data is a bare dict.
        data = {key: request.data.get(key) for key in request.data if key != "file"}
        data["file"] = request.FILES.getlist("file")
        serializer = UploadCreateSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        fields = serializer.validated_data
        upload_request = services.UploadRequest(
            project=fields["project"],
            backend=fields["backend"],
            commit=fields["commit"],
            branch=fields["branch"],
            run_key=fields["run"],
            ci_url=fields["ci_url"],
            complete=fields["complete"],
            file_hint=fields["file_hint"],
            started_at=fields["timestamp"],
            probe=fields["probe"],
            exemptions_version=fields["exemptions_version"],
            shard=fields["shard"],
            suite=fields["suite"].strip(),
            run_manifest=fields["run_manifest"],
            attributes=fields["attributes"],
            hw_classification=fields["hw_classification"],
        )
        try:
            upload, created = services.upload_create(
                token=request.auth, request=upload_request, files=fields["file"]
            )
        except services.UploadRejected as exc:
            return Response({"detail": str(exc)}, status=exc.status_code)
        body = UploadSerializer(upload, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class UploadDetailView(APIView):
    permission_classes = [HasUploadToken]

    @extend_schema(
        parameters=[ID_PATH],
        responses={200: UploadSerializer, **error_responses(401, 403, 404, 429)},
        summary="An upload's status, error and counts",
    )
    def get(self, request: Request, pk: int) -> Response:
        upload = get_object_or_404(Upload, pk=pk, run__project_id=request.auth.project_id)
        return Response(UploadSerializer(upload, context={"request": request}).data)


class RunCompleteView(APIView):
    permission_classes = [HasUploadToken]

    @extend_schema(
        parameters=[ID_PATH],
        request=None,
        responses={200: RunSerializer, **error_responses(401, 403, 404, 429)},
        summary="Mark a run complete",
    )
    def post(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(
            Run.objects.select_related("project", "backend"),
            pk=pk,
            project_id=request.auth.project_id,
        )
        try:
            services.token_backend_check(token=request.auth, backend=run.backend)
        except services.UploadRejected as exc:
            return Response({"detail": str(exc)}, status=exc.status_code)
        return Response(RunSerializer(lifecycle.run_complete(run=run)).data)


class OidcExchangeView(APIView):
    """CI without a long-lived secret: an OIDC ID token in, a short-lived upload token out."""

    authentication_classes = [OidcTokenAuthentication]
    permission_classes = [HasOidcToken]
    parser_classes = [parsers.JSONParser]

    def permission_denied(self, request, message=None, code=None):
        # DRF answers a request without the bearer token with a generic "credentials were not
        # provided"; say which credentials (an upload token does not exchange).
        raise exceptions.NotAuthenticated(HasOidcToken.message)

    @extend_schema(
        request=OidcExchangeSerializer,
        responses={
            201: OpenApiResponse(
                ExchangedTokenSerializer, description="A trust rule matched: an upload token."
            ),
            **error_responses(400, 401, 403, 415, 429),
            503: OpenApiResponse(
                ErrorSerializer, description="The issuer's keys cannot be fetched; retry."
            ),
        },
        summary="Exchange a CI's OIDC ID token for a short-lived upload token",
    )
    def post(self, request: Request) -> Response:
        serializer = OidcExchangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            exchanged = upload_token_exchange(
                claims=request.auth, project_slug=serializer.validated_data["project"]
            )
        except OidcRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_401_UNAUTHORIZED)
        body = ExchangedTokenSerializer(
            {
                "token": exchanged.key,
                "expires_at": exchanged.expires_at,
                "project": exchanged.project,
                "backends": exchanged.backends,
                "rule": exchanged.rule,
            }
        ).data
        return Response(body, status=status.HTTP_201_CREATED)
