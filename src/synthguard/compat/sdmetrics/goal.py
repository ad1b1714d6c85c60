"""SDMetrics' ``Goal`` enum (whether a metric is to be maximised or minimised)."""

from __future__ import annotations

from enum import Enum


class Goal(Enum):
    """Goal of a metric: its score is better when it is larger (``MAXIMIZE``) or smaller."""

    IGNORE = "ignore"
    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"
