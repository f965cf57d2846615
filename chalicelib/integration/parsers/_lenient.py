"""Reading a custom payload's fields without losing the alert (docs/INTAKE.md, "Field rules").

A field of the wrong type is converted when that loses nothing (a number read as its text) or
moved to the alert's details; a value over a limit is cut; an unknown word falls back to the
default. Each such step adds a warning for the webhook's answer. A problem (`refuse`) is only
what makes an alert impossible or wrong: no usable title, an identifier that cannot be cut;
`check` raises them all at once as one INVALID_PAYLOAD.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from chalicelib.errors import InvalidPayload
from chalicelib.integration.parsers._common import http_url, json_type
from chalicelib.severity import Severity, severity_word

NAMES_LISTED: Final = 10


@dataclass
class Intake:
    """Warnings for the answer, and the values moved to the alert's details."""

    warnings: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def refuse(self, problem: str) -> None:
        self.problems.append(problem)

    def check(self) -> None:
        """INVALID_PAYLOAD naming every problem found, if any."""
        if self.problems:
            raise InvalidPayload.from_problems(self.problems)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def move(self, name: str, value: object, why: str) -> None:
        """Keep `value` as details[name] and say why it is there."""
        self.details[name] = value
        self.warn(f"'{name}' {why}; kept in details.")

    def scalar_text(self, name: str, value: object) -> str | None:
        """Text or a number (read as its JSON text, which loses nothing); else moved to details."""
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = json.dumps(value)
            self.warn(f"'{name}' was a number; read as the text {text}.")
            return text
        self.move(name, value, f"must be text, not {json_type(value)}")
        return None

    def text(self, payload: Mapping[str, Any], name: str, *, max_len: int | None = None) -> str | None:
        """An optional text field, cut to `max_len` characters with a warning."""
        value = self.scalar_text(name, payload.get(name))
        if value is not None and max_len is not None and len(value) > max_len:
            self.warn(f"'{name}' has {len(value)} characters; cut to {max_len}.")
            return value[:max_len]
        return value

    def title(self, payload: Mapping[str, Any], *, max_len: int) -> str:
        """The alert's title: required, text or a number. Longer than `max_len` is cut, with a warning."""
        value = payload.get("title")
        if value is None or (isinstance(value, str) and not value.strip()):
            self.refuse("'title' is required: an alert needs a title.")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.refuse(f"'title' must be text (or a number), not {json_type(value)}: an alert needs a title.")
            return ""
        title = self.scalar_text("title", value) or ""
        if len(title) > max_len:
            self.warn(f"'title' has {len(title)} characters; the alert keeps the first {max_len}.")
        return title

    def severity(self, payload: Mapping[str, Any], default: Severity | None = None) -> Severity | None:
        """The severity the word means (chalicelib.severity's one table); an unknown word is a
        warning and None (the service's default severity)."""
        value = payload.get("severity")
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.move("severity", value, f"must be a severity word, not {json_type(value)}")
            return None
        found = severity_word(value)
        if found is None:
            self.warn(f"'severity' {str(value)[:40]!r} is not a severity word we know; the service's default is used.")
        return found

    def url(self, payload: Mapping[str, Any], name: str) -> str | None:
        """An absolute http(s) URL; anything else is moved to details."""
        value = payload.get(name)
        if value is None:
            return None
        found = http_url(value)
        if found is None:
            self.move(name, value, "is not an absolute http or https URL (at most 2048 characters)")
        return found

    def unknown(self, payload: Mapping[str, Any], known: frozenset[str], format_name: str) -> None:
        """Fields `format_name` does not define, kept as details (a `details` object's own keys
        are merged in, as PagerDuty's custom_details are) and named in one warning."""
        extra = [name for name in payload if name not in known]
        if not extra:
            return
        nested = payload.get("details")
        for name in extra:
            if name == "details" and isinstance(nested, dict):
                for key, value in nested.items():
                    self.details.setdefault(key, value)
            else:
                self.details.setdefault(name, payload[name])
        names = ", ".join(f"'{name[:60]}'" for name in extra[:NAMES_LISTED])
        if len(extra) > NAMES_LISTED:
            names += f" and {len(extra) - NAMES_LISTED} more"
        self.warn(f"{names} {'is' if len(extra) == 1 else 'are'} not part of the {format_name}; kept in details.")
