"""Verdict aggregation and rendering: JSON, Markdown (tabulate), JUnit XML."""
