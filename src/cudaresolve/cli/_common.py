"""Small pieces the subcommands share: the database they read and the message language. Shell."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse

    from cudaresolve.db.database import CompatDB

__all__ = ["add_lang_argument", "language", "load_db"]


def add_lang_argument(parser: argparse.ArgumentParser) -> None:
    """``--lang en|zh`` for every command that explains something."""
    parser.add_argument("--lang", choices=("en", "zh"), help="message language (default: from LC_ALL/LC_MESSAGES/LANG)")


def load_db(args: argparse.Namespace) -> CompatDB:
    """The shipped database, or the one ``--compat PATH`` names."""
    from cudaresolve.db.database import load_compat

    return load_compat(getattr(args, "compat", None))


def language(args: argparse.Namespace) -> str:
    """``--lang``, else ``zh`` when LANG/LC_ALL/LC_MESSAGES says Chinese, else ``en``."""
    from cudaresolve.text.langs import pick_lang

    return pick_lang(getattr(args, "lang", None), os.environ)
