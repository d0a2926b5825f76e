"""A project's extras and dependency groups reach the lock (issue 22, item 3), chosen as uv chooses them."""

from __future__ import annotations

import json
import sys
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, uv_synced_venv
from packaging.pylock import Pylock

from cudaresolve.errors import InvalidInput
from cudaresolve.lock.features import Selection, features_from_dict, select
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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = LocalIndex(tmp_path_factory.mktemp("features"))
    index.add("pypi", "app", "1.0")
    for name, version in (("helper", "3.0"), ("numpyish", "1.0"), ("extra-tool", "0.1"), ("doc-tool", "2.0")):
        index.add("pypi", name, version)
    with index.serve() as base:
        yield base


def _project(tmp_path: Path) -> Path:
    import tomlkit

    (tmp_path / "pyproject.toml").write_text(tomlkit.dumps(PROJECT))
    return tmp_path


def _lock(base: str, args: list[str], cwd: Path) -> Any:
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    target = ["--cpu", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", "--platform",
              "linux_x86_64"]  # fmt: skip
    return run_cli(["lock", *args, *target, mirror, "--json"], cwd, cwd / "cache")


def test_extras_and_groups_reach_the_lock_and_uv_installs_it(served: Any, tmp_path: Path) -> None:
    work = _project(tmp_path)
    plain = _lock(served, [], work)
    assert plain.returncode == 0, plain.stderr
    assert {p["name"] for p in json.loads(plain.stdout)["packages"]} == {"app", "numpyish"}  # dev by default
    chosen = _lock(served, ["--extra", "fast_path", "--group", "test", "--no-dev", "-o", "pylock.all.toml"], work)
    assert chosen.returncode == 0, chosen.stderr
    names = {p["name"] for p in json.loads(chosen.stdout)["packages"]}
    assert names == {"app", "helper", "numpyish", "extra-tool"}
    data = tomllib.loads((work / "pylock.all.toml").read_text())
    assert (data["extras"], data["dependency-groups"], data["default-groups"]) == (["fast-path"], ["test"], ["test"])
    Pylock.from_dict(data)  # valid PEP 751
    bare = _lock(served, ["--no-dev", "-o", "pylock.bare.toml"], work)
    assert {p["name"] for p in json.loads(bare.stdout)["packages"]} == {"app"}
    asked = _lock(served, ["app", "--extra", "fast-path", "-o", "pylock.x.toml"], work)
    assert asked.returncode == 1 and "--extra and --group choose from the project's pyproject.toml" in asked.stdout
    uv = find_uv()
    if uv is not None and sys.platform != "win32":
        (work / "sync").mkdir()
        (work / "sync" / "pylock.toml").write_text((work / "pylock.all.toml").read_text())
        python = uv_synced_venv(uv, work / "sync", tmp_path / "venv")
        assert python.exists()
