"""Heartbeats: a monitor pings its URL every interval; a missed ping opens an incident on its service."""
