"""What a page tells a responder beyond the incident's title: read from the incident, shortened for
each medium. Pure: no I/O.

- description: the incident's description (an alert's annotations, an API caller's text);
- labels: the alert's labels (Alertmanager's common labels, a custom webhook's metadata), the
  ones that say something the page does not already say (severity, service id) left out;
- the source link (where the alert came from: Alertmanager, Sentry, a custom `source_url`) and
  the runbook link when the source gives one. Both are shown only when they are absolute http(s)
  URLs: a page never carries a `javascript:` or other scheme someone put into an alert.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from chalicelib.integration.normalized import SOURCE_NAMES

URL_MAX = 2048
LABELS_SHOWN = 6  # "a few": what a page has room for (email, Slack); webhooks carry more
ELLIPSIS = "\u2026"
# Label keys some sources prefix (Alertmanager "labels.env", legacy webhooks "tags.team").
_LABEL_PREFIXES = ("labels.", "tags.")
# Labels the page shows otherwise (severity as SEV0-4, the service by name).
_NOT_SHOWN = frozenset({"severity", "service_id"})
# Where an alert may carry its runbook: the incident's own field, its source, or a label/annotation.
_RUNBOOK_KEYS = ("runbook_url", "runbook", "annotations.runbook_url", "annotations.runbook", "labels.runbook_url")
# A web address in text, without the punctuation that ends its sentence.
_URL_IN_TEXT = re.compile(r"\b(?:https?://|www\.)\S*[^\s.,;:!?)\]'\"]", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_SPACE_BEFORE_STOP = re.compile(r"\s+(?=[.,;:!?])")
_SPACES = re.compile(r"\s+")
Label = tuple[str, str]


def web_link(value: object) -> str | None:
    """`value` when it is an absolute http(s) URL with a host, without spaces or controls; else None."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not url or len(url) > URL_MAX or any(ch.isspace() or not ch.isprintable() for ch in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and host else None


def _source(incident: Any) -> Mapping[str, Any]:
    source = getattr(incident, "source", None)
    return source if isinstance(source, Mapping) else {}


def _metadata(incident: Any) -> Mapping[str, Any]:
    metadata = _source(incident).get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def source_link(incident: Any) -> str | None:
    return web_link(_source(incident).get("source_url"))


def source_name(incident: Any) -> str | None:
    """The alert source's name ("Alertmanager"), for the source link's label."""
    source = _source(incident).get("source")
    return next((name for key, name in SOURCE_NAMES.items() if key == source), None)


def runbook_link(incident: Any) -> str | None:
    """The runbook: the incident's own `runbook_url` when it has one, else its alert's."""
    own = web_link(getattr(incident, "runbook_url", None))
    if own is not None:
        return own
    source, metadata = _source(incident), _metadata(incident)
    for key in _RUNBOOK_KEYS:
        found = web_link(source.get(key)) or web_link(metadata.get(key))
        if found is not None:
            return found
    return None


def labels_of(metadata: Mapping[str, Any], limit: int) -> tuple[Label, ...]:
    """Up to `limit` labels, in the alert's order: the prefixed label keys when the source has
    them (their prefix taken off), else every metadata entry; blank values and keys the page shows
    otherwise are left out."""
    items = [(str(key), str(value)) for key, value in metadata.items() if str(value).strip()]
    prefixed = [(key, value) for key, value in items if key.startswith(_LABEL_PREFIXES)]
    chosen = [(key.split(".", 1)[1], value) for key, value in prefixed] if prefixed else items
    shown: list[Label] = []
    for key, value in chosen:
        if len(shown) >= limit:
            break
        if key in _NOT_SHOWN or key in _RUNBOOK_KEYS or any(key == seen for seen, _ in shown):
            continue
        shown.append((key, value))
    return tuple(shown)


def incident_labels(incident: Any, limit: int) -> tuple[Label, ...]:
    return labels_of(_metadata(incident), limit)


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut at a word where one is near and ending in an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ")
    if space > limit * 0.7:
        cut = cut[:space]
    return cut.rstrip(" .,;:-\n") + ELLIPSIS


def one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def first_sentence(text: str | None, limit: int) -> str | None:
    """The first sentence of `text` on one line, without its web addresses (a voice reads it), at
    most `limit` characters; None when nothing is left."""
    if not text:
        return None
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    flat = _SPACE_BEFORE_STOP.sub("", one_line(_URL_IN_TEXT.sub(" ", first_line)))
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0].strip()
    sentence = shorten(sentence, limit).rstrip(ELLIPSIS).rstrip(" .,;:-") if len(sentence) > limit else sentence
    return sentence or None


def label_text(labels: tuple[Label, ...], separator: str = ", ") -> str:
    """`env=prod, job=api`."""
    return separator.join(f"{key}={value}" for key, value in labels)
