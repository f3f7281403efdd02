"""One parse of the dbt project per test process, not one per test.

Each test's warehouse lives in its own tmp dir, so dbt's partial parsing (which keys on the
profile, the warehouse's path included) never finds a saved manifest: every test's first build
parsed the whole project (about 4 s of CPU here). dbt's programmatic interface takes a parsed
manifest instead (`dbtRunner(manifest=...)`, what `build(manifest=...)` passes on), so the first
build of the session parses and every later dbt command with the same parse inputs reuses it.

The inputs are everything a parse reads: the project's files (models, macros, seeds, data tests,
snapshots, dbt_project.yml, profiles.yml) by content, the target (engine, schema prefix, the
database the nodes are named in: DuckDB's file name, PostgreSQL's server and database). A
command given `--vars`, or one about the parse itself (`parse`, `docs`), parses as it always did.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
PROJECT_FOLDERS = ("models", "macros", "seeds", "snapshots", "tests/dbt")
REUSING_COMMANDS = frozenset({"build", "run", "test", "seed"})
KEPT_MANIFESTS = 4


def project_digest(project_dir: Path) -> str:
    digest = hashlib.sha256()
    paths = [project_dir / name for name in PROJECT_FILES]
    for folder in PROJECT_FOLDERS:
        paths += sorted(path for path in (project_dir / folder).rglob("*") if path.is_file())
    for path in paths:
        if path.is_file():
            digest.update(str(path.relative_to(project_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def parse_inputs(settings) -> tuple:
    if settings.warehouse == "duckdb":
        target: tuple = (settings.duckdb_path.stem,)
    else:
        target = tuple(os.environ.get(name, "") for name in ("PGHOST", "PGPORT", "PGDATABASE", "PGUSER"))
    return (
        str(settings.project_dir),
        project_digest(settings.project_dir),
        settings.warehouse,
        settings.schema_prefix,
        target,
    )


def sharing(invoke):
    manifests: dict[tuple, Any] = {}

    def invoke_dbt(settings, command, *extra, manifest=None, **kwargs):
        if manifest is not None or command.split()[0] not in REUSING_COMMANDS or "--vars" in extra:
            return invoke(settings, command, *extra, manifest=manifest, **kwargs)
        key = parse_inputs(settings)
        if key in manifests:  # the least recently used goes first: the repository's own parse stays
            manifests[key] = manifests.pop(key)
        else:
            parsed = invoke(settings, "parse", "--no-write-json")
            if parsed.returncode != 0:  # the command itself parses and says what is wrong
                return invoke(settings, command, *extra, **kwargs)
            if len(manifests) >= KEPT_MANIFESTS:  # tests of copied projects each add one
                del manifests[next(iter(manifests))]
            manifests[key] = parsed.result
        return invoke(settings, command, *extra, manifest=manifests[key], **kwargs)

    return invoke_dbt
