"""The notification delivery claims, where the paging consumers have always found them: the table
and its rules live in chalicelib/notification/deliveries.py (the verification consumer claims too)."""

from __future__ import annotations

from chalicelib.notification.deliveries import CLAIM_LEASE, KEEP_FOR, DeliveryRecord, claim, mark_sent, release

__all__ = ["CLAIM_LEASE", "KEEP_FOR", "DeliveryRecord", "claim", "mark_sent", "release"]
