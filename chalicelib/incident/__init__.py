"""Incidents: the pure domain (severity, workflow state machine, SLA) and the request/response models.

Pure modules (no AWS, no I/O): `severity`, `workflow`, `sla`. `models` holds the pydantic models.
"""
