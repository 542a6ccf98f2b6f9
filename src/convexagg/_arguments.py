"""Checks and types of command-line arguments shared by the library's commands
(:mod:`convexagg.cli`) and the paper's (:mod:`convexagg.experiments.commands`)."""

from __future__ import annotations

__all__ = ["at_least", "check_jobs", "csv_list"]


def csv_list(text):
    """The non-empty, stripped items of a comma-separated option value."""
    return [item.strip() for item in text.split(",") if item.strip()]


def at_least(value, low, option):
    """Raise a ``ValueError`` naming ``option`` if ``value`` is below ``low`` (None passes)."""
    if value is not None and value < low:
        raise ValueError(f"{option} must be an integer >= {low}, got {value}.")


def check_jobs(jobs):
    """Raise a ``ValueError`` unless ``jobs`` is a positive integer or -1 (all cores)."""
    if jobs == 0 or jobs < -1:
        raise ValueError(f"--jobs must be a positive integer or -1 (all cores), got {jobs}.")
