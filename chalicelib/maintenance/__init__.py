"""Maintenance windows of services: alerts for a service in maintenance are suppressed."""
