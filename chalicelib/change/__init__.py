"""Change events: PagerDuty change events recorded on services, and the changes shown before an incident."""
