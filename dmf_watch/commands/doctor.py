"""`dmf doctor`: is the whole setup usable, in the order a day runs through it?

Service key → API (one request of one row) → warehouse readable and built → reports directory
writable → the AI checks of `dmf_watch.enrich.agy_checks`. Each check is a value with a level: `ok`, `warn`
(the day still runs and publishes, e.g. AI trouble or yesterday's rejected load) or `bad`
(a run would fail). Nothing raises, nothing is changed, and the service key never appears.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.url_policy import base_url_problem
from dmf_watch.core.warehouse import NO_LOAD_ADVICE, holds_a_load
from dmf_watch.enrich.agy_checks import AGY_NOT_FOUND, fix_circuit, run_doctor
from dmf_watch.enrich.ai_config import load_ai_config
from dmf_watch.enrich.workspace import install_permission_block, prepare_workspace
from dmf_watch.pipelines.mfds.helpers import ApiError, MfdsClient, redact
from dmf_watch.pipelines.mfds.settings import RetryPolicy

OK, WARN, BAD = "ok", "warn", "bad"
#: AI checks whose failure is a warning: the report is complete without AI text.
AI_WARNINGS = frozenset({"agy_binary", "agy_model", "agy_circuit", "agy_budget"})
#: Checks of what agy may touch: a failure is a security problem only where agy can run, so
#: without the binary it is a warning (install the deny block before installing agy).
AI_WARNINGS_WITHOUT_AGY = AI_WARNINGS | {"agy_permissions", "agy_workspace"}
#: One request, tried twice at most: doctor must answer in seconds, not retry like a load.
DOCTOR_POLICY = RetryPolicy(
    max_retries=1, base_delay_s=0.5, max_delay_s=0.5, connect_timeout_s=5.0, read_timeout_s=15.0
)


@dataclass(frozen=True)
class SetupCheck:
    name: str
    level: str
    message: str

    @property
    def line(self) -> str:
        return f"{ {OK: 'ok  ', WARN: 'WARN', BAD: 'BAD '}[self.level] } {self.name}: {self.message}"


def service_key_from_config(project_dir: Path) -> str | None:
    """The key as the loader finds it: MFDS_SERVICE_KEY, else mfds_service_key in .dlt/secrets.toml."""
    key = os.environ.get("MFDS_SERVICE_KEY")
    if key and key.strip():
        return key.strip()
    secrets = project_dir / ".dlt" / "secrets.toml"
    try:
        import tomllib

        data = tomllib.loads(secrets.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    stack = [data]
    while stack:  # the key may sit at the top or under [sources...]
        table = stack.pop()
        value = table.get("mfds_service_key")
        if isinstance(value, str) and value.strip():
            return value.strip()
        stack.extend(v for v in table.values() if isinstance(v, dict))
    return None


def check_service_key(key: str | None) -> SetupCheck:
    if key:
        return SetupCheck("service_key", OK, "an MFDS service key is configured (not shown).")
    return SetupCheck(
        "service_key",
        BAD,
        "no MFDS service key: set MFDS_SERVICE_KEY to the decoded key "
        "from data.go.kr (or mfds_service_key in .dlt/secrets.toml).",
    )


def check_api(
    base_url: str, key: str | None, policy: RetryPolicy = DOCTOR_POLICY, allowed_hosts: tuple[str, ...] = ()
) -> SetupCheck:
    """One request for one row: proves the URL, the key and the portal answer, costs one request.
    The loader's URL policy is applied first: a refused URL is never connected to."""
    if not key:
        return SetupCheck("mfds_api", BAD, "not tried without a service key.")
    problem = base_url_problem(base_url, allowed_hosts)
    if problem is not None:
        return SetupCheck("mfds_api", BAD, f"{problem}.")
    try:
        with MfdsClient(base_url, key, policy) as client:
            page = client.page(1, 1)
    except ApiError as exc:
        return SetupCheck("mfds_api", BAD, redact(exc.reason, key) + ".")
    except Exception as exc:  # doctor always answers
        return SetupCheck("mfds_api", BAD, f"the request failed ({type(exc).__name__}).")
    return SetupCheck(
        "mfds_api",
        OK,
        f"the MFDS API answered one row; totalCount {page.total_count:,}."
        if page.total_count is not None
        else "the MFDS API answered.",
    )


def check_warehouse(settings: Settings) -> list[SetupCheck]:
    """Readable, whole, built (the marts exist), and the last load's verdict (a rejection is a warning)."""
    from dmf_watch.commands.backup import warehouse_problem

    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        return [SetupCheck("warehouse", BAD, f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")]
    damage = warehouse_problem(settings)
    if damage:
        return [SetupCheck("warehouse", BAD, damage)]
    try:
        with warehouse.connect(settings, read_only=True) as con:
            marts = con.schemas.marts
            if not warehouse.table_exists(con, marts, "dmf_day_decisions", "dmf_events", "dmf_daily_summary"):
                if not holds_a_load(con, con.schemas.raw):
                    return [SetupCheck("warehouse", BAD, f"{where} holds no load yet: {NO_LOAD_ADVICE}.")]
                return [SetupCheck("warehouse", BAD, f"{where} is readable but not built: run `dmf build`.")]
            last = con.execute(
                f"select as_of_date, verdict, reason from {marts}.dmf_day_decisions order by as_of_date desc limit 1"
            ).fetchone()
    except warehouse.Error as exc:
        first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        return [SetupCheck("warehouse", BAD, f"{where} cannot be read ({first}); is another dmf command writing it?")]
    checks = [SetupCheck("warehouse", OK, f"{where} is readable and built.")]
    if last is None:
        checks.append(SetupCheck("last_load", WARN, "no load yet: run `dmf run`."))
    elif last[1] != "accepted":
        checks.append(
            SetupCheck(
                "last_load", WARN, f"the last load ({last[0]}) was rejected: {last[2] or '-'}; see `dmf status`."
            )
        )
    else:
        checks.append(SetupCheck("last_load", OK, f"the last load ({last[0]}) was accepted."))
    return checks


def check_reports_dir(reports_dir: Path) -> SetupCheck:
    try:
        reports_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=reports_dir, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return SetupCheck(
            "reports_dir",
            BAD,
            f"{reports_dir} is not writable ({exc.strerror or type(exc).__name__}); "
            "set DMF_REPORTS_DIR or fix its permissions.",
        )
    return SetupCheck("reports_dir", OK, f"{reports_dir} is writable.")


def run_setup_doctor(settings: Settings, *, policy: RetryPolicy = DOCTOR_POLICY) -> list[SetupCheck]:
    key = service_key_from_config(settings.project_dir)
    checks = [
        check_service_key(key),
        check_api(settings.api_base_url, key, policy, tuple(getattr(settings, "api_allowed_hosts", ()))),
    ]
    if settings.warehouse == "postgres":
        server = check_server(settings)
        checks += server
        if any(check.level == BAD for check in server):
            checks.append(SetupCheck("warehouse", BAD, "not tried: the server above cannot be used."))
        else:
            checks += check_warehouse(settings)
    else:
        checks += check_warehouse(settings)
    checks.append(check_reports_dir(settings.reports_dir))
    ai_checks = run_doctor(settings)
    agy_missing = any(check.name == "agy_binary" and check.message.startswith(AGY_NOT_FOUND) for check in ai_checks)
    warnings = AI_WARNINGS_WITHOUT_AGY if agy_missing else AI_WARNINGS
    for check in ai_checks:
        level = OK if check.ok else (WARN if check.name in warnings else BAD)
        checks.append(SetupCheck(check.name, level, check.message))
    checks.append(check_backups(settings))
    return checks


def check_server(settings: Settings) -> list[SetupCheck]:
    """A PostgreSQL warehouse: the server answers (15 or newer), the role may create the
    project's schemas (or they are there and its own), and which of them exist yet."""
    where = warehouse.describe(settings)
    s = warehouse.schemas(settings)
    wanted = [s.raw, s.staging, s.intermediate, s.seeds, s.marts]
    try:
        with warehouse.connect(settings, read_only=True) as con:
            ((version, user, may_create, may_create_functions),) = con.execute(
                "select current_setting('server_version_num')::int, current_user, "
                "has_database_privilege(current_user, current_database(), 'CREATE'), "
                "has_schema_privilege(current_user, 'public', 'CREATE')"
            ).fetchall()
            present = {
                row[0]: (row[1], row[2])
                for row in con.execute(
                    "select nspname, pg_get_userbyid(nspowner), has_schema_privilege(current_user, nspname, 'CREATE') "
                    "from pg_namespace"
                ).fetchall()
                if row[0] in wanted
            }
    except warehouse.Error as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return [
            SetupCheck(
                "server",
                BAD,
                f"{where} cannot be reached or refused the login ({first}); check PGHOST, PGPORT, PGUSER, "
                "PGDATABASE and the password in ~/.pgpass (or PGPASSFILE).",
            )
        ]
    checks = [
        SetupCheck(
            "server",
            OK if version >= 150000 else BAD,
            f"{where} answers as role {user}, PostgreSQL {version // 10000}"
            + ("." if version >= 150000 else "; DMF Watch needs PostgreSQL 15 or newer."),
        )
    ]
    unusable = [name for name, (_, can_create) in present.items() if not can_create]
    missing = [name for name in wanted if name not in present]
    if unusable:
        checks.append(
            SetupCheck(
                "role_rights",
                BAD,
                f"role {user} may not create tables in {', '.join(unusable)}; ask the DBA to grant CREATE there "
                "(or to give the schemas to the role).",
            )
        )
    elif missing and not may_create:
        checks.append(
            SetupCheck(
                "role_rights",
                BAD,
                f"role {user} may not create schemas in the database and {', '.join(missing)} do not exist; "
                "ask the DBA for CREATE on the database (or to create them for the role).",
            )
        )
    elif not may_create_functions:
        # the on-run-start hook creates the functions PostgreSQL lacks (macros/cross_db/similarity.sql)
        # in the profile's schema, public
        checks.append(
            SetupCheck(
                "role_rights",
                BAD,
                f"role {user} may not create in schema public, where the build creates the one function "
                "PostgreSQL lacks (Jaro-Winkler); ask the DBA to grant CREATE on schema public.",
            )
        )
    else:
        checks.append(SetupCheck("role_rights", OK, f"role {user} may create the project's tables and functions."))
    checks.append(
        SetupCheck(
            "schemas",
            OK,
            f"present: {', '.join(sorted(present)) or 'none yet'}"
            + (f"; the first run creates {', '.join(missing)}." if missing else "."),
        )
    )
    return checks


def check_backups(settings: Settings) -> SetupCheck:
    """The copies of what the API cannot give again: none after accepted days is a warning."""
    from dmf_watch.commands.backup import copies

    if settings.warehouse == "postgres":
        return SetupCheck(
            "backups",
            OK,
            "a PostgreSQL warehouse is backed up by its DBA (pg_dump); `dmf export-loads DIR` also writes "
            "every stored load as dated dumps any warehouse can take back.",
        )

    found = copies(settings.backup_dir)
    if not found:
        return SetupCheck(
            "backups",
            WARN,
            f"no backup in {settings.backup_dir} yet: `dmf run` takes one after each accepted day "
            "(DMF_BACKUP_DIR; a failed one is in state/logs/dmf.log).",
        )
    return SetupCheck(
        "backups", OK, f"{len(found)} backup(s) in {settings.backup_dir}, the newest {found[0].path.name}."
    )


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fix",
        action="store_true",
        help="create the batch workspace, merge the permission deny block into agy's settings "
        "and close the AI circuit a missing agy opened once agy runs",
    )


def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    if args.fix:
        workspace, problem = prepare_workspace(settings)
        print(f"fix  workspace: {problem or workspace}")
        print(f"fix  permissions: {install_permission_block(settings, load_ai_config(settings))[1]}")
        print(f"fix  circuit: {fix_circuit(settings)}")
    checks = run_setup_doctor(settings)
    for check in checks:
        print(check.line)
    bad = sum(check.level == BAD for check in checks)
    warn = sum(check.level == WARN for check in checks)
    print(f"{len(checks)} checks: {bad} failed, {warn} warnings" + (" (warnings do not stop a run)" if warn else ""))
    return 1 if bad else 0


COMMANDS = (
    Command(
        "doctor",
        "check the whole setup: service key, API, warehouse, reports directory, then agy",
        _doctor,
        locks_warehouse=False,  # it only reads, and must answer while a morning runs
        arguments=_doctor_arguments,
        opens_warehouse=False,  # it says in its own line what is wrong with the warehouse
        checks_damage=False,
    ),
)
