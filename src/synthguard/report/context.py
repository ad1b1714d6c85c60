"""The release's organisational context for the dossier: who releases what to whom, why, who
decides and signs, and when the decision is reviewed.

These fields are not measured; the data owner writes them in a small YAML file (an example is
``docs/dossier-context.example.yaml``) and gives it to ``synthguard evaluate --context FILE``,
``evaluate(..., context=...)`` or ``report.to_dossier(context=...)``. A field left out is printed as
a visible blank in the dossier, never guessed. The context is never part of the JSON report.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["DECISIONS", "RELEASE_MODELS", "DossierContext", "load_context"]

#: How the release reaches its recipients (ICO: publication to the world vs disclosure to defined
#: recipients; NIST SP 800-188: public release, data-use agreement, enclave).
RELEASE_MODELS = {
    "public": "published to anyone (open release)",
    "restricted": "shared with named recipients under a data-sharing agreement",
    "enclave": "analysed only inside a controlled environment (secure enclave)",
}
#: The decisions a signatory records.
DECISIONS = ("approve", "approve with conditions", "reject")


@dataclass(frozen=True)
class DossierContext:
    """The organisational fields of a release dossier (every field optional).

    Parameters
    ----------
    release_name : str, optional
        What is released (a name or reference).
    release_model : {"public", "restricted", "enclave"}, optional
        How the release reaches its recipients.
    recipients : str, optional
        Who receives it.
    purpose : str, optional
        Why it is released.
    controller : str, optional
        The data controller.
    signatory, signatory_role : str, optional
        Who signs the decision, and in what role.
    decision : {"approve", "approve with conditions", "reject"}, optional
        The decision taken (the dossier shows the tool's proposal beside it).
    conditions : str, optional
        The conditions of an approval.
    decision_date, review_date : date, optional
        When the decision was taken and when it is reviewed (default review: one year after the
        run).
    generator, generator_settings : str, optional
        The generator (name and version) and its settings.
    threshold_justification : str, optional
        Why the materiality (the acceptance threshold) is what it is.
    source : str, optional
        The file the context was read from.

    Examples
    --------
    >>> DossierContext.from_mapping({"release_model": "public", "review_date": "2027-01-31"}).review_date
    datetime.date(2027, 1, 31)
    """

    release_name: str | None = None
    release_model: str | None = None
    recipients: str | None = None
    purpose: str | None = None
    controller: str | None = None
    signatory: str | None = None
    signatory_role: str | None = None
    decision: str | None = None
    conditions: str | None = None
    decision_date: _dt.date | None = None
    review_date: _dt.date | None = None
    generator: str | None = None
    generator_settings: str | None = None
    threshold_justification: str | None = None
    source: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "the context") -> DossierContext:
        """Validate ``data`` (keys of this class; dates as ``YYYY-MM-DD``) into a context."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: the dossier context must be a mapping of fields "
                              "(see docs/dossier.md)")
        known = [f.name for f in fields(cls) if f.name != "source"]
        kw: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise ConfigError(f"{source}: unknown dossier context field {key!r}; known: "
                                  f"{', '.join(known)}")
            if value is None or value == "":
                continue
            if key in ("decision_date", "review_date"):
                kw[key] = _date(value, key, source)
                continue
            if isinstance(value, (Mapping, list)):
                raise ConfigError(f"{source}: field {key!r} must be text, not a "
                                  f"{type(value).__name__}")
            kw[key] = " ".join(str(value).split())
        if kw.get("release_model") not in (None, *RELEASE_MODELS):
            raise ConfigError(f"{source}: release_model must be one of {', '.join(RELEASE_MODELS)}, "
                              f"got {kw['release_model']!r}")
        if kw.get("decision") not in (None, *DECISIONS):
            raise ConfigError(f"{source}: decision must be one of {', '.join(DECISIONS)}, got "
                              f"{kw['decision']!r}")
        return cls(**kw, source=None if source == "the context" else source)


def _date(value: Any, key: str, source: str) -> _dt.date:
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{source}: field {key!r} must be a date written YYYY-MM-DD, got "
                          f"{value!r}") from None


def load_context(context: Any) -> DossierContext | None:
    """A :class:`DossierContext` from a YAML (or JSON) file path, a mapping, or a context.

    Raises :class:`~synthguard.errors.ConfigError` naming the file and the field for a file that
    cannot be read, an unknown field, a release model or decision outside the choices, or a date
    that is not ``YYYY-MM-DD``.

    Examples
    --------
    >>> load_context({"purpose": "teaching"}).purpose
    'teaching'
    >>> load_context(None) is None
    True
    """
    if context is None or isinstance(context, DossierContext):
        return context
    if isinstance(context, Mapping):
        return DossierContext.from_mapping(context)
    path = Path(context)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--context {path}: cannot read the dossier context "
                          f"({exc.strerror or exc}): give a YAML file as in "
                          "docs/dossier-context.example.yaml") from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--context {path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return DossierContext.from_mapping(data or {}, source=f"--context {path}")
