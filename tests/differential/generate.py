#!/usr/bin/env python3
"""generate.py: a seeded generator of benchmark tasks for the differential
test against Flink BATCH (tests/e2e/differential.sh). Each task draws a query
shape (SHAPES below: one small function per shape, so adding one is adding
a function) and fresh source rows with the data traits that break readers
and engines: NULLs, duplicate keys, tied and window-bound event times,
negative and fractional numbers, strings with commas, quotes, newlines and
unicode, header-only files, BOM + CRLF files, blank lines and every time
format of docs/benchmark.md.

It writes a benchmark folder (docs/benchmark.md) without gold, plus what the
batch oracle needs and nothing of streamex's path produces:
    OUT/oracle/ID.json   the reference SQL, each source's column types and
                         its prepared rows (the docs/benchmark.md projection and time
                         conversion, computed here independently), the
                         shape and the known Flink differences it may hit
    OUT/predictions.jsonl the same SQL, a third rephrased (INSERT INTO, a
                         CTE, comments)
batch_gold.py then writes OUT/gold/ from Flink BATCH.

Known Flink STREAMING/BATCH differences are avoided where the data allows
(unique ids break Top-N ties, watermarks always have a delay, no event time
before 1970) and marked in oracle/ID.json "known" where they cannot be:
  global_aggregate_empty  a global aggregate sees no row: batch gives one row
  order_ties              dedup or ROWS OVER ordered by a time with ties
  top1_rank               a Top-1 ordered by no time attribute: Flink 2.2.1
                          takes it for insert-only

    generate.py --out DIR --count N --seed S [--shapes a,b]
"""

import argparse
import csv
import datetime as dt
import io
import json
import os
import random
import shutil

EPOCH = dt.datetime(1970, 1, 1)
BASE = dt.datetime(2024, 3, 1, 12, 0, 0)
KEYS = ["a", "b", "c, d", 'say "hi"', "line\nbreak", "é→ü 🎉", "  padded ", "NA"]

KAFKA_SOURCE = ("'connector'='kafka','topic'='${topic}','properties.bootstrap.servers'="
                "'${bootstrap}','format'='json','scan.startup.mode'='earliest-offset',"
                "'scan.bounded.mode'='latest-offset'")
KAFKA_SINK = "'connector'='kafka','topic'='${topic}','properties.bootstrap.servers'='${bootstrap}'"

# Each source: (column, SQL type) in output order, the event time column, kind.
SCHEMAS = {
    "ev": ([("id", "BIGINT"), ("k", "STRING"), ("v", "DOUBLE"), ("n", "BIGINT"),
            ("ts", "TIMESTAMP(3)")], "ts", "live"),
    "ev2": ([("id", "BIGINT"), ("k", "STRING"), ("w", "DOUBLE"), ("ts", "TIMESTAMP(3)")],
            "ts", "live"),
    "dim": ([("k", "STRING"), ("region", "STRING"), ("weight", "BIGINT")], None, "static"),
}

# (strftime pattern or epoch_s / epoch_ms, whether it carries milliseconds)
TIME_FORMATS = [("%Y-%m-%d %H:%M:%S", False), ("%Y-%m-%d %H:%M:%S.%f", True),
                ("%Y-%m-%dT%H:%M:%S.%f", True), ("%d/%m/%Y %H:%M:%S", False),
                ("epoch_s", True), ("epoch_ms", True)]


# ---- source rows ------------------------------------------------------------

def maybe_null(rng, value, share=0.12):
    return None if rng.random() < share else value


def number(rng):
    return rng.choice([0, 1, -1, 2.5, -3.25, 0.125, 10, 7.5, -0.5, 100.75, 3])


def event_times(rng, count, fractional):
    """Seconds after BASE: on window bounds (multiples of 5), ties, and
    milliseconds when the format keeps them."""
    out = []
    for _ in range(count):
        r = rng.random()
        if out and r < 0.2:
            out.append(rng.choice(out))  # a tie
        elif r < 0.55:
            out.append(5 * rng.randint(0, 12))  # a window bound
        else:
            ms = rng.choice([0, 0, 500, 1, 999]) if fractional else 0
            out.append(rng.randint(0, 60) + ms / 1000)
    return out


def rows_for(rng, name, fractional, ids):
    count = 0 if rng.random() < 0.08 else rng.randint(1, 18)
    if name == "dim":
        keys = rng.sample(KEYS, rng.randint(0, 5))
        return [{"k": key, "region": maybe_null(rng, rng.choice(["north", "south", "x,y"])),
                 "weight": maybe_null(rng, rng.randint(-5, 20))} for key in keys]
    rows = []
    for t in event_times(rng, count, fractional):
        row = {"id": next(ids), "k": maybe_null(rng, rng.choice(KEYS[:rng.randint(2, 8)])),
               "ts": t}
        if name == "ev":
            row["v"] = maybe_null(rng, number(rng))
            row["n"] = maybe_null(rng, rng.randint(-20, 20))
        else:
            row["w"] = maybe_null(rng, number(rng))
        rows.append(row)
    rng.shuffle(rows)  # the worker replays in event-time order, not file order
    return rows


def sql_time(seconds):
    """docs/benchmark.md 'sql': YYYY-MM-DD HH:MM:SS[.fff], milliseconds only when not 0."""
    t = BASE + dt.timedelta(seconds=seconds)
    text = t.strftime("%Y-%m-%d %H:%M:%S")
    return text + ".%03d" % (t.microsecond // 1000) if t.microsecond else text


def time_text(seconds, fmt):
    t = BASE + dt.timedelta(seconds=seconds)
    ms = round((t - EPOCH).total_seconds() * 1000)
    if fmt == "epoch_s":
        return str(ms // 1000) if ms % 1000 == 0 else "%d.%03d" % (ms // 1000, ms % 1000)
    if fmt == "epoch_ms":
        return str(ms)
    text = t.strftime(fmt)
    return text[:-3] if fmt.endswith("%f") else text  # three digits: milliseconds


def text_of(rng, value):
    """A number as a CSV may spell it: 3.0 sometimes as 3."""
    if isinstance(value, float) and value.is_integer() and rng.random() < 0.5:
        return str(int(value))
    return str(value)


def source_file(rng, name, rows, time_fmt):
    """The CSV a method sees: renamed and extra columns, shuffled header
    order, and maybe BOM + CRLF and blank lines. Returns (text, columns spec)."""
    columns, event_time, _ = SCHEMAS[name]
    spec, header = [], []
    for col, _type in columns:
        raw = col if rng.random() < 0.5 else "src_" + col
        entry = {"name": col}
        if raw != col:
            entry["from"] = raw
        if col == event_time:
            entry["time"] = {"from": time_fmt, "to": "sql"}
        spec.append(entry)
        header.append(raw)
    if rng.random() < 0.3:
        header.append("unused")
    order = header[:]
    rng.shuffle(order)
    crlf = rng.random() < 0.25
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(order)
    raw_of = {(e.get("from") or e["name"]): e["name"] for e in spec}
    for row in rows:
        fields = []
        for raw in order:
            col = raw_of.get(raw)
            value = row.get(col) if col else "junk"
            if value is None:
                fields.append("")
            elif col and col == event_time:
                fields.append(time_text(value, time_fmt))
            else:
                fields.append(text_of(rng, value))
        writer.writerow(fields)
        if rng.random() < 0.08:
            buf.write("\r\n" if crlf else "\n")  # a blank line
    text = buf.getvalue()
    if crlf:
        text = "\ufeff" + text
    return text, spec


def prepared(name, rows):
    """The docs/benchmark.md projection: every value a JSON string, NULL for an empty
    field, the event time converted to 'sql'."""
    columns, event_time, _ = SCHEMAS[name]
    out = []
    for row in rows:
        record = {}
        for col, _type in columns:
            value = row.get(col)
            if value is None:
                record[col] = None
            elif col == event_time:
                record[col] = sql_time(value)
            else:
                record[col] = str(value)
        out.append(record)
    return out


# ---- query shapes -------------------------------------------------------------
# Each shape takes (rng, data) where data maps a source name to its logical
# rows, and returns a dict: sql, sources, columns [(name, type)], changelog
# (append / upsert / debezium), key (upsert only), known (list of tags).

def ties_within(rows, key):
    seen = set()
    for r in rows:
        mark = (r.get(key), r["ts"])
        if mark in seen:
            return True
        seen.add(mark)
    return False


def shape_filter(rng, data):
    cond = rng.choice(["v > 0", "n < 0 OR k IS NULL", "k LIKE '%,%' OR v IS NULL",
                       "k IN ('a', 'NA', 'line\nbreak')", "v BETWEEN -1 AND 3"])
    return {"sql": f"SELECT id, k, v FROM ev WHERE {cond}", "sources": ["ev"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("v", "DOUBLE")],
            "changelog": "append"}


def shape_project(rng, data):
    return {"sql": "SELECT id, COALESCE(k, '(none)') AS k, n * 2 AS n2, "
                   "CHAR_LENGTH(k) AS len, v / 4 AS q FROM ev WHERE id % 2 = "
                   + str(rng.randint(0, 1)),
            "sources": ["ev"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("n2", "BIGINT"),
                        ("len", "INT"), ("q", "DOUBLE")],
            "changelog": "append"}


def shape_group_by(rng, data):
    agg = rng.choice(["SUM(v)", "AVG(v)", "MIN(v)", "MAX(v)"])
    return {"sql": f"SELECT k, COUNT(*) AS cnt, {agg} AS a, SUM(n) AS sn FROM ev GROUP BY k",
            "sources": ["ev"],
            "columns": [("k", "STRING"), ("cnt", "BIGINT"), ("a", "DOUBLE"), ("sn", "BIGINT")],
            "changelog": "debezium"}


def shape_group_by_upsert(rng, data):
    return {"sql": "SELECT COALESCE(k, '?') AS k, COUNT(*) AS cnt, MAX(n) AS mx FROM ev "
                   "GROUP BY COALESCE(k, '?')",
            "sources": ["ev"],
            "columns": [("k", "STRING"), ("cnt", "BIGINT"), ("mx", "BIGINT")],
            "changelog": "upsert", "key": ["k"]}


def shape_having(rng, data):
    limit = rng.randint(1, 3)
    return {"sql": f"SELECT k, COUNT(*) AS cnt, MIN(n) AS mn FROM ev GROUP BY k "
                   f"HAVING COUNT(*) > {limit}",
            "sources": ["ev"],
            "columns": [("k", "STRING"), ("cnt", "BIGINT"), ("mn", "BIGINT")],
            "changelog": "debezium"}


def shape_global_aggregate(rng, data):
    cond = rng.choice(["", " WHERE v > 50", " WHERE n > 0"])
    return {"sql": f"SELECT COUNT(*) AS cnt, SUM(v) AS sv, MAX(n) AS mx FROM ev{cond}",
            "sources": ["ev"],
            "columns": [("cnt", "BIGINT"), ("sv", "DOUBLE"), ("mx", "BIGINT")],
            "changelog": "debezium", "known": ["global_aggregate_empty"]}


def window_shape(tvf, keyed):
    def shape(rng, data):
        key = "k, " if keyed else ""
        sql = (f"SELECT {key}window_start, window_end, COUNT(*) AS cnt, SUM(v) AS sv "
               f"FROM TABLE({tvf}) GROUP BY {key}window_start, window_end")
        cols = [("k", "STRING")] if keyed else []
        return {"sql": sql, "sources": ["ev"],
                "columns": cols + [("window_start", "TIMESTAMP(3)"),
                                   ("window_end", "TIMESTAMP(3)"), ("cnt", "BIGINT"),
                                   ("sv", "DOUBLE")],
                "changelog": "append"}
    return shape


TUMBLE = "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)"
HOP = "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)"
CUMULATE = "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND)"


def shape_join(rng, data):
    return {"sql": "SELECT e.id, e.k, d.region, d.weight FROM ev AS e JOIN dim AS d "
                   "ON e.k = d.k",
            "sources": ["ev", "dim"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("region", "STRING"),
                        ("weight", "BIGINT")],
            "changelog": "append"}


def shape_left_join(rng, data):
    return {"sql": "SELECT e.id, e.k, d.region FROM ev AS e LEFT JOIN dim AS d ON e.k = d.k",
            "sources": ["ev", "dim"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("region", "STRING")],
            "changelog": "debezium"}


def shape_interval_join(rng, data):
    lo, hi = rng.choice([(5, 5), (0, 10), (2, 0)])
    return {"sql": "SELECT a.id, b.id AS id2, a.k, b.w FROM ev AS a, ev2 AS b "
                   f"WHERE a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '{lo}' SECOND "
                   f"AND a.ts + INTERVAL '{hi}' SECOND",
            "sources": ["ev", "ev2"],
            "columns": [("id", "BIGINT"), ("id2", "BIGINT"), ("k", "STRING"), ("w", "DOUBLE")],
            "changelog": "append"}


def shape_top_n(rng, data):
    n = rng.randint(1, 3)
    order = rng.choice(["v DESC, id", "n ASC, id DESC"])
    return {"sql": "SELECT k, id, v FROM (SELECT id, k, v, ROW_NUMBER() OVER "
                   f"(PARTITION BY k ORDER BY {order}) AS rn FROM ev) WHERE rn <= {n}",
            "sources": ["ev"],
            "columns": [("k", "STRING"), ("id", "BIGINT"), ("v", "DOUBLE")],
            "changelog": "debezium", "known": ["top1_rank"] if n == 1 else []}


def shape_dedup(rng, data):
    direction = rng.choice(["ASC", "DESC"])
    known = ["order_ties"] if ties_within(data["ev"], "k") else []
    return {"sql": "SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER "
                   f"(PARTITION BY k ORDER BY ts {direction}) AS rn FROM ev) WHERE rn = 1",
            "sources": ["ev"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("v", "DOUBLE")],
            "changelog": "debezium", "known": known}


def shape_over(rng, data):
    if rng.random() < 0.5:
        # Not RANGE INTERVAL: Flink 1.20 BATCH cannot compile it on TIMESTAMP(3).
        frame = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        known = []
    else:
        frame = "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"
        known = ["order_ties"] if ties_within(data["ev"], "k") else []
    return {"sql": f"SELECT id, k, SUM(v) OVER w AS s, COUNT(*) OVER w AS c FROM ev "
                   f"WINDOW w AS (PARTITION BY k ORDER BY ts {frame})",
            "sources": ["ev"],
            "columns": [("id", "BIGINT"), ("k", "STRING"), ("s", "DOUBLE"), ("c", "BIGINT")],
            "changelog": "append", "known": known}


def shape_union(rng, data):
    all_ = rng.random() < 0.5
    return {"sql": f"SELECT k FROM ev UNION {'ALL ' if all_ else ''}SELECT k FROM ev2",
            "sources": ["ev", "ev2"], "columns": [("k", "STRING")],
            "changelog": "append" if all_ else "debezium"}


def shape_distinct(rng, data):
    cols = rng.choice([["k"], ["k", "n"], ["n"]])
    types = {"k": "STRING", "n": "BIGINT"}
    return {"sql": f"SELECT DISTINCT {', '.join(cols)} FROM ev", "sources": ["ev"],
            "columns": [(c, types[c]) for c in cols], "changelog": "debezium"}


SHAPES = {
    "filter": shape_filter,
    "project": shape_project,
    "group_by": shape_group_by,
    "group_by_upsert": shape_group_by_upsert,
    "having": shape_having,
    "global_aggregate": shape_global_aggregate,
    "tumble": window_shape(TUMBLE, False),
    "tumble_keyed": window_shape(TUMBLE, True),
    "hop": window_shape(HOP, False),
    "cumulate": window_shape(CUMULATE, True),
    "join": shape_join,
    "left_join": shape_left_join,
    "interval_join": shape_interval_join,
    "top_n": shape_top_n,
    "dedup": shape_dedup,
    "over": shape_over,
    "union": shape_union,
    "distinct": shape_distinct,
}


# ---- task files -----------------------------------------------------------------

def source_ddl(name, with_):
    columns, event_time, _ = SCHEMAS[name]
    body = ", ".join(f"{c} {t}" for c, t in columns)
    if event_time:
        body += f", WATERMARK FOR {event_time} AS {event_time} - INTERVAL '1' SECOND"
    return f"CREATE TABLE {name} ({body}) WITH ({with_})"


def sink_ddl(shape):
    body = ", ".join(f"{c} {t}" for c, t in shape["columns"])
    if shape["changelog"] == "upsert":
        body += f", PRIMARY KEY ({', '.join(shape['key'])}) NOT ENFORCED"
        with_ = ("'connector'='upsert-kafka','topic'='${topic}','properties.bootstrap."
                 "servers'='${bootstrap}','key.format'='json','value.format'='json'")
    else:
        fmt = "debezium-json" if shape["changelog"] == "debezium" else "json"
        with_ = KAFKA_SINK + f",'format'='{fmt}'"
    return f"CREATE TABLE `result` ({body}) WITH ({with_})"


def rephrase(rng, sql):
    """The prediction: the reference SQL, a third of the time rephrased."""
    r = rng.random()
    if r < 0.11:
        return "INSERT INTO `result` " + sql
    if r < 0.22:
        return f"WITH q AS ({sql})\nSELECT * FROM q"
    if r < 0.33:
        return f"-- generated\n/* differential */ {sql}\n"
    return sql


def make_task(rng, task_id, shape_name, out):
    ids = iter(range(1, 10 ** 6))
    fmts = {name: rng.choice(TIME_FORMATS) for name in SCHEMAS}
    data = {name: rows_for(rng, name, fmts[name][1], ids) for name in SCHEMAS}
    shape = SHAPES[shape_name](rng, data)
    tdir = os.path.join(out, "tasks", task_id)
    os.makedirs(os.path.join(tdir, "sources"))
    sources, oracle_sources = [], []
    for name in shape["sources"]:
        text, spec = source_file(rng, name, data[name], fmts[name][0])
        with open(os.path.join(tdir, "sources", name + ".csv"), "w", newline="",
                  encoding="utf-8") as f:
            f.write(text)
        columns, event_time, kind = SCHEMAS[name]
        entry = {"name": name, "kind": kind, "file": f"sources/{name}.csv", "columns": spec,
                 "ddl": source_ddl(name, KAFKA_SOURCE)}
        if event_time:
            entry["event_time"] = event_time
        sources.append(entry)
        oracle_sources.append({"name": name, "columns": columns, "event_time": event_time,
                               "rows": prepared(name, data[name])})
    task = {"task_id": task_id, "question": f"differential: {shape_name}",
            "sources": sources,
            "sink": {"name": "result", "changelog": shape["changelog"],
                     "ddl": sink_ddl(shape)},
            "output_schema": [{"name": c, "type": t} for c, t in shape["columns"]],
            "timeout_s": 120}
    with open(os.path.join(tdir, "task.json"), "w") as f:
        json.dump(task, f, indent=1, ensure_ascii=False)
    with open(os.path.join(out, "evaluation", task_id + ".json"), "w") as f:
        json.dump({"ignore_order": True}, f)
    with open(os.path.join(out, "oracle", task_id + ".json"), "w") as f:
        json.dump({"task_id": task_id, "shape": shape_name, "sql": shape["sql"],
                   "sources": oracle_sources, "columns": shape["columns"],
                   "known": shape.get("known", [])}, f, ensure_ascii=False)
    return rephrase(rng, shape["sql"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    for sub in ("tasks", "gold", "evaluation", "oracle"):
        os.makedirs(os.path.join(args.out, sub))
    rng = random.Random(args.seed)
    ids, preds = [], []
    for i in range(args.count):
        task_id = "d%05d" % i
        shape = shapes[i % len(shapes)]
        sql = make_task(rng, task_id, shape, args.out)
        ids.append(task_id)
        preds.append({"task_id": task_id, "sql": sql})
    with open(os.path.join(args.out, "task_ids.txt"), "w") as f:
        f.write("".join(i + "\n" for i in ids))
    with open(os.path.join(args.out, "predictions.jsonl"), "w") as f:
        f.write("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
    print(f"generated {len(ids)} tasks in {args.out} (seed {args.seed})")


if __name__ == "__main__":
    main()
