"""Precision and recall of the Latin-script watch-term matcher on the real MFDS names.

RA staff keep ingredient lists in English; the registry writes names in Hangul. This runs the
pipeline's own SQL (the models `int_ingredient_name_keys` and `int_watch_terms_latin_keyed`,
run by dbt on freshly seeded translation tables with the names and terms put where those models
read them, and the macros `transliteration_match` and `transliteration_similarity`) over the
Hangul names of the real sample and tails in `../shared/data/mfds_real/`, against the English INN terms of `watch_terms_truth.csv` (which
says, for each term, which of those names it should match). It prints precision and recall of
the rule-based matcher, the same for the 8 candidates the AI would be offered (is the right
name among them?), and every miss.
`--warehouse postgres` runs the same on the PostgreSQL server the libpq variables name (in
schemas prefixed `eval_`, dropped first): both engines must print the same figures.
Run: python benchmarks/eval_watch_terms.py [data_dir] [--warehouse duckdb|postgres]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import re
import tempfile
from pathlib import Path

from dmf_watch.core import warehouse
from dmf_watch.core.config import load_settings
from dmf_watch.transform.build import invoke_dbt

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "mfds_real"
TRUTH = Path(__file__).with_name("watch_terms_truth.csv")
CANDIDATES = 8
SPLIT = "\n-- next statement --\n"
PG_PREFIX = "eval"

MATCH_SQL = """
with names as (select * from {{ ref('int_ingredient_name_keys') }}),
terms as (select * from {{ ref('int_watch_terms_latin_keyed') }})
select terms.watch_term, names.ingredient_name_key
from terms inner join names on {{ transliteration_match('names', 'terms') }}
"""
RANK_SQL = """
with names as (select * from {{ ref('int_ingredient_name_keys') }}),
terms as (select * from {{ ref('int_watch_terms_latin_keyed') }}),
scored as (
    select terms.watch_term, names.ingredient_name_key,
        {{ transliteration_similarity('names', 'terms') }} as similarity
    from terms cross join names
)
select watch_term, ingredient_name_key from (
    select *, row_number() over (
        partition by watch_term order by similarity desc, {{ bytewise('ingredient_name_key') }}
    ) as candidate_rank
    from scored
) as ranked where candidate_rank <= {n}
"""


def real_names(data_dir: Path) -> list[str]:
    """Every distinct ingredient name of the real files, whitespace-normalized as displayed."""
    names: set[str] = set()
    for path in sorted(data_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                value = json.loads(line).get("INGR_KOR_NAME")
                if value and value.strip():
                    names.add(re.sub(r"\s+", " ", value.replace("\r", "").replace("\n", "")).strip())
    return sorted(names)


def read_truth() -> dict[str, set[str]]:
    with TRUTH.open(encoding="utf-8") as fh:
        return {row["watch_term"]: {n for n in row["expected_names"].split("|") if n} for row in csv.DictReader(fh)}


def compile_sql(settings, sql: str) -> str:
    """The pipeline's macros turned into plain SQL by dbt itself (nothing re-implemented here)."""
    done = invoke_dbt(settings, "compile", "--inline", sql)
    if done.returncode != 0:
        raise SystemExit(f"dbt compile failed: {done.output.strip().splitlines()[-1:]}")
    return done.result.results[0].node.compiled_code.strip()


def score(truth: dict[str, set[str]], found: dict[str, set[str]]) -> tuple[int, int, int]:
    hits = sum(len(truth[t] & found.get(t, set())) for t in truth)
    return hits, sum(len(found.get(t, set())) for t in truth), sum(len(v) for v in truth.values())


def drop_pg_schemas(settings) -> None:
    with warehouse.connect(settings) as con:
        for (name,) in con.execute(
            "select schema_name from information_schema.schemata where schema_name like ?", [PG_PREFIX + "\\_%"]
        ).fetchall():
            con.execute(f'drop schema "{name}" cascade')


def run_matcher(
    terms: list[str], names: list[str], engine: str = "duckdb"
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """term -> names the rule-based matcher matches, and term -> the 8 candidates it would offer.

    The names go where int_ingredient_name_keys reads the registry's names (the relation of
    int_registrations_keyed, its one column it reads) and the terms into the watchlist seed's
    table; dbt then runs the two key models, and the match and rank SQL read them."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({}).with_paths(
            duckdb_path=Path(tmp) / "eval.duckdb", reports_dir=Path(tmp) / "reports", state_dir=Path(tmp) / "state"
        )
        if engine == "postgres":
            settings = dataclasses.replace(settings, warehouse="postgres", schema_prefix=PG_PREFIX)
            drop_pg_schemas(settings)
        scratch = warehouse.schemas(settings).raw.replace("mfds_raw", "watch_eval")
        seeded = invoke_dbt(
            settings, "seed", "--select", "ingredient_name_translations hangul_jamo_romanization watchlist"
        )
        if seeded.returncode != 0:
            raise SystemExit("dbt seed failed: see the dbt log.")
        key_sql, registrations, watchlist = compile_sql(
            settings,
            SPLIT.join(
                [
                    "select name, {{ comparison_key('name') }} as ingredient_name_key from " + scratch + ".raw_names",
                    "{{ ref('int_registrations_keyed') }}",
                    "{{ ref('watchlist') }}",
                ]
            ),
        ).split(SPLIT)
        with warehouse.connect(settings) as con:
            con.execute(f"create schema {scratch}")
            con.execute(f"create table {scratch}.raw_names (name varchar)")
            con.executemany(f"insert into {scratch}.raw_names values (?)", [[n] for n in names])
            con.execute(f"create table {scratch}.names as {key_sql}")
            con.execute(f"create schema if not exists {registrations.rsplit('.', 2)[-2]}")
            con.execute(f"create table {registrations} as select ingredient_name_key from {scratch}.names")
            con.execute(f"delete from {watchlist}")
            con.executemany(f"insert into {watchlist} (term_kind, term) values ('ingredient', ?)", [[t] for t in terms])
            by_key: dict[str, set[str]] = {}
            for name, key in con.execute(f"select name, ingredient_name_key from {scratch}.names").fetchall():
                by_key.setdefault(key, set()).add(name)
        keyed = invoke_dbt(
            settings,
            "run",
            "--select",
            "int_ingredient_name_keys int_watch_terms_latin_keyed",
            "--vars",
            "{without_loads: true}",  # no load here: the names are this script's own table
        )
        if keyed.returncode != 0:
            raise SystemExit(f"dbt run of the key models failed: {keyed.output.strip().splitlines()[-1:]}")
        match_sql, rank_sql = compile_sql(
            settings, SPLIT.join([MATCH_SQL, RANK_SQL.replace("{n}", str(CANDIDATES))])
        ).split(SPLIT)
        with warehouse.connect(settings) as con:
            matched: dict[str, set[str]] = {}
            for term, key in con.execute(match_sql).fetchall():
                matched.setdefault(term, set()).update(by_key.get(key, set()))
            offered: dict[str, set[str]] = {}
            for term, key in con.execute(rank_sql).fetchall():
                offered.setdefault(term, set()).update(by_key.get(key, set()))

        if engine == "postgres":
            drop_pg_schemas(settings)
    return matched, offered


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--warehouse", choices=("duckdb", "postgres"), default="duckdb")
    args = parser.parse_args()
    data_dir = args.data_dir
    truth = read_truth()
    names = real_names(data_dir)
    unknown = sorted(n for expected in truth.values() for n in expected if n not in names)
    if unknown:
        raise SystemExit(f"The truth names {unknown} are not in {data_dir}: fix watch_terms_truth.csv.")
    matched, offered = run_matcher(list(truth), names, args.warehouse)

    hits, predicted, expected = score(truth, matched)
    print(
        f"{len(truth)} English watch terms, {sum(1 for v in truth.values() if v)} with expected names, "
        f"against {len(names)} Hangul names of {data_dir.name}, on {args.warehouse}"
    )
    print(
        f"rule-based matcher: precision {hits / predicted if predicted else 1:.1%} ({hits}/{predicted}), "
        f"recall {hits / expected:.1%} ({hits}/{expected})"
    )
    with_names = [t for t in truth if truth[t]]
    term_hits = sum(1 for t in with_names if truth[t] & offered.get(t, set()))
    name_hits = sum(len(truth[t] & offered.get(t, set())) for t in with_names)
    reachable = sum(min(len(truth[t]), CANDIDATES) for t in with_names)
    print(
        f"AI candidate lists ({CANDIDATES} names): right name offered for {term_hits}/{len(with_names)} terms "
        f"({term_hits / len(with_names):.1%}); {name_hits}/{reachable} expected names offered "
        f"({name_hits / reachable:.1%})"
    )
    print("misses of the matcher (expected, not matched):")
    for term in truth:
        for name in sorted(truth[term] - matched.get(term, set())):
            print(f"  {term} -> {name}")
    print("false matches (matched, not expected):")
    for term in truth:
        for name in sorted(matched.get(term, set()) - truth[term]):
            print(f"  {term} -> {name}")
    print("terms whose candidate list misses every expected name:")
    for term in with_names:
        if not truth[term] & offered.get(term, set()):
            print(f"  {term}: offered {sorted(offered.get(term, set()))[:CANDIDATES]}")


if __name__ == "__main__":
    main()
