"""A project's extras and dependency groups reach the lock (issue 22, item 3), chosen as uv chooses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from typing import TYPE_CHECKING, Any, cast

import pytest
from local_index import LocalIndex, find_uv, fresh_venv
from packaging.markers import default_environment
from packaging.pylock import Pylock
from packaging.tags import Tag

from cudaresolve.errors import InvalidInput
from cudaresolve.install.select import select_packages
from cudaresolve.lock.features import Selection, choose, features_from_dict, select
from cudaresolve.lock.lockfile import read_lock
from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

PROJECT = {
    "project": {"dependencies": ["app"], "optional-dependencies": {"Fast_Path": ["helper==3.0"]}},
    "dependency-groups": {
        "dev": ["numpyish"],
        "test": [{"include-group": "dev"}, "extra-tool"],
        "docs": ["doc-tool"],
    },
}


def test_groups_include_others_and_dev_is_chosen_unless_no_dev() -> None:
    features = features_from_dict(PROJECT, "pyproject.toml")
    assert features.extras == {"fast-path": ("helper==3.0",)}
    assert features.groups["test"] == ("numpyish", "extra-tool")
    assert select(features, Selection()) == (("numpyish",), (), ("dev",))
    assert select(features, Selection(no_dev=True)) == ((), (), ())
    assert select(features, Selection(extras=("fast-path",), groups=("Test",), no_dev=True)) == (
        ("helper==3.0", "numpyish", "extra-tool"), ("fast-path",), ("test",)
    )  # fmt: skip  # a named group's own include of dev stays
    reqs, extras, groups = select(features, Selection(all_extras=True, all_groups=True))
    assert extras == ("fast-path",) and groups == ("dev", "docs", "test") and "doc-tool" in reqs


def test_the_project_named_in_its_own_extras_and_groups_is_its_extras() -> None:
    data = {
        "project": {"name": "My_Proj", "optional-dependencies": {
            "cuda": ["kernels>=1", "winonly ; sys_platform == 'win32'"], "test": ["pytest"],
            "all": ["my-proj[cuda,test]", "my-proj"], "linux": ["my_proj[cuda] ; sys_platform == 'linux'"],
            "loop": ["my-proj[loop,test]"]}},
        "dependency-groups": {"dev": ["my-proj[test]", "ruff"], "bad": ["my-proj[gpu]"]},
    }  # fmt: skip
    with pytest.raises(InvalidInput, match="the project has no extra named 'gpu'"):
        features_from_dict(data, "pyproject.toml")
    del data["dependency-groups"]["bad"]  # type: ignore[attr-defined]
    features = features_from_dict(data, "pyproject.toml")
    assert features.extras["all"] == ("kernels>=1", "winonly ; sys_platform == 'win32'", "pytest")
    assert features.extras["linux"] == (
        'kernels>=1; sys_platform == "linux"', 'winonly; sys_platform == "win32" and sys_platform == "linux"'
    )  # fmt: skip  # the reference's marker joins each requirement's own
    assert features.extras["loop"] == ("pytest",)  # a cycle ends
    assert features.groups["dev"] == ("pytest", "ruff")


def test_choose_keeps_each_feature_apart_and_names_the_default_group() -> None:
    features = features_from_dict(PROJECT, "pyproject.toml")
    chosen = choose(features, Selection(extras=("fast-path",), groups=("docs",)), ("app",))
    assert (chosen.base, dict(chosen.extras), chosen.default_groups) == (("app",), {"fast-path": ("helper==3.0",)},
                                                                          ("dev",))  # fmt: skip
    assert dict(chosen.groups) == {"dev": ("numpyish",), "docs": ("doc-tool",)}
    assert chosen.requirements == ("app", "helper==3.0", "numpyish", "doc-tool")
    assert choose(features, Selection(all_groups=True, no_dev=True)).default_groups == ()  # locked, not default
    assert set(choose(features, Selection(all_groups=True, no_groups=("docs",))).groups) == {"dev", "test"}
    assert dict(choose(features, Selection(no_default_groups=True)).groups) == {}
    assert choose(features, Selection(groups=("dev",), no_default_groups=True)).default_groups == ()


@pytest.mark.parametrize(
    ("data", "selection", "message"),
    [
        (PROJECT, Selection(extras=("gpu",)), "the project has no extra named 'gpu' (it has: fast-path)"),
        (PROJECT, Selection(groups=("lint",)), "the project has no group named 'lint' (it has: dev, docs, test)"),
        ({"dependency-groups": {"a": [{"include-group": "b"}], "b": [{"include-group": "a"}]}}, Selection(),
         "pyproject.toml [dependency-groups] a includes itself: a -> b -> a"),
        ({"dependency-groups": {"a": [{"include-group": "nope"}]}}, Selection(), "no group named 'nope'"),
        ({"dependency-groups": {"a": [7]}}, Selection(), "[dependency-groups] a must be a list"),
        ({"project": {"optional-dependencies": {"x": "y"}}}, Selection(), "optional-dependencies] x must be a list"),
    ],
)
def test_bad_features_are_coded_errors(data: dict[str, Any], selection: Selection, message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        select(features_from_dict(data, "pyproject.toml"), selection)
    assert message in info.value.message


PROJECT_WIDE = {
    "project": {
        "name": "Wide_App", "dependencies": ["app"],
        "optional-dependencies": {"Fast_Path": ["helper==3.0", "shared"], "all": ["wide-app[fast-path]"]},
    },
    "dependency-groups": {
        "dev": ["numpyish"],
        "test": [{"include-group": "dev"}, "extra-tool", "helper-dep"],
        "docs": ["doc-tool"],
    },
}
#: Who needs what (app -> shared; helper -> helper-dep): a package the project needs has no marker, whatever else
#: needs it; the others are installed only for the extras and groups that reach them.
MARKERS = {
    "app": None, "shared": None, "helper": "'all' in extras or 'fast-path' in extras",
    "helper-dep": "'all' in extras or 'fast-path' in extras or 'test' in dependency_groups",
    "numpyish": "'dev' in dependency_groups or 'test' in dependency_groups",
    "extra-tool": "'test' in dependency_groups", "doc-tool": "'docs' in dependency_groups",
}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = LocalIndex(tmp_path_factory.mktemp("features"))
    index.add("pypi", "app", "1.0", requires=["shared"])
    index.add("pypi", "helper", "3.0", requires=["helper-dep"])
    for name, version in (("numpyish", "1.0"), ("extra-tool", "0.1"), ("doc-tool", "2.0"), ("shared", "1.0"),
                          ("helper-dep", "0.5")):  # fmt: skip
        index.add("pypi", name, version)
    with index.serve() as base:
        yield base


def _project(tmp_path: Path, data: dict[str, Any] = PROJECT) -> Path:
    import tomlkit

    (tmp_path / "pyproject.toml").write_text(tomlkit.dumps(data))
    return tmp_path


def _lock(base: str, args: list[str], cwd: Path) -> Any:
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    target = ["--cpu", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", "--platform",
              "linux_x86_64"]  # fmt: skip
    return run_cli(["lock", *args, *target, mirror, "--json"], cwd, cwd / "cache")


def test_extras_and_groups_reach_the_lock(served: Any, tmp_path: Path) -> None:
    work = _project(tmp_path)
    plain = _lock(served, [], work)
    assert plain.returncode == 0, plain.stderr
    assert {p["name"]: p.get("marker") for p in json.loads(plain.stdout)["packages"]} == {
        "app": None, "shared": None, "numpyish": "'dev' in dependency_groups"
    }  # fmt: skip  # dev by default, and marked as dev's
    data = tomllib.loads((work / "pylock.toml").read_text())
    assert (data["extras"], data["dependency-groups"], data["default-groups"]) == ([], ["dev"], ["dev"])
    chosen = _lock(served, ["--extra", "fast_path", "--group", "test", "--no-dev", "-o", "pylock.all.toml"], work)
    assert chosen.returncode == 0, chosen.stderr
    names = {p["name"] for p in json.loads(chosen.stdout)["packages"]}
    assert names == {"app", "shared", "helper", "helper-dep", "numpyish", "extra-tool"}
    data = tomllib.loads((work / "pylock.all.toml").read_text())
    assert (data["extras"], data["dependency-groups"], data["default-groups"]) == (["fast-path"], ["test"], [])
    Pylock.from_dict(data)  # valid PEP 751
    bare = _lock(served, ["--no-dev", "-o", "pylock.bare.toml"], work)
    assert {p["name"] for p in json.loads(bare.stdout)["packages"]} == {"app", "shared"}
    assert "marker" not in (work / "pylock.bare.toml").read_text()
    asked = _lock(served, ["app", "--extra", "fast-path", "-o", "pylock.x.toml"], work)
    assert asked.returncode == 1 and "--extra and --group choose from the project's pyproject.toml" in asked.stdout


def test_an_extra_whose_every_requirement_is_for_another_platform_locks(served: Any, tmp_path: Path) -> None:
    """Found against uv on real PyPI: ``--extra win`` with ``win = ["pywin32; sys_platform == 'win32'"]`` on Linux
    failed the whole lock with ``nothing to resolve``; uv locks the project's own requirements."""
    data = {"project": {"name": "demo", "version": "1.0", "dependencies": ["app"],
                        "optional-dependencies": {"win": ["helper; sys_platform == 'win32'"]}}}  # fmt: skip
    work = _project(tmp_path, data)
    result = _lock(served, ["--extra", "win"], work)
    assert result.returncode == 0, result.stdout
    out = json.loads(result.stdout)
    assert {p["name"] for p in out["packages"]} == {"app", "shared"}
    assert "requirement-skipped" in {w["code"] for w in out["warnings"]}
    alone = run_cli(["lock", "helper; sys_platform == 'win32'", "--cpu", "--platform", "linux_x86_64",
                     "--offline", "--json", "-o", "pylock.alone.toml"], work, work / "cache")  # fmt: skip
    assert alone.returncode == 0 and json.loads(alone.stdout)["packages"] == [], alone.stdout  # an empty set, as uv
    from cudaresolve.resolve.needs import parse_requests

    with pytest.raises(InvalidInput, match="nothing to resolve"):  # no requirement at all stays an error
        parse_requests([])


def test_a_projects_uv_sources_and_indexes_are_said_to_be_unread(served: Any, tmp_path: Path) -> None:
    """Found by the real-project audit: ``[tool.uv.sources]`` and ``[tool.uv.index]`` (uv's way to take torch from a
    PyTorch index) were ignored without a word, so the lock could differ from ``uv lock``'s silently."""
    data = {"project": {"name": "demo", "version": "1.0", "dependencies": ["app"]},
            "tool": {"uv": {"sources": {"app": [{"index": "own"}]}, "index": [{"name": "own", "url": "https://x/"}],
                            "dev-dependencies": []}}}  # fmt: skip
    result = _lock(served, [], _project(tmp_path, data))
    assert result.returncode == 0, result.stdout
    [said] = [w for w in json.loads(result.stdout)["warnings"] if w["code"] == "uv-settings-ignored"]
    assert "tool.uv.sources" in said["message"] and "tool.uv.index" in said["message"]
    assert "dev-dependencies" not in said["message"]
    plain = {"project": {"name": "demo", "version": "1.0", "dependencies": ["app"]}, "tool": {"uv": {"package": True}}}
    (tmp_path / "plain").mkdir()
    other = _lock(served, [], _project(tmp_path / "plain", plain))
    assert "uv-settings-ignored" not in {w["code"] for w in json.loads(other.stdout)["warnings"]}


@pytest.fixture(scope="module")
def wide_lock(served: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One lock of every extra and group of PROJECT_WIDE (its folder)."""
    work = _project(tmp_path_factory.mktemp("wide"), PROJECT_WIDE)
    result = _lock(served, ["--all-extras", "--all-groups"], work)
    assert result.returncode == 0, result.stderr
    return work


def test_one_lock_holds_every_selection_with_markers(wide_lock: Path) -> None:
    data = tomllib.loads((wide_lock / "pylock.toml").read_text())
    assert {p["name"]: p.get("marker") for p in data["packages"]} == MARKERS
    assert (data["extras"], data["dependency-groups"], data["default-groups"]) == (
        ["all", "fast-path"], ["dev", "docs", "test"], ["dev"]
    )  # fmt: skip  # ``all`` names the project's own extra: its requirements, not a package
    pylock = Pylock.from_dict(data)
    lock = read_lock(wide_lock / "pylock.toml")
    environment = cast("dict[str, str]", default_environment())
    tags = [Tag("py3", "none", "any")]
    cases = [  # (ours, packaging's extras and groups: there the named groups replace the default ones)
        (Selection(), (), None),
        (Selection(extras=("Fast_Path",)), ("fast-path",), None),
        (Selection(groups=("docs",)), (), ("dev", "docs")),
        (Selection(groups=("docs",), no_dev=True), (), ("docs",)),
        (Selection(all_extras=True, all_groups=True, no_groups=("dev",)), ("all", "fast-path"), ("docs", "test")),
        (Selection(extras=("all",)), ("all",), None),
        (Selection(no_default_groups=True), (), ()),
    ]
    for selection, extras, groups in cases:
        ours = {p.name for p in select_packages(lock, selection, environment, source="pylock.toml").packages}
        theirs = {p.name for p, _ in pylock.select(environment=environment, tags=tags, extras=extras,
                                                    dependency_groups=groups)}  # fmt: skip
        assert ours == theirs, selection
    assert {p.name for p in select_packages(lock, Selection(no_dev=True), environment, source="x").packages} == {
        "app", "shared"
    }  # fmt: skip


def test_uv_and_install_choose_from_one_lock(wide_lock: Path, tmp_path: Path) -> None:
    uv = find_uv()
    if uv is None or sys.platform == "win32":
        pytest.skip("uv is not installed")
    python = fresh_venv(tmp_path / "uv-venv")
    env = {**os.environ, "UV_NO_CONFIG": "1"}
    command = [uv, "pip", "sync", "pylock.toml", "--python", str(python), "--no-cache", "--extra", "fast-path"]
    synced = subprocess.run(command, cwd=wide_lock, capture_output=True, text=True, timeout=120, env=env)
    assert synced.returncode == 0, synced.stderr
    assert _names(uv, python) == {"app", "shared", "helper", "helper-dep", "numpyish"}  # dev: a default group
    ours = fresh_venv(tmp_path / "our-venv")
    args = ["install", "--from", "pylock.toml", "--python", str(ours), "--cpu", "--extra", "fast-path", "--group",
            "docs", "--no-dev"]  # fmt: skip
    installed = run_cli(args, wide_lock, wide_lock / "cache")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert _names(uv, ours) == {"app", "shared", "helper", "helper-dep", "doc-tool"}
    unknown = run_cli([*args[:5], "--cpu", "--group", "lint"], wide_lock, wide_lock / "cache")
    assert unknown.returncode == 1
    assert "pylock.toml holds no group named 'lint' (it holds: dev, docs, test)" in unknown.stdout + unknown.stderr


def _names(uv: str, python: Path) -> set[str]:
    frozen = subprocess.run([uv, "pip", "freeze", "--python", str(python)], capture_output=True, text=True,
                            timeout=60, check=True).stdout  # fmt: skip
    return {line.split("==")[0].split(" @ ")[0] for line in frozen.splitlines() if line} - {"pip", "setuptools"}


def test_a_project_without_self_references_is_read_without_packaging() -> None:
    """Reading a pyproject (every lock and install does) parses no requirement that names another project: a
    warm install pays for no ``packaging`` import."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from cudaresolve.lock.features import features_from_dict\n"
        "data = {'project': {'name': 'me', 'dependencies': ['torch>=2', 'numpy'],\n"
        "        'optional-dependencies': {'test': ['pytest>=8 ; python_version >= \"3.9\"', 'Me-Too[x]'],\n"
        "                                  'all': ['me[test]']}},\n"
        "        'dependency-groups': {'dev': ['ruff', {'include-group': 'lint'}], 'lint': ['mypy']}}\n"
        "plain = features_from_dict({'project': {'name': 'me', 'optional-dependencies': data['project']\n"
        "                           ['optional-dependencies'] | {'all': ['other[x]']}}}, 'pyproject.toml')\n"
        "assert 'packaging.requirements' not in sys.modules, 'parsed'\n"
        "assert plain.extras['test'] == ('pytest>=8 ; python_version >= \"3.9\"', 'Me-Too[x]')\n"
        "full = features_from_dict(data, 'pyproject.toml')\n"
        "assert full.extras['all'] == plain.extras['test'], full.extras\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize(("links", "marker"), [(4000, ""), (300, "; python_version >= '3'")])
def test_a_long_chain_of_self_references_is_refused_at_once(links: int, marker: str) -> None:
    """Found by the adversarial hunt: ``e0 = ["me[e1]"]`` ... ``e3999 = ["me[e4000]"]`` hung every lock (each extra
    expanded the whole chain again), and 300 links with a marker ended in an internal error (a marker nested more
    than 200 deep). References nest at most 64 deep, and expand to at most 100,000 requirements."""
    extras = {f"e{i}": [f"me[e{i + 1}]{marker}"] for i in range(links)} | {f"e{links}": ["torch"]}
    with pytest.raises(InvalidInput) as caught:
        features_from_dict({"project": {"name": "me", "optional-dependencies": extras}}, "pyproject.toml")
    assert "nest more than 64 deep" in caught.value.message


def test_a_deep_chain_of_groups_without_a_cycle_is_not_called_one() -> None:
    groups: dict[str, list[object]] = {f"g{i}": [{"include-group": f"g{i + 1}"}] for i in range(100)} | {"g100": []}
    with pytest.raises(InvalidInput) as caught:
        features_from_dict({"dependency-groups": groups}, "pyproject.toml")
    assert "nest more than 64 deep" in caught.value.message and "includes itself" not in caught.value.message


def test_groups_that_each_include_the_next_several_times_expand_at_once() -> None:
    """Found by this stop's hostile-input hunt: 40 groups each including the next three times were expanded to
    3 ** 40 lines (the lock hung, its memory growing, even with requirements on the command line)."""
    import time

    groups: dict[str, list[object]] = {
        f"g{i}": [f"pkg{i}", *({"include-group": f"g{i + 1}"} for _ in range(3))] for i in range(40)
    } | {"g40": ["last"]}
    start = time.monotonic()
    features = features_from_dict({"dependency-groups": groups}, "pyproject.toml")
    assert time.monotonic() - start < 5
    assert features.groups["g0"] == (*(f"pkg{i}" for i in range(40)), "last")


def test_a_project_is_locked_only_for_a_python_its_requires_python_admits() -> None:
    """uv's rule: ``[project] requires-python >=3.12`` and a 3.11 target is an error, not a lock; a bound with a
    patch release (>=3.11.4) admits 3.11, whose patch the target does not name; a malformed one is named."""
    from cudaresolve.errors import InvalidInput
    from cudaresolve.lock.project import check_project_python, project_from_dict

    def project(spec: object) -> Any:
        return project_from_dict({"project": {"name": "p", "requires-python": spec}}, pytorch_root="https://x")

    with pytest.raises(InvalidInput, match=r"requires Python >=3\.12"):
        check_project_python(project(">=3.12"), "3.11")
    check_project_python(project(">=3.12"), "3.12")
    check_project_python(project(">=3.11.4"), "3.11")
    check_project_python(project_from_dict({"project": {"name": "p"}}, pytorch_root="https://x"), "3.8")
    for bad in ("not a spec", 3.11, "x" * 2000):
        with pytest.raises(InvalidInput, match="requires-python is no version specifier"):
            project(bad)


@pytest.mark.parametrize("data", [
    {"dependency-groups": {"Dev_X": ["a"], "dev-x": ["b"]}},
    {"project": {"name": "p", "optional-dependencies": {"GPU": ["a"], "gpu": ["b"]}}},
])  # fmt: skip
def test_two_spellings_of_one_extra_or_group_are_refused(data: dict[str, Any]) -> None:
    """uv refuses them: which one --group dev-x means is not said."""
    from cudaresolve.errors import InvalidInput

    with pytest.raises(InvalidInput, match="one name once normalized"):
        features_from_dict(data, "pyproject.toml")


def test_an_extras_own_name_in_its_markers_holds_when_it_is_chosen() -> None:
    """Found against uv on real PyPI: ``everything = ["orjson ; extra == 'everything'"]`` was left out of ``lock
    --extra everything`` (its marker read with no extra); pip and uv read the project's metadata, where the line
    holds when that extra is chosen, and a line naming another extra never does."""
    own = ["orjson ; extra == 'every-thing'", "winonly ; extra == 'every_thing' and sys_platform == 'win32'",
           "never ; extra == 'other'", "either ; extra != 'every-thing' or python_version >= '3.9'",
           "plain ; os_name == 'nt'"]  # fmt: skip
    alls = "alls ; (extra == 'all' or extra == 'x') and platform_machine == 'x86_64'"
    data = {"project": {"name": "me", "optional-dependencies": {"Every_Thing": own, "all": ["me[every-thing]", alls]}}}
    features = features_from_dict(data, "pyproject.toml")
    assert features.extras["every-thing"] == (
        "orjson", 'winonly; sys_platform == "win32"', 'either; python_version >= "3.9"', "plain ; os_name == 'nt'"
    )  # fmt: skip
    assert features.extras["all"] == (*features.extras["every-thing"], 'alls; platform_machine == "x86_64"')


def test_an_extra_naming_itself_in_a_marker_reaches_the_lock(served: Any, tmp_path: Path) -> None:
    fast = ["helper ; extra == 'fast'", "extra-tool ; extra == 'x'"]
    data = {"project": {"name": "demo", "version": "1.0", "dependencies": ["app"],
                        "optional-dependencies": {"fast": fast}}}  # fmt: skip
    work = _project(tmp_path, data)
    result = _lock(served, ["--extra", "fast"], work)
    assert result.returncode == 0, result.stdout
    packages = {p["name"]: p.get("marker") for p in json.loads(result.stdout)["packages"]}
    assert packages == {"app": None, "shared": None, "helper": "'fast' in extras", "helper-dep": "'fast' in extras"}


def test_a_dependency_naming_an_extra_in_its_marker_belongs_to_that_extra() -> None:
    """Found against uv on real PyPI: ``dependencies = ["attrs ; extra == 'fast'"]`` was left out of ``lock --extra
    fast`` (``requirement-skipped``); in the built metadata the line is the extra's, and uv locks it."""
    data = {"project": {"name": "me", "optional-dependencies": {"fast": ["idna"], "slow": []}}}
    features = features_from_dict(data, "pyproject.toml")
    base = ("six", "attrs ; extra == 'fast'", "certifi ; extra != 'fast' and os_name == 'posix'")
    chosen = choose(features, Selection(extras=("fast", "slow")), base)
    assert chosen.base == ("six", 'certifi; os_name == "posix"')
    assert chosen.extras == {"fast": ("idna", "attrs"), "slow": ('certifi; os_name == "posix"',)}
    assert choose(features, Selection(), base).extras == {}
