"""Outbound webhooks: subscriptions, the events they receive, and their signed, retried deliveries."""
