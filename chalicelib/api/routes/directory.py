"""Users, teams and services."""

from __future__ import annotations

from chalicelib.api.routing import ApiBlueprint

api = ApiBlueprint(__name__, tag="directory")
