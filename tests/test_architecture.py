"""The package's layout rules (docs/architecture.md), checked on the source with ``ast``.

A change that makes a lower layer import a higher one, adds an import cycle (imports inside
functions count), imports another module's private name, puts formatting or rich where they do
not belong, or grows a module past the size limit fails here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

SRC: Final = Path(__file__).resolve().parents[1] / "src" / "cudaresolve"

#: Lowest first: a folder may import itself and any folder before it, never one after it.
LAYERS: Final = (
    "text", "errors", "core", "db", "target", "resolve", "advice",
    "index", "lock", "install", "fleet", "binaries", "errorlog", "doctor", "render", "cli",
)
#: Who may turn a Text into words: render (and cli's error path), the catalogue itself, the
#: English accessors of errors and findings, and lock/ writing warnings into lock files.
FORMATTERS: Final = ("text", "errors", "render", "cli", "lock")
MAX_LINES: Final = 450
TOP_LEVEL: Final = {"__init__.py", "__main__.py", "errors.py", "py.typed"}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name, e.g. cudaresolve.resolve.solve
    imported: str  # dotted module name (or module.attribute for ``from m import name``)
    names: tuple[str, ...]
    line: int


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports() -> list[Import]:
    modules = _modules()
    out: list[Import] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out += [Import(name, a.name, (), node.lineno) for a in node.names if a.name.startswith("cudaresolve")]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                if not base.startswith("cudaresolve"):
                    continue
                names = tuple(a.name for a in node.names)
                # ``from cudaresolve.binaries import aoti`` imports a module
                for n in names:
                    target = f"{base}.{n}" if f"{base}.{n}" in modules else base
                    out.append(Import(name, target, (n,), node.lineno))
    return out


def _folder(module: str) -> str | None:
    """The layer of a dotted module name: ``cudaresolve.resolve.solve`` -> ``resolve``; the root -> None."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    return "cli" if parts[1] == "__main__" else parts[1]


def test_only_the_allowed_files_sit_at_the_top_level() -> None:
    top = {p.name for p in SRC.iterdir() if p.is_file()}
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert top <= TOP_LEVEL
    assert folders - {"data"} == set(LAYERS) - {"errors"}


def test_every_folder_says_its_job_and_what_it_may_import() -> None:
    for layer in LAYERS:
        if layer == "errors":
            continue
        doc = ast.get_docstring(ast.parse((SRC / layer / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()) >= 2 and "import" in doc, layer


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = []
    for imp in _imports():
        src, dst = _folder(imp.importer), _folder(imp.imported)
        if src is None or dst is None or dst not in LAYERS:
            continue
        if LAYERS.index(dst) > LAYERS.index(src):
            wrong.append(f"{imp.importer}:{imp.line} imports {imp.imported}")
    assert wrong == []


def test_nothing_outside_cli_imports_cli() -> None:
    wrong = [f"{i.importer}:{i.line}" for i in _imports()
             if _folder(i.imported) == "cli" and _folder(i.importer) != "cli"]
    assert wrong == []


def test_no_import_cycles_between_modules() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in _imports():
        target = imp.imported
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]
        if target != imp.importer and target in modules and target != "cudaresolve":
            graph[imp.importer].add(target)
    cycles = _cycles(graph)
    assert cycles == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    wrong = [f"{i.importer}:{i.line} imports {i.names[0]} from {i.imported}" for i in _imports()
             if i.names and i.names[0].startswith("_") and not i.names[0].startswith("__")]
    assert wrong == []


def test_only_render_imports_rich() -> None:
    wrong = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(m == "rich" or m.startswith("rich.") for m in mods) and _folder(name) != "render":
                wrong.append(f"{name}:{node.lineno}")
    assert wrong == []


def test_domain_code_never_formats_text() -> None:
    """Texts become words in render; the domain folders build Text values and never format them."""
    wrong = [f"{i.importer}:{i.line}" for i in _imports()
             if i.imported == "cudaresolve.text.catalogue" and _folder(i.importer) not in FORMATTERS]
    assert wrong == []


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_is_over_the_size_limit(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_the_checker_sees_a_violation() -> None:
    """The rules above are not vacuous: the import walker finds the imports that do exist."""
    imports = _imports()
    assert any(i.importer == "cudaresolve.cli" and _folder(i.imported) == "errors" for i in imports)
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
