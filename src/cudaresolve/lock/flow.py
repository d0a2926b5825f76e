"""Lock as a user runs it: gather the request, solve, add hashes online, write. Does I/O.

The pure parts live elsewhere (``resolve.solve``, ``wheels``, ``model``, ``lockfile``); this module
reads ``pyproject.toml``, the database and the target (``prepare``), asks the indexes through
httpx with the on-disk cache (``resolve_inputs``) and writes the lock atomically (``lock``).
Network failure never fails a lock: it falls back to the embedded data with a warning; a
pylock.toml, which needs hashes (PEP 751), is then not written at all, never under another name.

The request is a plain value (``LockRequest``) that the command line builds from its flags; this
module never sees argparse.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from cudaresolve.errors import IndexUnavailable, InvalidInput, NoSolution
from cudaresolve.lock.network import helper_ahead, index_policy, page_fetcher, run_client, tls_ahead
from cudaresolve.lock.request import LockInputs, LockRequest, all_mirrors
from cudaresolve.text.findings import Notice, warning
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.index.page_fetcher import PageFetcher
    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.index.transport import TlsAhead
    from cudaresolve.lock.previous import Change
    from cudaresolve.resolve.catalog import Catalog
    from cudaresolve.resolve.model import Solution

__all__ = [
    "LockInputs",
    "LockResult",
    "lock",
    "prepare",
    "resolve_inputs",
]

Format = Literal["pylock", "requirements"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LockResult:
    solution: Solution
    path: str | None  # None: nothing was written (see ``lock``)
    format: str
    complete: bool = True
    changes: tuple[Change, ...] = ()  # how the pins moved from the lock that was there before
    unchanged: bool = False  # the lock there already said exactly this: it was left as it was

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.solution.to_dict(), "complete": self.complete, "output": self.path, "format": self.format,
            "unchanged": self.unchanged, "changes": [c.to_dict() for c in self.changes],
        }  # fmt: skip


def prepare(request: LockRequest, *, store_db: bool = True) -> LockInputs:
    """Requirements from the request, else ``pyproject.toml``; then the database, mirrors and target. ``store_db``:
    a database built now is stored in the cache at once; False leaves that to ``db.deferred.stores_held``."""
    from cudaresolve.db.database import load_compat
    from cudaresolve.lock.project import load_project
    from cudaresolve.target.build import build_target

    db = load_compat(request.compat, store=store_db)
    project = load_project(request.project, pytorch_root=db.pytorch_index_root)
    requirements, chosen = request.requirements, None
    if request.requirements and request.features.asked:
        raise InvalidInput(Text("lock.feature.needs-project"), hint=Text("lock.feature.needs-project.hint"))
    editables: tuple[str, ...] = ()
    if not request.requirements:  # the project's, with the extras and groups chosen (``features.choose``)
        from cudaresolve.lock.features import choose

        base, selection = project.requirements, request.features
        if project.dynamic:  # its backend says what it needs: the project itself, locked editable (uv's rule)
            from cudaresolve.core.platforms import canonical_name
            from cudaresolve.lock.project import built_project

            own, selection = built_project(project, request.project.parent, selection)
            base = (own, *(() if "dependencies" in project.dynamic else base))
            editables = (str(canonical_name(str(project.name))),)
        chosen = choose(project.features, selection, base)
        requirements = chosen.requirements
        editables = (*editables, *project.editables)  # ``[tool.uv.sources]`` folders marked editable
    if not requirements:
        raise InvalidInput(Text("lock.no-requirements"), hint=Text("lock.no-requirements.hint"))
    mirrors = all_mirrors(request, project, db)
    gpu_source = request.gpu_source or project.gpu_source or "auto"
    if request.gpu_source is not None:
        from cudaresolve.lock.project import parse_gpu_source

        parse_gpu_source(request.gpu_source, "--gpu-source")
    import os

    from cudaresolve.index.extra import extra_sources

    extra = extra_sources(
        request.extra_index_urls, request.find_links, trusted_hosts=request.trusted_hosts,
        environ=os.environ if request.environ is None else request.environ, pytorch_root=db.pytorch_index_root,
    )  # fmt: skip
    target = build_target(request.target, db)
    if not request.requirements:  # the project's own: for a Python its requires-python admits, as uv checks
        from cudaresolve.lock.project import check_project_python

        check_project_python(project, target.python)
        if project.uv_settings:  # what ``uv lock`` would read and this lock does not: said, never silent
            said = warning("uv-settings-ignored", "lock.uv-settings-ignored", keys=project.uv_settings)
            extra = replace(extra, notices=(*extra.notices, said))
    return LockInputs(
        extra=extra,
        requirements=requirements,
        constraints=request.constraints,
        target=target,
        db=db,
        offline=request.offline,
        mirrors=mirrors,
        package_indexes=project.package_indexes,
        gpu_source=gpu_source,
        no_build=request.no_build,
        chosen=chosen,
        exclude_newer=request.exclude_newer,
        prerelease=request.prerelease,
        unchecked=request.requirement_lines,
        editables=editables,
    )


def resolve_inputs(
    inputs: LockInputs,
    *,
    preferences: Mapping[str, str] | None = None,
    tls: TlsAhead | None = None,
    helper: PageFetcher | None = None,
) -> Solution:
    """The whole environment from the indexes' metadata; else (offline cache miss, index down) the
    database's answer for its own packages, with hashes where the cache or index has them, marked
    incomplete with a warning naming what was missing. ``preferences``: a previous lock's pins, kept where they
    still fit (``solve``); ``tls``: the TLS context made ahead for the run (``run_client``); ``helper``: the page
    fetcher started ahead for it (``helper_ahead``), which its caller ends."""
    from cudaresolve.errors import IndexUnavailable
    from cudaresolve.lock.cached import hashes_from_cache, network_failure, no_pages_cached, not_cached
    from cudaresolve.resolve.catalog import build_catalog
    from cudaresolve.resolve.solve import solve

    if inputs.unchecked:  # a requirement file's lines: each a requirement before anything is solved from them
        from cudaresolve.lock.reqfiles import check_lines

        check_lines(inputs.unchecked)
    heard: list[Notice] = []  # the listings' notices, kept when the whole-environment pass fails
    policy = index_policy(inputs)  # one for the run, every pass: one network deadline, one cache
    catalog = build_catalog(inputs.db, inputs.target, lazy=True, gpu_source=inputs.gpu_source)  # both passes
    missing: Text | None = None
    told: Text | None = None  # the hint of that failure, when it names its own way out
    unknown, direct = _unknown_requests(inputs)
    local = any(u.startswith("file:") for u in inputs.extra.find_links)  # a folder of wheels needs no cache
    if direct or local or not (inputs.offline and no_pages_cached()) or _nothing_to_read(inputs):  # else offline
        # on an empty cache it cannot succeed
        try:
            return _solve_whole(
                inputs, heard, catalog, policy=policy, preferences=preferences, tls=tls, helper=helper
            )
        except IndexUnavailable as e:
            missing = e.text
            told = e.hint_text if e.hint_text is not None and e.hint_text.key != "index.hint" else None
            fallback = _cpu_from_pypi(inputs, catalog, e, policy, preferences, (tls, helper)) if not direct else None
            if fallback is not None:
                return fallback
            if direct:  # a file named by URL is known only by reading it
                raise NoSolution(
                    Text.of("resolve.direct-unavailable", package=direct[0], reason=missing),
                    hint=Text("resolve.direct-unavailable.hint"),
                ) from e
    if unknown:
        index = inputs.package_indexes.get(unknown[0], inputs.db.default_index)
        if missing is not None and not inputs.offline and network_failure(missing):  # the network, not the data
            raise IndexUnavailable(
                Text.of("resolve.index-failed", package=unknown[0], reason=missing),
                hint=Text("resolve.index-failed.hint"),
            )
        reason = missing or not_cached(inputs.mirrors, unknown[0], index)
        if missing is not None and not inputs.offline:  # online, the index answered with what cannot be used
            raise NoSolution(Text.of("resolve.index-unusable", package=unknown[0], reason=reason),
                             hint=told or Text("resolve.index-unusable.hint"))  # fmt: skip
        raise NoSolution(
            Text.of("resolve.unknown-package", package=unknown[0], reason=reason),
            hint=Text("resolve.unknown-package.hint"),
        )
    solution = solve(
        inputs.requirements, inputs.db, inputs.target, catalog=catalog, constraints=inputs.constraints,
        preferences=preferences,
    ).solution
    if missing is None:  # the pass was skipped: name the first page the chosen set needs
        named = sorted(solution.packages, key=lambda p: p.name != inputs.db.anchor)  # torch first, if there
        first = named[0] if named else None
        missing = not_cached(inputs.mirrors, first.name, first.index) if first else Text("index.network-error")
    solution = hashes_from_cache(solution, policy)  # what the first pass fetched is in the cache now
    notice = warning("incomplete-lock", "lock.incomplete", reason=missing)
    solution = _with_notices(solution, heard)
    return replace(solution, complete=False, warnings=(*solution.warnings, notice))


def _nothing_to_read(inputs: LockInputs) -> bool:
    """Whether the whole-environment pass reads no page at all: no requirement applies on the target (each one's
    marker is false, or there is none) and no project is locked editable. Offline on an empty cache it then
    succeeds, with a lock of nothing, as it does online."""
    from cudaresolve.resolve.needs import skipped_requests
    from cudaresolve.target.environment import marker_environment

    reqs = inputs.requirements
    return not inputs.editables and len(skipped_requests(reqs, marker_environment(inputs.target))) == len(reqs)


def _cpu_from_pypi(
    inputs: LockInputs,
    catalog: Catalog,
    failure: IndexUnavailable,
    policy: IndexPolicy,
    preferences: Mapping[str, str] | None,
    ahead: tuple[TlsAhead | None, PageFetcher | None],
) -> Solution | None:
    """A CPU target whose cpu builds could not be had (the PyTorch index down): the set PyPI supplies, its CUDA
    wheels of the packages that run without a GPU (``catalog._cpu_from_pypi``), with the warning that names the
    smaller cpu set that could not be reached; None when that is no way out (not a CPU target, ``--gpu-source``
    set, or PyPI fails too). ``ahead``: ``_solve_whole``'s ``tls`` and ``helper``."""
    tls, helper = ahead
    from cudaresolve.errors import IndexUnavailable
    from cudaresolve.resolve.catalog import build_catalog

    cpu = inputs.db.variant("cpu")
    if not inputs.target.is_cpu or inputs.gpu_source != "auto" or cpu is None:
        return None
    if not inputs.db.package_facts.runs_without_gpu:
        return None
    pypi = replace(inputs, gpu_source="pypi")
    pypi_catalog = build_catalog(inputs.db, inputs.target, lazy=True, gpu_source="pypi")
    try:
        return _solve_whole(
            pypi, [], pypi_catalog, policy=policy, down={cpu.index_url: failure.text}, ideal=catalog,
            preferences=preferences, tls=tls, helper=helper,
        )
    except (IndexUnavailable, NoSolution):
        return None


def _unknown_requests(inputs: LockInputs) -> tuple[list[str], list[str]]:
    """The requested packages the database does not know (only index metadata can resolve them), and those
    a direct reference names (only their file can)."""
    from cudaresolve.resolve.solve import parse_requests
    from cudaresolve.target.environment import marker_environment

    needs = parse_requests(inputs.requirements, marker_environment(inputs.target), direct=True)
    unknown = [n.name for n in needs if n.name not in inputs.db.package_names]
    return unknown, [n.name for n in needs if n.url]


def _solve_whole(
    inputs: LockInputs,
    heard: list[Notice],
    catalog: Catalog,
    *,
    policy: IndexPolicy,
    down: Mapping[str, Text] | None = None,
    ideal: Catalog | None = None,
    preferences: Mapping[str, str] | None = None,
    tls: TlsAhead | None = None,
    helper: PageFetcher | None = None,
) -> Solution:
    """Every requirement and dependency resolved over the indexes (``index.source``), for the target. ``down``:
    indexes an earlier pass found failing; ``ideal``: the catalog whose best set the warning about a set from
    PyPI compares with (default ``catalog``)."""
    from cudaresolve.index.build_metadata import build_policy
    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.fitting import tag_filter
    from cudaresolve.index.source import IndexSource
    from cudaresolve.resolve.solve import skipped_requests, solve
    from cudaresolve.target.environment import marker_environment

    db, target = inputs.db, inputs.target
    tags = inputs.wheel_tags()
    with run_client(inputs.offline, tls) as http, page_fetcher(policy, tls, helper) as fetcher:
        # only the target's wheels of each page are parsed; most pages fetched and parsed in a helper process
        client = IndexClient(http, policy, keep=tag_filter(tags), fetcher=fetcher)
        source = IndexSource(
            client,
            default_index=db.default_index,
            tags=tags,
            python=target.python,
            package_indexes=inputs.package_indexes,
            environment=marker_environment(target),
            skip=db.package_names,
            platform=target.platform,
            build=build_policy(db.default_index, inputs.mirrors, no_build=inputs.no_build),
            extra_indexes=(*inputs.extra.indexes, *inputs.extra.find_links),
            find_links=inputs.extra.find_links,
            exclude_newer=inputs.exclude_newer,
        )
        try:
            resolved = solve(
                inputs.requirements, db, target, source=source, catalog=catalog, constraints=inputs.constraints,
                preferences=preferences, prerelease=inputs.prerelease,
            )
            from cudaresolve.lock.feature_markers import marked  # packages only some extras or groups need

            solution = marked(resolved, inputs.chosen, db=db, source=source, environment=marker_environment(target))
        except BaseException as e:
            source.close(abandon=not isinstance(e, Exception))  # Ctrl-C: do not wait for the walk ahead
            heard.extend(source.notices())
            raise
        source.close()  # the walk ahead ends before the client does, and before its failures are read
        from cudaresolve.lock.computed import hash_unhashed

        solution, hashed = hash_unhashed(solution, client)  # files an index lists without a hash
    from cudaresolve.lock.fallback_set import passed_over, unreachable_set_notice
    from cudaresolve.resolve.model import FileKind

    failures = {**(down or {}), **source.failures()}
    skipped = passed_over(solution, failures)  # indexes that failed but served nothing this lock holds
    notices = source.notices(passed_over=skipped, pinned={p.name: p.version for p in solution.packages})
    lost = {i: failures[i] for i in skipped}
    # the database's best set knows no upload times: under --exclude-newer it may name releases the date leaves out
    better = None if inputs.exclude_newer else unreachable_set_notice(solution, inputs.requirements, db,
                                                                      ideal or catalog, lost)  # fmt: skip
    notices += [better] if better is not None else []
    notices += [
        warning("requirement-skipped", "lock.requirement-skipped", requirement=text)
        for text in skipped_requests(inputs.requirements, marker_environment(target))
    ]
    unlisted = [p for p in solution.packages if not p.url or (not p.sha256 and p.kind is not FileKind.DIRECTORY)]
    from cudaresolve.lock.wheels import extra_notices, not_listed, sdist_notices

    notices += [not_listed(p, target, inputs.mirrors) for p in unlisted]
    notices += sdist_notices(solution) + extra_notices(resolved.pins.values(), source.extras_missing) + hashed
    solution = _with_notices(solution, [*inputs.extra.notices, *notices])
    unusable = [n.message for n in source.notices(passed_over=skipped) if n.code == "sdist-unusable"]
    failed = (*sorted(failures), *sorted(set(unusable)))  # releases passed over, held by the set or not
    solution = replace(solution, failed=failed) if failed else solution
    return replace(solution, complete=False) if unlisted else solution


def _with_notices(solution: Solution, notices: list[Notice]) -> Solution:
    extra = tuple(n for n in notices if n not in solution.warnings)
    return replace(solution, warnings=solution.warnings + extra) if extra else solution


def lock(request: LockRequest, *, output: str | None, fmt: Format, lang: str = "en") -> LockResult:
    """Resolve and write the lock exactly where asked (``output``, else the format's default).

    A pylock.toml needs a hash for every wheel (PEP 751). Without them (offline, or the index
    failed) nothing is written: with no ``-o`` the chosen stack comes back with ``complete`` false
    and a ``no-lock-written`` warning; a named ``-o`` is an error with a hint. Requirements are
    written as asked, with a header saying they are not a complete lock when hashes are missing.

    A lock already at ``path`` that still answers this request is kept as it is and nothing is solved
    (``lock.keep``), unless ``-U``/``-P`` asked for moves, or it records warnings and ``lang`` (the language
    the result is said in) is not English: lock files record their warnings in English.
    """
    import os
    from functools import partial

    from cudaresolve.core.paths import default_cache_dir
    from cudaresolve.db.deferred import stores_held
    from cudaresolve.lock.cached import network_failure
    from cudaresolve.lock.keep import PLACEHOLDER, inputs_key, keepable, kept_lock, same_but_stamp, stamp, still_served
    from cudaresolve.lock.lockfile import check_output_name, pylock_blocker
    from cudaresolve.lock.model import lock_from_solution
    from cudaresolve.lock.output import check_default_free, check_not_input, is_stream
    from cudaresolve.lock.previous import changes, preferences, previous_lock, read_existing

    path = output or ("pylock.toml" if fmt == "pylock" else "requirements.txt")
    check_output_name(path, fmt)  # before any work: a wrong name fails at once
    if output is None:
        check_default_free(path)
    check_not_input(path, (*request.read_files, request.compat or "", str(request.project)))
    streamed = path == "-" or is_stream(path)
    tls = tls_ahead(request)  # made while ``prepare`` builds the database
    with helper_ahead(request) as helper:  # the page fetcher's child starting beside the database's build
        inputs = prepare(request, store_db=False)  # a database built now is stored once, at the block's end
        with stores_held(inputs.db.tables):  # the database's cache entry stored once, with the tables the lock read
            existing = None if streamed else read_existing(path)  # the lock already there, read once
            root = None if is_stream(path) else os.path.dirname(os.path.abspath(path))
            keyed = partial(inputs_key, inputs, fmt=fmt, editables=request.editables, cache=default_cache_dir())
            may_keep = existing is not None and not request.upgrade and not request.upgrade_packages  # (never streamed)
            key = keyed() if may_keep else None  # else only a new lock's stamp needs it, worked out after the solve
            if key is not None:  # uv's rule: a lock that still answers is kept, nothing solved (``lock.keep``)
                old = kept_lock(existing, fmt, key, source=path)
                if old is not None and (not old.warnings or lang == "en"):  # its warnings are recorded in English
                    with run_client(inputs.offline, tls) as http:
                        kept = still_served(old, inputs, http, index_policy(inputs), fmt)
                    if kept is not None:
                        return LockResult(solution=kept, path=path, format=fmt, complete=True, unchanged=True)
            prior = None if request.upgrade else previous_lock(existing, fmt)  # -U keeps no pin: read after the solve
            wanted = preferences(prior, upgrade=request.upgrade, upgrade_packages=request.upgrade_packages,
                                 stack=inputs.db.package_names)  # fmt: skip
            solution = resolve_inputs(inputs, preferences=wanted, tls=tls, helper=helper)
    prior = previous_lock(existing, fmt) if request.upgrade else prior  # what moved, said as ever
    previous = prior.pins if prior is not None else None
    frozen = lock_from_solution(
        solution, features=inputs.chosen, editables=(*request.editables, *inputs.editables), mirrors=inputs.mirrors,
        root=root,
    )  # fmt: skip
    complete = solution.complete and not frozen.missing_hashes() and all(p.url for p in frozen.packages)
    if fmt == "pylock":
        problem = pylock_blocker(frozen, whole=solution.complete, warnings=solution.warnings)
        if problem is not None:
            if output is not None:  # an index that did not answer online is the network's failure (exit 2)
                failed = IndexUnavailable if not inputs.offline and network_failure(problem) else InvalidInput
                raise failed(  # online, running online again is no way out: the index or its mirror is
                    Text.of("lock.incomplete-explicit", path=output, reason=problem),
                    hint=Text("lock.incomplete-explicit.hint" if inputs.offline else "lock.incomplete-explicit.online"),
                )
            notice = Notice(code="no-lock-written", text=Text.of("lock.incomplete-not-written", reason=problem))
            return LockResult(solution=_with_notices(solution, [notice]), path=None, format=fmt, complete=False)
    from cudaresolve.lock.lockfile import render_lock  # tomlkit and packaging.pylock: only when a file is written
    from cudaresolve.lock.output import write_output

    text = None
    if not streamed and complete and not solution.failed and keepable(frozen, inputs, fmt):
        key = key or keyed()
        text = stamp(render_lock(path, replace(frozen, inputs=PLACEHOLDER), fmt=fmt), key) if key else None
    text = text or render_lock(path, frozen, fmt=fmt)
    moved = changes(previous, frozen, folders=prior.folders if prior is not None else ())
    if previous is not None and not moved:
        same = existing == text
        if same or same_but_stamp(existing, text):  # the same lock; a stamp for other inputs is brought up to date
            if not same:
                write_output(path, text)
            return LockResult(solution=solution, path=path, format=fmt, complete=complete, unchanged=True)
    write_output(path, text)
    return LockResult(solution=solution, path=path, format=fmt, complete=complete, changes=moved)
