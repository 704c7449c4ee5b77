"""The OpenAPI schema's security blocks say what the access rules say (``parity.web.access``).

drf-spectacular lists every authentication class for every operation. Here a permission class
may narrow that: ``openapi_schemes`` names the only schemes an endpoint takes (the upload API
takes upload tokens, never a session), and ``openapi_anonymous_reads`` adds ``{}`` (no
credentials) to the operations that only read, since anyone reads a public project. A view
whose POST only asks (``reads_by_post``, the manifest's resolve) reads too.

Every operation documents 414: the web server (gunicorn, ``limit_request_line``) answers it,
before parity, to a request line (path and query string) over 4094 bytes. A form field that
holds JSON text (``openapi_json_part``) is documented as the JSON value, without the text
default the serializer gives it.

A request serializer naming ``openapi_any_of_required`` (fields of which a request sends at
least one, none of them required alone) gets an ``anyOf`` saying so, each field non-empty, so a
request the schema allows is one the serializer accepts.
"""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework.permissions import SAFE_METHODS

URI_TOO_LONG = {
    "description": "The request line (path and query string) is over the web server's limit "
    "(gunicorn's limit_request_line, 4094 bytes): answered by the server, as HTML.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction="response") -> dict:
        return {**super()._get_response_bodies(direction), "414": URI_TOO_LONG}

    def _map_serializer(self, serializer, direction, bypass_extensions=False) -> dict:
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        for name, field in getattr(serializer, "fields", {}).items():
            if getattr(field, "openapi_json_part", False) and name in schema.get("properties", {}):
                schema["properties"][name].pop("default", None)
        fields = getattr(serializer, "openapi_any_of_required", ())
        if fields and direction == "request":
            schema["anyOf"] = [
                {"required": [name], "properties": {name: _non_empty(schema["properties"][name])}}
                for name in fields
            ]
        return schema

    def get_auth(self) -> list[dict]:
        auth = super().get_auth()
        permissions = self.view.get_permissions()
        for permission in permissions:
            schemes = getattr(permission, "openapi_schemes", None)
            if schemes is not None:
                auth = [block for block in auth if block.keys() <= set(schemes)]
        anonymous = any(getattr(p, "openapi_anonymous_reads", False) for p in permissions)
        if anonymous and self._reads() and {} not in auth:
            auth.append({})
        return auth

    def _reads(self) -> bool:
        return self.method in SAFE_METHODS or getattr(self.view, "reads_by_post", False)


def _non_empty(field: dict) -> dict:
    """What makes a field's value more than nothing: an item for a list, a character else."""
    kind = field.get("type")
    return {"array": {"minItems": 1}, "object": {"minProperties": 1}}.get(kind, {"minLength": 1})
