"""Why an index release that fits by version is still not taken (issue 26, item 7): every fitting release
yanked, every one a pre-release, or a ``-c`` line ruling them out each get their own finding, never the
bare "requires demo, but no common set of versions is chosen" that named none of them."""

from __future__ import annotations

import pytest
from packaging.version import Version

from cudaresolve.db.database import load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.solve import solve
from test_source_solve import MINI, DictSource, target

Projects = dict[str, list[tuple[str, list[str], bool]]]


def _findings(
    requests: list[str], projects: Projects, constraints: tuple[str, ...] = (), prerelease: str = "explicit"
) -> list[tuple[str, str]]:
    with pytest.raises(NoSolution) as info:
        solve(requests, load_compat(MINI), target(), source=DictSource(projects), constraints=constraints,
              prerelease=prerelease)
    return [(f.code, f.message) for f in info.value.findings]


@pytest.mark.parametrize(("requests", "projects", "package"), [
    (["demo"], {"demo": [("1.0", [], True), ("1.1", [], True)]}, "demo"),
    (["demo>=1"], {"demo": [("0.9", [], False), ("1.0", [], True)]}, "demo"),  # the one that fits is yanked
    (["app"], {"app": [("1.0", ["lib"], False)], "lib": [("1.0", [], True)]}, "lib"),  # a dependency's
])
def test_every_fitting_release_yanked(requests: list[str], projects: Projects, package: str) -> None:
    ((code, message),) = _findings(requests, projects)
    assert code == "yanked-only" and f"every {package} release" in message and f"{package}==" in message


@pytest.mark.parametrize(("requests", "projects"), [
    (["demo"], {"demo": [("1.0rc1", [], False), ("2.0b1", [], False)]}),
    (["app"], {"app": [("1.0", ["demo>=0.9"], False)], "demo": [("1.0a1", [], False), ("0.5", [], False)]}),
])
def test_every_fitting_release_a_pre_release(requests: list[str], projects: Projects) -> None:
    ((code, message),) = _findings(requests, projects)  # under --prerelease explicit
    assert code == "pre-release-only" and "is a pre-release" in message and "--prerelease" in message
    taken = solve(requests, load_compat(MINI), target(), source=DictSource(projects)).solution  # the default: uv's
    newest = {name: max(Version(v) for v, _, _ in releases) for name, releases in projects.items()}
    assert {p.name: Version(p.version) for p in taken.packages} == newest


def test_live_pre_releases_are_named_before_yanked_ones() -> None:
    """Every release a pre-release and a few of them yanked (opentelemetry-exporter-prometheus): the finding
    names the live pre-releases, never a yanked file to pin; by default the newest live one is taken."""
    projects: Projects = {"demo": [("1.12.0rc1", [], True), ("0.66b2", [], False), ("0.65b0", [], False)]}
    ((code, message),) = _findings(["demo"], projects)
    assert code == "pre-release-only" and "0.66b2" in message and "1.12.0rc1" not in message
    taken = solve(["demo"], load_compat(MINI), target(), source=DictSource(projects)).solution
    assert [(p.name, p.version) for p in taken.packages] == [("demo", "0.66b2")]


@pytest.mark.parametrize(("requests", "projects", "constraint"), [
    (["demo"], {"demo": [("1.0", [], False)]}, "demo<1"),
    (["app"], {"app": [("1.0", ["lib>=1"], False)], "lib": [("1.0", [], False), ("0.5", [], False)]}, "lib<1"),
    (["demo>=2"], {"demo": [("2.0", [], False), ("3.0", [], False)]}, "demo==1.0"),
])
def test_a_constraint_that_rules_out_every_fitting_release(
    requests: list[str], projects: Projects, constraint: str
) -> None:
    ((code, message),) = _findings(requests, projects, (constraint,))
    assert code == "constraint-excludes" and f"the constraint {constraint} (-c)" in message


def test_yanked_only_and_an_impossible_constraint_read_differently() -> None:
    yanked = _findings(["demo"], {"demo": [("1.0", [], True)]})
    constrained = _findings(["demo"], {"demo": [("1.0", [], False)]}, ("demo<1",))
    assert yanked != constrained
    assert all("no common set" not in m and "demo  requires" not in m for _, m in yanked + constrained)


def test_what_pip_takes_is_still_taken() -> None:
    source = DictSource({"demo": [("1.0", [], True), ("0.9", [], False), ("2.0rc1", [], False)]})
    solution = solve(["demo"], load_compat(MINI), target(), source=source).solution
    assert [(p.name, p.version) for p in solution.packages] == [("demo", "0.9")]
    pinned = solve(["demo==1.0"], load_compat(MINI), target(), source=source).solution
    assert [(p.name, p.version) for p in pinned.packages] == [("demo", "1.0")]  # PEP 592: an exact pin


def test_a_yanked_release_pinned_exactly_by_a_constraint_is_taken() -> None:
    """Found against uv on real PyPI: ``-c`` holding ``requests==2.32.0`` (yanked) with ``requests`` asked for
    failed with ``yanked-only`` telling the user to pin it exactly, which the constraint did; uv takes it (an
    exact pin in a constraint counts, PEP 592). A constraint that is no exact pin still passes it over."""
    source = DictSource({"demo": [("1.0", [], True), ("0.9", [], False)], "app": [("1.0", ["demo"], False)]})
    for asked in (["demo"], ["app"]):
        solution = solve(asked, load_compat(MINI), target(), source=source, constraints=("demo==1.0",)).solution
        assert ("demo", "1.0") in [(p.name, p.version) for p in solution.packages]
    ((code, message),) = _findings(["demo"], {"demo": [("1.0", [], True)]}, ("demo>=1.0",))
    assert code == "yanked-only" and "demo==1.0" in message


def test_a_request_the_failed_search_never_read_gets_no_finding() -> None:
    """Found on real PyPI: ``lock nonexistent-pkg six`` said, beside the right finding, that six "has no release any
    version; the newest known release is none (known packages: fbgemm-gpu, ...)": six was never read (the search
    ended at the first name) and fell through to the database-only explanation, naming the GPU packages."""
    findings = _findings(["nothere", "demo"], {"demo": [("1.0", [], False)]})
    assert [code for code, _ in findings] == ["no-such-version"]
    assert "nothere" in findings[0][1] and "known packages" not in findings[0][1]
