"""The solver over a dict-backed ``PackageSource``: markers, extras, yanked files, pre-releases, one index per name.

No HTTP: ``DictSource`` plays the indexes. The database is tests/fixtures/compat-mini.toml, so the
GPU packages keep their hardware rules while everything else comes from the source.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import IndexUnavailable, NoSolution
from cudaresolve.resolve.direct import parse_direct
from cudaresolve.resolve.model import FileKind
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.source import Artifact, IndexRelease, Unusable
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cudaresolve.resolve.source import Builds

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
PYPI = "https://pypi.org/simple"


class DictSource:
    """Releases as ``{name: [(version, requires, yanked)]}``; counts metadata reads."""

    def __init__(
        self, projects: dict[str, list[tuple[str, list[str], bool]]], direct: dict[str, list[str]] | None = None
    ) -> None:
        self.projects = projects
        self.direct = direct or {}  # name -> Requires-Dist of the wheel a direct reference names
        self.metadata_reads: list[str] = []
        self.requires_python: dict[str, str] = {}  # "name version" -> the Requires-Python its metadata states
        self.unbuildable: set[str] = set()  # "name version": an sdist whose metadata cannot be had

    def index_for(self, name: str) -> str:
        return PYPI

    def releases(self, name: str) -> Sequence[IndexRelease]:
        if name == "offline-only":
            raise IndexUnavailable(Text.of("index.not-cached", url=name))
        rows = sorted(self.projects.get(name, []), key=lambda r: Version(r[0]), reverse=True)
        return [self._release(name, v, yanked) for v, _, yanked in rows]

    def _release(self, name: str, version: str, yanked: bool) -> IndexRelease:
        url = f"https://files.example.org/{name}-{version}-py3-none-any.whl"
        artifact = Artifact(filename=url.rsplit("/", 1)[1], url=url, sha256="0" * 64)
        return IndexRelease(name=name, version=Version(version), index_url=PYPI, artifact=artifact, yanked=yanked)

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        return self._release(name, version, False)  # every database build is listed, with no requirements

    def direct_release(self, name: str, url: str) -> IndexRelease:
        ref = parse_direct(name, url)
        artifact = Artifact(filename=ref.filename, url=ref.url, sha256="1" * 64, kind=FileKind.ARCHIVE)
        return IndexRelease(name=ref.name, version=ref.version, index_url="", artifact=artifact)

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        self.metadata_reads.append(f"{release.name} {release.version}")
        if release.artifact.kind is FileKind.ARCHIVE:
            return [Requirement(r) for r in self.direct.get(release.name, [])]
        for version, reqs, _ in self.projects.get(release.name, []):
            if Version(version) == release.version:
                return [Requirement(r) for r in reqs]
        return []

    def unusable(self, release: IndexRelease) -> Unusable | None:
        key = f"{release.name} {release.version}"
        return Unusable(why=Text.of("index.not-cached", url=key), malformed=False) if key in self.unbuildable else None

    def python_excluded(self, release: IndexRelease) -> str | None:
        required = self.requires_python.get(f"{release.name} {release.version}")
        return required if required is not None and not SpecifierSet(required).contains("3.11.0") else None

    def prefetch(self, names: Iterable[str | Requirement], *, builds: Builds | None = None) -> None:
        pass

    def prefetch_pages(self, pages: Iterable[tuple[str, str]]) -> None:
        pass


def target(platform: str = "linux_x86_64") -> Target:
    gpu = Gpu(name="GPU", cc=parse_cc("8.0"))
    return Target(gpus=(gpu,), driver=parse_driver("535.104.05"), python="3.11", platform=platform)


def pins(requests: list[str], source: DictSource, platform: str = "linux_x86_64") -> dict[str, str]:
    solution = solve(requests, load_compat(MINI), target(platform), source=source).solution
    return {p.name: p.version for p in solution.packages}


PROJECTS = {
    "app": [("1.0", ["lib>=1", "winonly; sys_platform == 'win32'", "extra-dep; extra == 'fancy'"], False)],
    "lib": [("1.0", [], False), ("1.5", [], True), ("2.0rc1", [], False)],
    "winonly": [("1.0", [], False)],
    "extra-dep": [("3.0", ["lib<1.2"], False)],
}


def test_markers_are_evaluated_for_the_target_not_this_interpreter() -> None:
    assert pins(["app"], DictSource(PROJECTS)) == {"app": "1.0", "lib": "1.0"}
    assert pins(["app"], DictSource(PROJECTS), platform="win_amd64") == {"app": "1.0", "lib": "1.0", "winonly": "1.0"}


def test_extras_add_their_requirements_and_keep_one_version() -> None:
    assert pins(["app[fancy]"], DictSource(PROJECTS)) == {"app": "1.0", "lib": "1.0", "extra-dep": "3.0"}


def test_yanked_only_when_pinned_exactly_and_prereleases_only_when_asked() -> None:
    source = DictSource(PROJECTS)
    assert pins(["lib"], source) == {"lib": "1.0"}  # not yanked 1.5, not 2.0rc1
    assert pins(["lib==1.5"], source) == {"lib": "1.5"}  # PEP 592: an exact pin may take a yanked file
    assert pins(["lib==1.*"], source) == {"lib": "1.0"}  # a wildcard is a range: pip and uv pass 1.5 over
    assert pins(["lib>=2.0rc1"], source) == {"lib": "2.0rc1"}


def test_marker_false_request_is_left_out() -> None:
    assert pins(["lib", "winonly; sys_platform == 'win32'"], DictSource(PROJECTS)) == {"lib": "1.0"}


def test_no_release_for_the_target_names_the_package() -> None:
    with pytest.raises(NoSolution) as info:
        pins(["lib>=3"], DictSource(PROJECTS))
    finding = info.value.findings[0]
    assert finding.code == "no-such-version" and finding.package == "lib"


def test_metadata_is_read_only_for_pinned_releases() -> None:
    source = DictSource(PROJECTS)
    pins(["app"], source)
    assert sorted(source.metadata_reads) == ["app 1.0", "lib 1.0"]


def test_a_release_whose_metadata_excludes_the_target_python_is_passed_over_for_an_older_one() -> None:
    """pip's and uv's rule: the metadata's Requires-Python rules a release out, and the search goes on."""
    projects = {**PROJECTS, "newpy": [("1.0", [], False), ("2.0", ["lib"], False)], "uses": [("1.0", ["newpy"], False)]}
    source = DictSource(projects)
    source.requires_python = {"newpy 2.0": ">=3.12", "newpy 1.0": ">=3.8"}
    assert pins(["newpy"], source) == {"newpy": "1.0"}  # no lib: 2.0's Requires-Dist never counted
    assert pins(["uses"], source) == {"uses": "1.0", "newpy": "1.0"}
    assert pins(["newpy[any]"], source) == {"newpy": "1.0"}


def test_when_requires_python_excludes_every_release_the_finding_says_so() -> None:
    source = DictSource({"newpy": [("1.0", [], False), ("2.0", [], False)]})
    source.requires_python = {"newpy 2.0": ">=3.12", "newpy 1.0": ">=3.12"}
    with pytest.raises(NoSolution) as info:
        pins(["newpy"], source)
    assert [(f.code, f.package, f.required, f.found) for f in info.value.findings] == [
        ("requires-python", "newpy", ">=3.12", "3.11")
    ]


def test_a_release_whose_sdist_cannot_be_built_is_passed_over_for_an_older_one() -> None:
    # iopath 0.1.10 has only an sdist with dynamic metadata; under --no-build (or a failed build) the solver
    # takes the newest release whose metadata can be had, as it does for a Requires-Python that does not fit
    source = DictSource({"app": [("1.0", ["dep"], False)], "dep": [("0.9", [], False), ("0.10", ["x"], False)]})
    source.unbuildable = {"dep 0.10"}
    assert pins(["app"], source) == {"app": "1.0", "dep": "0.9"}


def test_when_no_release_can_be_used_without_a_build_the_finding_names_the_sdist() -> None:
    source = DictSource({"dep": [("0.9", [], False), ("0.10", [], False)]})
    source.unbuildable = {"dep 0.10", "dep 0.9"}
    with pytest.raises(NoSolution) as info:
        pins(["dep"], source)
    assert [(f.code, f.package) for f in info.value.findings] == [("sdist-unusable", "dep")]
    assert format_text(info.value.findings[0].text).startswith("dep 0.10 has only an sdist for this target")


def test_an_unavailable_listing_passes_through_for_the_caller_to_fall_back() -> None:
    with pytest.raises(IndexUnavailable):
        pins(["offline-only"], DictSource(PROJECTS))


def test_gpu_package_keeps_database_rules_and_gets_metadata_dependencies() -> None:
    versions = ("2.8.0+cu118", "2.8.0+cu121", "2.7.1+cu118", "2.7.1+cu121")
    projects = {**PROJECTS, "torch": [(v, ["lib"], False) for v in versions]}
    found = pins(["torch"], DictSource(projects))
    assert found["torch"] == "2.8.0+cu121"  # the database's choice for this driver and GPU
    assert found["lib"] == "1.0"  # from the build's own metadata


def test_gpu_package_met_only_through_metadata_keeps_database_rules() -> None:
    """``app`` needs torch; torch was never requested, yet it is the database's build for this target."""
    versions = ("2.8.0+cu118", "2.8.0+cu121", "2.7.1+cu118", "2.7.1+cu121")
    projects = {**PROJECTS, "torch": [(v, [], False) for v in versions], "needs-torch": [("1.0", ["torch>=2"], False)]}
    assert pins(["needs-torch"], DictSource(projects)) == {"needs-torch": "1.0", "torch": "2.8.0+cu121"}


class _Uncached(DictSource):
    """The builds of one index are listed; every other index's page cannot be read (host down, not cached)."""

    def __init__(self, cached_index: str, error: type[IndexUnavailable]) -> None:
        super().__init__({})
        self.cached_index, self.error, self.asked = cached_index, error, []

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        self.asked.append(index_url)
        if index_url.rstrip("/") != self.cached_index:
            raise self.error(Text.of("index.not-cached", url=f"{index_url}/{name}/"))
        return self._release(name, version, False)


def _best_and_runner_up() -> tuple[str, str]:
    """The index of the best torch build for ``target()`` and that of a build from another index."""
    db = load_compat(MINI)
    best = solve(["torch"], db, target()).solution.packages[0]
    other = next(
        b.index_url
        for b in solve(["torch"], db, target()).catalog.for_name("torch")
        if b.index_url.rstrip("/") != best.index.rstrip("/")
    )
    return best.index.rstrip("/"), other.rstrip("/")


def test_an_index_that_cannot_be_read_is_passed_over_for_one_that_answers() -> None:
    """A host that cannot be reached (or, offline, a page the cache lacks) does not stop the search: another
    index's build is taken, and the flow warns about the better set it could not fetch."""
    _, other = _best_and_runner_up()
    solution = solve(["torch"], load_compat(MINI), target(), source=_Uncached(other, IndexUnavailable)).solution
    assert solution.packages[0].index.rstrip("/") == other


def test_a_build_pinned_after_a_clash_with_a_pin_still_gets_its_metadata_dependencies() -> None:
    """torch 2.8.0 is pinned first; fbgemm-gpu 1.2.0 (torch==2.7.*) is then pinned beside it, and resolvelib
    re-pins torch to 2.7.1 rather than rejecting fbgemm-gpu: its Requires-Dist (lib) must still be in the set
    (vllm 0.32.0 beside torch on aarch64 Python 3.13 was locked with none of its 70 requirements)."""
    versions = ("2.8.0+cu121", "2.7.1+cu121", "2.7.1+cu118")
    projects = {
        "torch": [(v, [], False) for v in versions],
        "fbgemm-gpu": [(v, ["lib"], False) for v in ("1.2.0+cu121", "1.2.0+cu118")],
        "app": [("1.0", ["fbgemm-gpu"], False)],
        "lib": [("1.0", [], False)],
    }
    assert pins(["torch", "app"], DictSource(projects)) == {
        "app": "1.0", "fbgemm-gpu": "1.2.0+cu121", "lib": "1.0", "torch": "2.7.1+cu121",
    }
