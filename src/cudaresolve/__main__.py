"""Entry point for ``python -m cudaresolve``."""

from cudaresolve.cli import main

raise SystemExit(main())
