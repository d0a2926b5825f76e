"""Entry point for ``python -m cudaresolve``."""

from cudaresolve.cli import run

run()
