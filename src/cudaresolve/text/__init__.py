"""Everything the tool says.

It holds the ``Text`` value, the message catalogue (data files ``en/``, ``zh/``), coded findings
and notices.

The lowest layer: imports nothing else from cudaresolve. Domain code builds ``Text`` values
(``model``) and ``Finding``/``Notice`` (``findings``); only render, cli, errors' English
accessors and lock-file writers turn them into words (``catalogue.format_text``).
"""
