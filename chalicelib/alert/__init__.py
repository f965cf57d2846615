"""Alerts as records: every accepted inbound event creates or updates one; grouping decides
which incident a new alert joins."""
