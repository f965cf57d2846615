"""The OpenAPI 3.1.0 document, generated from the registered operations and their pydantic models."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.lazy import documented_operations
from chalicelib.api.negotiation import alternatives
from chalicelib.api.operation import Operation
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.errors import ERROR_TYPES
from chalicelib.model_base import NOT_BLANK

_STATUS_TEXT = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    204: "No content",
    304: "Not modified",
    400: "Invalid request: the body, query or a header breaks its schema, or a rule the schema cannot state "
    "(an id that names nothing in this organization, a window whose end precedes its start, a rule named in "
    "the operation's or the field's description). The API's error.details.fields names each problem.",
    401: "Missing, invalid or revoked credential",
    403: "The credential lacks the required scope",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Payload too large",
    429: "Rate limit exceeded",
    500: "Server-side configuration error",
    502: "Upstream delivery failed",
    503: "Storage throttled after retries; nothing was written. Retry after the Retry-After seconds",
}

_RATE_HEADERS = {
    "X-RateLimit-Category": {
        "description": "Bucket applied (api_key, session, webhook, webhook_unverified, anonymous, public_status).",
        "schema": {"type": "string"},
    },
    "X-RateLimit-Remaining": {"description": "Requests left in the window.", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Unix time the window resets.", "schema": {"type": "integer"}},
    "X-Request-Id": {"description": "The request id, also in meta.request_id.", "schema": {"type": "string"}},
}


# What a path parameter holds, where its name alone does not say.
_PATH_PARAMETER_DESCRIPTIONS = {
    "id": "The incident number, INC-<year>-<n> (e.g. INC-2026-0042); letters in any case. Anything else is a 404.",
}


# Parameters whose values the code checks against a pattern: the document states it.
_PARAMETER_SCHEMAS: dict[str, dict[str, Any]] = {
    "sink_name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$"},
    # Trimmed, then 1 to 255 printable characters (what an HTTP header can carry: ASCII).
    "Idempotency-Key": {"type": "string", "maxLength": 255, "pattern": "^[ -~]*[!-~][ -~]*$"},
}


def _path_parameter(name: str) -> dict[str, Any]:
    schema = _PARAMETER_SCHEMAS.get(name, {"type": "string"})
    parameter: dict[str, Any] = {"name": name, "in": "path", "required": True, "schema": schema}
    if name in _PATH_PARAMETER_DESCRIPTIONS:
        parameter["description"] = _PATH_PARAMETER_DESCRIPTIONS[name]
    return parameter


class DocumentSchema(GenerateJsonSchema):
    """JSON Schema as the models enforce it, where pydantic's own schema says less.

    A string the model trims before checking its length (`str_strip_whitespace`, or
    `StringConstraints(strip_whitespace=True)`) refuses whitespace alone even where minLength
    allows it: such strings carry a pattern that needs a character trimming keeps."""

    def str_schema(self, schema: core_schema.StringSchema) -> JsonSchemaValue:
        json_schema = super().str_schema(schema)
        # `_config` is the config of the model being described (pydantic keeps a stack of them).
        trims = schema.get("strip_whitespace") or self._config.config_dict.get("str_strip_whitespace")
        if trims and json_schema.get("minLength", 0) >= 1 and "pattern" not in json_schema:
            json_schema["pattern"] = NOT_BLANK
        return json_schema

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        """A dict whose keys carry a pattern: pydantic says `patternProperties: {pattern: values}`,
        which leaves keys outside the pattern free to hold anything, while the model refuses such
        keys. Every key must match, so the pattern belongs in `propertyNames` and the values'
        schema in `additionalProperties`."""
        json_schema = super().dict_schema(schema)
        patterns = json_schema.get("patternProperties")
        if isinstance(patterns, dict) and len(patterns) == 1 and "additionalProperties" not in json_schema:
            ((pattern, values),) = patterns.items()
            del json_schema["patternProperties"]
            json_schema["propertyNames"] = {**json_schema.get("propertyNames", {}), "pattern": pattern}
            json_schema["additionalProperties"] = values
        return json_schema


def _envelope_schemas() -> dict[str, Any]:
    meta = {
        "type": "object",
        "required": ["request_id", "timestamp"],
        "properties": {"request_id": {"type": "string"}, "timestamp": {"type": "string", "format": "date-time"}},
    }
    return {
        "Meta": meta,
        "PagerDutyError": {
            "type": "object",
            "required": ["status", "message"],
            "properties": {
                "status": {"type": "string", "description": "invalid event, throttle event or error."},
                "message": {"type": "string"},
                "errors": {"type": "array", "items": {"type": "string"}},
            },
        },
        "OpsgenieError": {
            "type": "object",
            "required": ["message", "took", "requestId"],
            "properties": {
                "message": {"type": "string"},
                "took": {"type": "number", "description": "Seconds the request took."},
                "requestId": {"type": "string"},
                "errors": {
                    "type": "object",
                    "description": "Each invalid field and its problem (422).",
                    "additionalProperties": {"type": "string"},
                },
            },
        },
        "WebhookError": {
            "type": "object",
            "required": ["success", "error"],
            "properties": {
                "success": {"type": "boolean", "const": False},
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
        "ErrorEnvelope": {
            "type": "object",
            "required": ["error", "meta"],
            "properties": {
                "success": {"type": "boolean", "const": False},
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "string", "enum": sorted({e.code for e in ERROR_TYPES})},
                        "message": {"type": "string"},
                        "user_message": {"type": "string"},
                        "details": {"type": "object"},
                    },
                },
                "meta": {"$ref": "#/components/schemas/Meta"},
            },
        },
    }


def _success_schema(data_schema: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["success", "data", "meta"],
        "properties": {
            "success": {"type": "boolean", "const": True},
            "data": data_schema or {},
            "meta": {"$ref": "#/components/schemas/Meta"},
        },
    }


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", schema_generator=DocumentSchema)
    required = set(schema.get("required", []))
    parameters = []
    for name, prop in schema.get("properties", {}).items():
        is_array = prop.get("type") == "array" or any(p.get("type") == "array" for p in prop.get("anyOf", []))
        parameter: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": {k: v for k, v in prop.items() if k != "title"},
        }
        if prop.get("description"):
            parameter["description"] = prop["description"]
        if is_array:
            parameter["style"] = "form"
            parameter["explode"] = True
        parameters.append(parameter)
    return parameters


def _collect_models(ops: list[Operation]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for op in ops:
        for model in (op.body, op.response):
            if isinstance(model, type) and issubclass(model, BaseModel) and model not in found:
                found.append(model)
    return found


def build_document(base_url: str | None = None) -> dict[str, Any]:
    ops = sorted(documented_operations(), key=lambda o: (o.path, o.method))
    models = _collect_models(ops)
    refs, definitions = models_json_schema(
        [(m, "validation") for m in models],
        ref_template="#/components/schemas/{model}",
        schema_generator=DocumentSchema,
    )
    schemas: dict[str, Any] = dict(definitions.get("$defs", {}))
    schemas.update(_envelope_schemas())
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation_object(op, refs)
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Tocsin incident management API",
            "version": "1.0.0",
            "description": "Incidents, on-call, postmortems and status pages. Every /api/v1 response "
            "is wrapped in the success or error envelope.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key (tcs_...) or a session JWT. Scopes: " + ", ".join(ALL_SCOPES),
                }
            },
        },
        "security": [{"bearer": []}],
    }
    if base_url:
        document["servers"] = [{"url": base_url}]
    from chalicelib.outbound import openapi_events

    document.setdefault("webhooks", {}).update(openapi_events.webhooks(schemas))
    return document


# The error body of each route family (chalicelib.api.error_render); the others answer WebhookError.
_ERROR_SCHEMAS = {
    ErrorFamily.API: "ErrorEnvelope",
    ErrorFamily.PAGERDUTY: "PagerDutyError",
    ErrorFamily.OPSGENIE: "OpsgenieError",
}


def _operation_object(op: Operation, refs: dict[Any, Any]) -> dict[str, Any]:
    data_schema = refs.get((op.response, "validation")) if op.response is not None else None
    success_schema = (data_schema or {}) if op.raw else _success_schema(data_schema)
    if op.content_type != "application/json":
        success_schema = {"type": "string"}
    success: dict[str, Any] = {"description": _STATUS_TEXT.get(op.status, "Success"), "headers": dict(_RATE_HEADERS)}
    if op.status != 204:  # a 204 has no body
        # An XML feed is also served as text/xml, which client generators can read (api/negotiation.py).
        media_types = alternatives(op.content_type) if op.content_type != "application/json" else [op.content_type]
        success["content"] = {media_type: {"schema": success_schema} for media_type in media_types}
    responses: dict[str, Any] = {str(op.status): success}
    for other in op.other_statuses:
        responses[str(other)] = {**success, "description": _STATUS_TEXT.get(other, "Success")}
    if "If-None-Match" in op.headers:
        responses["304"] = {"description": "Not modified: the ETag sent in If-None-Match still matches"}
    statuses = set(op.errors) | {400, 429, 500, 503}
    if not op.public:
        statuses |= {401, 403}
    error_schema = {"$ref": f"#/components/schemas/{_ERROR_SCHEMAS.get(op.family, 'WebhookError')}"}
    # An HTML page answers its errors as small HTML pages too; other routes (TwiML) in JSON.
    error_content = (
        {op.content_type: {"schema": {"type": "string"}}}
        if op.content_type.startswith("text/html")
        else {"application/json": {"schema": error_schema}}
    )
    for status in sorted(statuses):
        responses[str(status)] = {"description": _STATUS_TEXT.get(status, "Error"), "content": error_content}
    responses["503"]["headers"] = {
        "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
    }
    operation: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "tags": [op.tag],
        "responses": responses,
    }
    if op.description:
        operation["description"] = op.description
    if op.scope:
        operation["x-required-scope"] = op.scope
        needs = f"Requires scope `{op.scope}`"
        if op.self_param:
            operation["x-scope-not-needed-for-self"] = op.self_param
            needs += f", unless the credential is the user `{op.self_param}` names (a personal API key or a session)"
            if op.method not in ("GET", "HEAD"):
                needs += "; a read-only personal key (only :read scopes) changes nothing"
        operation["description"] = (operation.get("description", "") + f"\n\n{needs}.").strip()
    if op.public:
        operation["security"] = []
    parameters = [_path_parameter(name) for name in re.findall(r"{([^}+]+)}", op.path)]
    if op.query is not None:
        parameters.extend(_query_parameters(op.query))
    for header in op.headers:
        schema = _PARAMETER_SCHEMAS.get(header, {"type": "string"})
        parameters.append({"name": header, "in": "header", "required": False, "schema": schema})
    if parameters:
        operation["parameters"] = parameters
    if op.body is not None:
        operation["requestBody"] = {
            "required": not op.body_optional,
            "content": {"application/json": {"schema": refs[(op.body, "validation")]}},
        }
    return operation
