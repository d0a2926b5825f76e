"""The database read back from its cache answers as the built one, unpickling a package table only when asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cudaresolve
from cudaresolve.db.database import load_compat
from cudaresolve.db.tables import LazyTables


def test_a_cached_database_answers_every_package_question_as_the_built_one(tmp_path: Path) -> None:
    built = load_compat(validate=True)
    load_compat(cache_dir=tmp_path)  # builds and stores the entry
    cached = load_compat(cache_dir=tmp_path)  # reads it back
    assert isinstance(cached.tables, LazyTables)
    assert cached.package_names == built.package_names
    assert cached.package_kinds == built.package_kinds
    for name in (*built.package_names, "not-a-package"):
        assert cached.packages(name) == built.packages(name)
    assert list(cached.tables) == list(built.tables)
    assert cached.tables == built.tables


_PROBE = """
import json, sys
from pathlib import Path
from cudaresolve.db.database import load_compat
db = load_compat(cache_dir=Path(sys.argv[1]))
first = "packaging.requirements" in sys.modules
names = db.package_names
db.gpus, db.cuda, db.variants
second = "packaging.requirements" in sys.modules
db.packages(sys.argv[2])
print(json.dumps([first, second, "packaging.requirements" in sys.modules, len(names)]))
"""


def test_hardware_questions_leave_the_package_tables_pickled(tmp_path: Path) -> None:
    load_compat(cache_dir=tmp_path)  # the entry a later start reads
    with_requires = next(n for n in load_compat().package_names if any(r.requires for r in load_compat().packages(n)))
    # the same cudaresolve this process imported (an installed copy in CI), whose code keys the cache entry
    env = {**os.environ, "PYTHONPATH": str(Path(cudaresolve.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path), with_requires], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    before, after_names, after_table, count = json.loads(done.stdout)
    assert (before, after_names, after_table) == (False, False, True)  # the requirement class comes with the table
    assert count > 1
