"""The one call the alert pipeline makes: is this service in maintenance now?"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class WindowInEffect:
    window_id: str
    description: str | None
    end_at: datetime


def window_in_effect(*, organization_id: str, service_key: str, now: datetime) -> WindowInEffect | None:
    """Placeholder until maintenance windows land: never in maintenance."""
    del organization_id, service_key, now
    return None
