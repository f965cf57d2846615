"""Imports every message consumer so its @handles registration runs (Lambda and the local loop)."""

from __future__ import annotations

import chalicelib.alert.handlers
import chalicelib.directory.invitations
import chalicelib.incident.handlers
import chalicelib.insights.handlers
import chalicelib.notification.digests
import chalicelib.notification.verification
import chalicelib.outbound.handlers
import chalicelib.paging.assignment
import chalicelib.paging.coverage_notices
import chalicelib.paging.handlers
import chalicelib.paging.handoffs
import chalicelib.paging.swap_notices
import chalicelib.subscriber.confirmation
import chalicelib.subscriber.handlers  # noqa: F401
