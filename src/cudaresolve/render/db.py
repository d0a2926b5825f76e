"""Human and JSON views of the compatibility database. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.db.database import CompatDB
    from cudaresolve.errors import InvalidCompatData

__all__ = ["render_ok", "render_problems", "render_summary", "summary"]


def summary(db: CompatDB) -> dict[str, Any]:
    """Counts and ranges per kind, plus how many rows are marked unverified."""
    packages: dict[str, Any] = {}
    for name in db.package_names:
        releases = db.packages(name)
        packages[name] = {
            "releases": len(releases),
            "newest": str(releases[0].version),
            "oldest": str(releases[-1].version),
            "variants": sorted({b.variant for r in releases for b in r.builds}),
            "unverified": sum(1 for r in releases if not r.verified),
        }
    return {
        "schema_version": db.schema_version,
        "snapshot_date": db.snapshot_date,
        "cuda": {
            "releases": len(db.cuda),
            "newest": str(max(r.version for r in db.cuda)) if db.cuda else None,
            "oldest": str(min(r.version for r in db.cuda)) if db.cuda else None,
        },
        "gpus": len(db.gpus),
        "variants": [v.name for v in db.variants],
        "packages": packages,
        "unverified_rows": sum(1 for r in db.cuda if not r.verified)
        + sum(1 for g in db.gpus if not g.verified)
        + sum(p["unverified"] for p in packages.values()),
    }


def render_problems(err: InvalidCompatData, console: Console) -> None:
    from rich.markup import escape

    count = len(err.problems)
    console.print(f"[bold red]error[/]: {err.code}: {escape(err.source)} has {count} problem{'s' * (count != 1)}")
    for path, message in err.problems:
        console.print(f"  {escape(path or '<top>')}: {escape(message)}")


def render_ok(db: CompatDB, label: str, console: Console) -> None:
    info = summary(db)
    count = sum(p["releases"] for p in info["packages"].values())
    console.print(
        f"ok: {label}: {info['cuda']['releases']} CUDA releases, {info['gpus']} GPUs, "
        f"{len(info['variants'])} variants, {count} package releases "
        f"({info['unverified_rows']} rows marked verified = false)"
    )


def render_summary(db: CompatDB, console: Console) -> None:
    from rich.table import Table

    info = summary(db)
    console.print(
        f"compat.toml schema {info['schema_version']}, snapshot {info['snapshot_date']}: "
        f"CUDA {info['cuda']['oldest']} to {info['cuda']['newest']}, {info['gpus']} GPUs, "
        f"variants {', '.join(info['variants'])}"
    )
    table = Table("package", "releases", "oldest", "newest", "variants", "unverified")
    for name, row in info["packages"].items():
        table.add_row(
            name,
            str(row["releases"]),
            row["oldest"],
            row["newest"],
            ", ".join(row["variants"]) or "(pure Python)",
            str(row["unverified"]),
        )
    console.print(table)
