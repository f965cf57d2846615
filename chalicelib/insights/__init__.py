"""Insights: rollups of incidents, pages and alerts kept by the workers, and the figures read from them.

docs/INSIGHTS.md says what every figure means; `rollups.py` says what each happening adds where.
"""
