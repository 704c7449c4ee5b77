"""Path parameters and documented refusals of both APIs (the read API's and the upload API's):
what every error looks like, so a client (and schemathesis) can rely on the documented shape."""

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
)
from rest_framework import serializers

SLUG_PATH = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, pattern=r"^[-a-zA-Z0-9_]+$", description="A project."
)


ID_PATH = OpenApiParameter("id", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH)


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in a sentence.")


class ValidationErrorSerializer(serializers.Serializer):
    """DRF's field errors; its schema is written by ``ValidationErrorSchema`` below because the
    keys are the request's field names (or ``non_field_errors``), not fixed ones."""


class ValidationErrorSchema(OpenApiSerializerExtension):
    target_class = ValidationErrorSerializer

    def map_serializer(self, auto_schema, direction) -> dict:
        messages = {"type": "array", "items": {"type": "string"}}
        # A list or dict field's errors nest by index or key: {"file": {"0": ["..."]}}.
        nested = {"type": "object", "additionalProperties": {}}
        return {
            "type": "object",
            "description": "Each invalid field (or non_field_errors) with its messages.",
            "additionalProperties": {"oneOf": [messages, nested]},
            "example": {"commit": ["This field is required."]},
        }


_BAD_REQUEST = PolymorphicProxySerializer(
    component_name="BadRequest",
    serializers=[ValidationErrorSerializer, ErrorSerializer],
    resource_type_field_name=None,
)


_ERROR_DESCRIPTIONS = {
    400: "Invalid input: field errors, or a detail for a request the service refuses.",
    401: "No credentials, or an unknown or revoked token.",
    403: "Credentials that may not do this (a token of another project; a session without "
    "the permission or the CSRF token).",
    404: "No such object, or not one the credentials can see.",
    413: "The request body is over PARITY_MAX_UPLOAD_BYTES; split it into shards.",
    415: "A Content-Type the endpoint does not parse.",
    429: "Throttled; retry after the Retry-After header's seconds.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """The documented refusals of an endpoint, for ``extend_schema(responses=...)``."""
    return {
        code: OpenApiResponse(
            response=_BAD_REQUEST if code == 400 else ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[code],
        )
        for code in statuses
    }
