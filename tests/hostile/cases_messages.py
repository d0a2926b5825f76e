"""Messages that said the wrong thing (issue 26, item 7): a usage line naming an optional ``REQ ...`` as
required, and a plain-http package index on another machine called "not an http(s) URL"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _first_line(*words: str, absent: tuple[str, ...] = ()) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        first = result.stderr.splitlines()[0]
        assert all(word in first for word in words), first
        assert not any(word in first for word in absent), first
    return check


def _package_index(url: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "pyproject.toml").write_text(f'[tool.cudaresolve.package-index]\nmypkg = "{url}"\n')
    return setup


_LOCK = ["lock", "torch", "--cpu", "--python-version", "3.11", "--offline", "-o", "pylock.toml"]
CASES = [
    Case("usage-why-not-no-spec", ["why-not"], codes=(2,), check=_first_line("required: SPEC", absent=("REQ",))),
    Case("usage-why-not-no-spec-with-flags", ["why-not", "--cpu", "--json"], codes=(2,)),
    Case("usage-inspect-no-path", ["inspect"], codes=(2,), check=_first_line("required: PATH")),
    *(Case(f"package-index-{name}", _LOCK, setup=_package_index(url), codes=(1,),
           check=_first_line(*words, absent=("not an http(s) URL",)))
      for name, url, words in (("plain-http-remote", "http://pypi.example.org/simple", ("plain http", "mypkg")),
                               ("plain-http-ip", "http://10.0.0.7:8080/simple", ("plain http", "mypkg")))),
    Case("package-index-ftp", _LOCK, setup=_package_index("ftp://pypi.example.org/simple"), codes=(1,),
         check=_first_line("package index", "not an http(s) URL", absent=("mirror",))),
]
