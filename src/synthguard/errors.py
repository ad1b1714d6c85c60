"""Exception types: one per kind of failure, each message naming the file, column or parameter and the fix."""

from __future__ import annotations


class SynthguardError(Exception):
    """Base class of every error synthguard raises on purpose."""


class InputError(SynthguardError, ValueError):
    """Bad input data: unreadable file, missing or mismatched columns, empty table, all-NaN column."""


class ConfigError(SynthguardError, ValueError):
    """Bad configuration: unknown metric or parameter, invalid value, malformed config file."""


class MetricError(SynthguardError, RuntimeError):
    """A metric cannot run on these inputs (reported as ``skipped`` with this message as its reason)."""


class MetricUnavailable(MetricError):
    """The run cannot run a metric here, whatever the data (an optional package missing, a
    one-process metric in a run on a cluster): reported ``skipped`` with this message, and named
    under each risk it answers for as a test that did not run."""
