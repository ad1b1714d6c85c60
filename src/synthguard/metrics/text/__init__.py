"""Text privacy metrics (offline NLP): ``text_entities``, ``text_nominals``, ``text_style_outliers``,
``text_exact_matches``. See ``docs/text.md``."""
