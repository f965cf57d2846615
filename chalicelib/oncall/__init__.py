"""On-call: schedules (layers, restrictions, overrides) and the rotation math. Pure modules only.

- `schedule`: the Schedule / Layer / Restriction / Override dataclasses, to_dict / from_dict;
  `validation`: validate_schedule. Later layers win over earlier ones; overrides win over all layers.
- `rotation`: layer_shifts, final_shifts, on_call_at (wall-clock handoffs, DST rules).
- `restrictions`: which instants a layer's restriction windows allow.
- `wallclock`: local wall-clock times to instants (fold=0 for repeated times; a skipped time
  means the instant the clock jumps over it), zone validation, UTC offset segments.
- `intervals`: half-open interval algebra. `fields`: reading stored dictionaries.
- `ical`: the RFC 5545 feed of a schedule's shifts.
- `handoffs`: the boundaries where the person on call changes and who is told what at each;
  `handoff_text`: the notice's words. The step that publishes them is `handoff_notices`.
"""

from chalicelib.oncall.rotation import FinalShift, Shift, final_shifts, layer_shifts, on_call_at
from chalicelib.oncall.schedule import Layer, Override, Restriction, Schedule
from chalicelib.oncall.validation import validate_override, validate_schedule

__all__ = [
    "FinalShift",
    "Layer",
    "Override",
    "Restriction",
    "Schedule",
    "Shift",
    "final_shifts",
    "layer_shifts",
    "on_call_at",
    "validate_override",
    "validate_schedule",
]
