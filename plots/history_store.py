"""The results history: an SQLite file holding every case of every recorded run (docs/HISTORY.md).

Why SQLite: Python ships it, one file travels as a CI cache or artifact, and its locking lets two
runners record into one file at once. A file is recorded once (keyed by the SHA-256 of its bytes);
every file of one call is parsed and checked before anything is written, and one call writes in one
transaction, so a bad file leaves the database as it was.
"""
import datetime
import hashlib
import json
import os
import sqlite3

import benchjson
import compare_context
from compare_input import BadInput, load

SCHEMA_NAME, SCHEMA_VERSION = "wirezip-history", "1"
# Context keys that make two runs comparable: the same host kind, page policy, SIMD path, RDMA
# device and firmware; a data set's hash joins the class of the cases that read it.
CLASS_KEYS = ("cpu_model", "machine", "host_cpus", "simd_path", "kernel", "thp_*", "rdma_device", "rdma_fw_ver",
              "rdma_link_layer", "rdma_speed", "rdma_active_mtu")
CLASS_PATTERNS = CLASS_KEYS + tuple("peer_" + k for k in CLASS_KEYS)
DATASET_PREFIX = "dataset_sha256:"
LOCK_TIMEOUT_S = 60
TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, file_sha256 TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
                   git_sha TEXT, date TEXT NOT NULL, executable TEXT, context TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE cases (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL,
                    runner_class TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'skipped', 'broken')), reason TEXT,
                    UNIQUE (run_id, name));
CREATE TABLE samples (case_id INTEGER NOT NULL REFERENCES cases(id), metric TEXT NOT NULL, kind TEXT NOT NULL,
                      repetition INTEGER, value REAL NOT NULL);
CREATE INDEX cases_by_class ON cases (runner_class, name);
CREATE INDEX samples_by_case ON samples (case_id, metric);
"""


def default_path():
    """--db, else $WIREZIP_HISTORY, else results/history.sqlite of this checkout."""
    return os.environ.get("WIREZIP_HISTORY") or os.path.join(os.path.dirname(os.path.realpath(__file__)), "..",
                                                             "results", "history.sqlite")


def open_db(path, create):
    """A connection to a wirezip history. BadInput (exit 2) when the file is not SQLite, is another
    program's database, or is missing and create is False; the file is not written in those cases."""
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    if not exists and not create:
        raise BadInput(f"{path}: no history database (run scripts/history record first)")
    try:
        db = sqlite3.connect(path, timeout=LOCK_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as e:
        raise BadInput(f"{path}: cannot open: {e}") from None
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables and create:
            db.execute("BEGIN IMMEDIATE")
            if not db.execute("SELECT 1 FROM sqlite_master").fetchone():  # another recorder may have won
                for statement in filter(str.strip, TABLES.split(";")):
                    db.execute(statement)
                db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", SCHEMA_NAME), ("version", SCHEMA_VERSION)])
            db.execute("COMMIT")
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        meta = dict(db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
    except sqlite3.Error as e:
        db.close()
        raise BadInput(f"{path}: not a readable SQLite database: {e}") from None
    if meta.get("schema") != SCHEMA_NAME or not {"runs", "cases", "samples"} <= tables:
        db.close()
        raise BadInput(f"{path}: an SQLite database of another program (no wirezip-history schema); left untouched")
    if meta.get("version") != SCHEMA_VERSION:
        db.close()
        raise BadInput(f"{path}: wirezip history schema version {meta.get('version')!r}, "
                       f"this script reads {SCHEMA_VERSION}")
    return db


def runner_class(context, case_name):
    """A short hash of the context keys that make runs comparable, and the data set hashes of the
    data sets named in the case (all of the run's when the name mentions none)."""
    keys = {k: str(v) for k, v in context.items() if compare_context.matches(k, CLASS_PATTERNS)}
    datasets = {k: str(v) for k, v in context.items() if k.startswith(DATASET_PREFIX)}
    used = {k: v for k, v in datasets.items() if k[len(DATASET_PREFIX):] in case_name}
    keys.update(used or datasets)
    return hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:16]


def run_date(context):
    """The run's date in UTC ISO form (Google Benchmark writes it with its offset); None when absent."""
    try:
        when = datetime.datetime.fromisoformat(str(context["date"]))
    except (KeyError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.astimezone(datetime.timezone.utc).isoformat()


def case_status(case):
    """(status, reason) of one case as benchjson reads it."""
    if case["failed"]:
        return "failed", case["failed"]
    if case["skipped"]:
        return "skipped", case["skipped"]
    broken = benchjson.broken_reason(case)
    if broken:
        return "broken", broken
    if case["invalid"]:
        metric, values = next(iter(sorted(case["invalid"].items())))
        return "broken", f"{metric}={values[0]!r} in {len(values)} of {case['runs']} repetition(s)"
    return "ok", None


def sample_rows(case):
    """(metric, kind, repetition, value) of every finite number: each repetition, each aggregate."""
    rows = [(m, "repetition", i, v) for m, values in case["samples"].items() for i, v in enumerate(values)]
    for kind, values in case["aggregates"].items():
        rows += [(m, kind, None, v) for m, v in values.items() if benchjson.is_number(v)]
    return rows


def read_file(path):
    """(sha256, context, cases) of one result file; BadInput naming it when it is not one."""
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    context, cases = load(path)
    return digest, context, cases


def record(db, paths, now=None):
    """Records the result files; returns [(path, run id or None when already recorded)]. Every
    file is read before the transaction, so a bad one (BadInput) records nothing."""
    now = now or datetime.datetime.now(datetime.timezone.utc).isoformat()
    parsed = [(path, *read_file(path)) for path in paths]
    out = []
    db.execute("BEGIN IMMEDIATE")
    try:
        for path, digest, context, cases in parsed:
            if db.execute("SELECT 1 FROM runs WHERE file_sha256 = ?", (digest,)).fetchone():
                out.append((path, None))
                continue
            run = db.execute("INSERT INTO runs (file_sha256, source, git_sha, date, executable, context, recorded_at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (digest, os.path.basename(path), context.get("wirezip_git_sha"),
                              run_date(context) or now, context.get("executable"),
                              json.dumps(context, sort_keys=True), now)).lastrowid
            for name, case in cases.items():
                status, reason = case_status(case)
                case_id = db.execute("INSERT INTO cases (run_id, name, runner_class, status, reason) "
                                     "VALUES (?, ?, ?, ?, ?)",
                                     (run, name, runner_class(context, name), status, reason)).lastrowid
                db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?)",
                               [(case_id, *row) for row in sample_rows(case)])
            out.append((path, run))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return out


def merge(db, source):
    """Copies the runs of another history (an open connection) that db lacks, keyed by file_sha256,
    in one transaction; returns how many were copied. Why: runners that each keep their own file
    pool them into one without a shared filesystem."""
    runs = source.execute("SELECT id, file_sha256, source, git_sha, date, executable, context, recorded_at "
                          "FROM runs ORDER BY id").fetchall()
    copied = 0
    db.execute("BEGIN IMMEDIATE")
    try:
        for old_id, *run in runs:
            if db.execute("SELECT 1 FROM runs WHERE file_sha256 = ?", (run[0],)).fetchone():
                continue
            new_id = db.execute("INSERT INTO runs (file_sha256, source, git_sha, date, executable, context, "
                                "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)", run).lastrowid
            for case_id, *case in source.execute("SELECT id, name, runner_class, status, reason FROM cases "
                                                 "WHERE run_id = ?", (old_id,)).fetchall():
                new_case = db.execute("INSERT INTO cases (run_id, name, runner_class, status, reason) "
                                      "VALUES (?, ?, ?, ?, ?)", (new_id, *case)).lastrowid
                db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?)",
                               [(new_case, *row) for row in source.execute(
                                   "SELECT metric, kind, repetition, value FROM samples WHERE case_id = ?",
                                   (case_id,))])
            copied += 1
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return copied
