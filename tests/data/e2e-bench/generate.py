#!/usr/bin/env python3
"""generate.py: writes the small benchmark that tests/e2e/exec.sh runs on a
real Kafka + Flink pair, one task per behaviour of the executor: filters,
tumbling / hopping / session windows on event time, a live-static join, an
interval join, GROUP BY into an upsert sink, Top-N with retractions into a
debezium sink, deduplication, and the failures (syntax error, unknown column,
runtime exception, updates into an append-only sink, timeout, statement
rejected before Flink, missing prediction).

Gold relations are computed here in plain Python from the same rows, not by
Flink, so the test checks Flink's answer against an independent one.
Run it from anywhere; it rewrites the folder it lives in. Outputs:
task_ids.txt, tasks/, gold/, evaluation/, predictions.jsonl (the candidates)
and expected.tsv (task ID, expected status, a piece of the expected detail).
"""
import csv
import datetime as dt
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = dt.datetime(2024, 1, 1, 10, 0, 0)


def ts(seconds):
    return (T0 + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")


# ---- source rows ------------------------------------------------------------

CUSTOMERS = [("alice", "Paris"), ("bob", "Lyon"), ("carol", "Nice"), ("dave", "Lille")]
# (order_id, customer, amount, seconds after T0). Written shuffled: the worker
# must replay them in event-time order. Amounts are distinct per customer.
ORDERS = [
    (1, "alice", 12.5, 5), (2, "bob", 30.0, 20), (3, "carol", 7.25, 41),
    (4, "alice", 45.0, 70), (5, "dave", 22.0, 95), (6, "bob", 18.5, 130),
    (7, "alice", 8.0, 150), (8, "carol", 60.0, 200), (9, "bob", 41.5, 215),
    (10, "dave", 5.5, 260), (11, "alice", 33.0, 400), (12, "carol", 21.0, 410),
    (13, "bob", 9.75, 430), (14, "dave", 70.0, 500), (15, "alice", 50.5, 520),
    (16, "carol", 15.0, 560), (17, "bob", 26.0, 590), (18, "dave", 11.0, 600),
]
# (order_id, seconds after T0 it shipped); some ship later than 5 minutes.
SHIPMENTS = [(1, 65), (2, 500), (4, 100), (5, 120), (8, 230), (9, 700), (11, 420),
             (14, 520), (15, 900), (17, 640), (99, 10)]
# (event_id, payload, seconds): duplicates of an event arrive later.
EVENTS = [(1, "a", 1), (2, "b", 2), (1, "a-dup", 3), (3, "c", 4), (2, "b-dup", 9),
          (4, "d", 10), (1, "a-dup2", 12), (5, "e", 15)]
NUMS = [(n, 1) for n in range(2000)]

# ---- DDL ---------------------------------------------------------------------

KAFKA = ("'connector'='kafka','topic'='${topic}','properties.bootstrap.servers'="
         "'${bootstrap}'")
SOURCE_WITH = KAFKA + (",'format'='json','scan.startup.mode'='earliest-offset',"
                       "'scan.bounded.mode'='latest-offset'")
TIME_COLUMN = {"from": "%Y-%m-%d %H:%M:%S", "to": "sql"}

SOURCES = {
    "orders": {
        "kind": "live", "header": ["order_id", "customer", "amount", "ordered_at"],
        "rows": [(o, c, a, ts(s)) for o, c, a, s in ORDERS],
        "columns": [{"name": "order_id"}, {"name": "customer"}, {"name": "amount"},
                    {"name": "ts", "from": "ordered_at", "time": TIME_COLUMN}],
        "event_time": "ts",
        "ddl": "CREATE TABLE orders (order_id BIGINT, customer STRING, amount DOUBLE, "
               "ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
               + SOURCE_WITH + ")",
    },
    "customers": {
        "kind": "static", "header": ["customer", "city", "unused"],
        "rows": [(c, city, "x") for c, city in CUSTOMERS],
        "columns": [{"name": "customer"}, {"name": "city"}],
        "ddl": "CREATE TABLE customers (customer STRING, city STRING) WITH ("
               + SOURCE_WITH + ")",
    },
    "shipments": {
        "kind": "live", "header": ["order_id", "shipped"],
        "rows": [(o, ts(s)) for o, s in SHIPMENTS],
        "columns": [{"name": "order_id"}, {"name": "ship_ts", "from": "shipped",
                                           "time": TIME_COLUMN}],
        "event_time": "ship_ts",
        "ddl": "CREATE TABLE shipments (order_id BIGINT, ship_ts TIMESTAMP(3), "
               "WATERMARK FOR ship_ts AS ship_ts - INTERVAL '1' SECOND) WITH ("
               + SOURCE_WITH + ")",
    },
    "events": {
        "kind": "live", "header": ["event_id", "payload", "at"],
        "rows": [(e, p, ts(s)) for e, p, s in EVENTS],
        "columns": [{"name": "event_id"}, {"name": "payload"},
                    {"name": "ts", "from": "at", "time": TIME_COLUMN}],
        "event_time": "ts",
        "ddl": "CREATE TABLE events (event_id BIGINT, payload STRING, ts TIMESTAMP(3), "
               "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (" + SOURCE_WITH + ")",
    },
    "nums": {
        "kind": "static", "header": ["n", "k"], "rows": NUMS,
        "columns": [{"name": "n"}, {"name": "k"}],
        "ddl": "CREATE TABLE nums (n BIGINT, k BIGINT) WITH (" + SOURCE_WITH + ")",
    },
}


def sink(changelog, columns, key=None):
    """A sink named result over the given (name, type) columns. RESULT is a
    reserved word in Flink SQL: the DDL quotes it."""
    body = ", ".join(f"{n} {t}" for n, t in columns)
    if changelog == "upsert":
        body += f", PRIMARY KEY ({', '.join(key)}) NOT ENFORCED"
        with_ = ("'connector'='upsert-kafka','topic'='${topic}','properties.bootstrap."
                 "servers'='${bootstrap}','key.format'='json','value.format'='json'")
    else:
        fmt = "debezium-json" if changelog == "debezium" else "json"
        with_ = KAFKA + f",'format'='{fmt}'"
    return {"name": "result", "changelog": changelog,
            "ddl": f"CREATE TABLE `result` ({body}) WITH ({with_})"}, columns


# ---- gold, computed independently ------------------------------------------

def by_time(rows, at):
    return sorted(rows, key=at)


def gold_filter(limit):
    return [(o, c.upper(), a) for o, c, a, s in ORDERS if a > limit]


def window_label(seconds):
    return ts(seconds)


def gold_tumble(size):
    windows = {}
    for _, _, a, s in ORDERS:
        start = s - s % size
        cnt, total = windows.get(start, (0, 0.0))
        windows[start] = (cnt + 1, total + a)
    return [(window_label(w), c, t) for w, (c, t) in sorted(windows.items())]


def gold_hop(slide, size):
    windows = {}
    for _, _, a, s in ORDERS:
        last = s - s % slide
        for start in range(last - size + slide, last + 1, slide):
            cnt, total = windows.get(start, (0, 0.0))
            windows[start] = (cnt + 1, total + a)
    return [(window_label(w), c, t) for w, (c, t) in sorted(windows.items())]


def gold_session(gap):
    out = []
    for customer in sorted({c for _, c, _, _ in ORDERS}):
        times = sorted(s for _, c, _, s in ORDERS if c == customer)
        start, count, prev = times[0], 1, times[0]
        for s in times[1:]:
            # Flink merges windows [t, t + gap) that touch: a row exactly one
            # gap after the previous one still extends the session.
            if s - prev > gap:
                out.append((customer, window_label(start), count))
                start, count = s, 0
            count, prev = count + 1, s
        out.append((customer, window_label(start), count))
    return out


def gold_join_static():
    city = dict(CUSTOMERS)
    return [(o, city[c]) for o, c, _, _ in ORDERS]


def gold_interval_join(limit):
    ordered = {o: s for o, _, _, s in ORDERS}
    return [(o, s - ordered[o]) for o, s in SHIPMENTS
            if o in ordered and 0 <= s - ordered[o] <= limit]


def gold_group_by():
    out = {}
    for _, c, a, _ in ORDERS:
        cnt, total = out.get(c, (0, 0.0))
        out[c] = (cnt + 1, total + a)
    return [(c, n, t) for c, (n, t) in sorted(out.items())]


def gold_top_n(n):
    out = []
    for customer in sorted({c for _, c, _, _ in ORDERS}):
        rows = sorted(((a, o) for o, c, a, _ in ORDERS if c == customer), reverse=True)
        out += [(customer, o, a) for a, o in rows[:n]]
    return out


def gold_dedup():
    first = {}
    for e, p, s in by_time(EVENTS, lambda r: r[2]):
        first.setdefault(e, p)
    return sorted(first.items())


# ---- tasks -------------------------------------------------------------------

FILTER_SINK = sink("append", [("order_id", "BIGINT"), ("customer", "STRING"),
                              ("amount", "DOUBLE")])
FILTER_SQL = "SELECT order_id, UPPER(customer) AS customer, amount FROM orders WHERE amount > 20"
WINDOW_SINK = sink("append", [("window_start", "STRING"), ("cnt", "BIGINT"),
                              ("total", "DOUBLE")])

# task id -> (sources, (sink, columns), gold rows, candidate or None, expected
# status, a piece of the expected detail, timeout_s)
TASKS = {
    "filter": (["orders"], FILTER_SINK, gold_filter(20), FILTER_SQL, "match", "", 120),
    "filter_mismatch": (["orders"], FILTER_SINK, gold_filter(20),
                        FILTER_SQL.replace("> 20", "> 10"), "mismatch", "", 120),
    "tumble": (["orders"], WINDOW_SINK, gold_tumble(120),
               "SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd HH:mm:ss') AS window_start, "
               "COUNT(*) AS cnt, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE orders, "
               "DESCRIPTOR(ts), INTERVAL '2' MINUTES)) GROUP BY window_start, window_end",
               "match", "", 120),
    "hop": (["orders"], WINDOW_SINK, gold_hop(60, 180),
            "SELECT DATE_FORMAT(window_start, 'yyyy-MM-dd HH:mm:ss') AS window_start, "
            "COUNT(*) AS cnt, SUM(amount) AS total FROM TABLE(HOP(TABLE orders, "
            "DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '3' MINUTES)) "
            "GROUP BY window_start, window_end", "match", "", 120),
    "session": (["orders"],
                sink("append", [("customer", "STRING"), ("session_start", "STRING"),
                                ("cnt", "BIGINT")]),
                gold_session(120),
                "SELECT customer, DATE_FORMAT(SESSION_START(ts, INTERVAL '2' MINUTE), "
                "'yyyy-MM-dd HH:mm:ss') AS session_start, COUNT(*) AS cnt FROM orders "
                "GROUP BY customer, SESSION(ts, INTERVAL '2' MINUTE)", "match", "", 120),
    "join_static": (["orders", "customers"],
                    sink("append", [("order_id", "BIGINT"), ("city", "STRING")]),
                    gold_join_static(),
                    "SELECT o.order_id, c.city FROM orders AS o JOIN customers AS c "
                    "ON o.customer = c.customer", "match", "", 120),
    "interval_join": (["orders", "shipments"],
                      sink("append", [("order_id", "BIGINT"), ("secs", "INT")]),
                      gold_interval_join(300),
                      "SELECT o.order_id, TIMESTAMPDIFF(SECOND, o.ts, s.ship_ts) AS secs "
                      "FROM orders AS o JOIN shipments AS s ON o.order_id = s.order_id "
                      "AND s.ship_ts BETWEEN o.ts AND o.ts + INTERVAL '5' MINUTE",
                      "match", "", 120),
    "group_by_upsert": (["orders"],
                        sink("upsert", [("customer", "STRING"), ("cnt", "BIGINT"),
                                        ("total", "DOUBLE")], key=["customer"]),
                        gold_group_by(),
                        "SELECT customer, COUNT(*) AS cnt, SUM(amount) AS total "
                        "FROM orders GROUP BY customer", "match", "", 120),
    "top_n_debezium": (["orders"],
                       sink("debezium", [("customer", "STRING"), ("order_id", "BIGINT"),
                                         ("amount", "DOUBLE")]),
                       gold_top_n(2),
                       "SELECT customer, order_id, amount FROM (SELECT customer, order_id, "
                       "amount, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY amount "
                       "DESC) AS rn FROM orders) WHERE rn <= 2", "match", "", 120),
    "dedup": (["events"],
              sink("upsert", [("event_id", "BIGINT"), ("payload", "STRING")],
                   key=["event_id"]),
              gold_dedup(),
              "SELECT event_id, payload FROM (SELECT event_id, payload, ROW_NUMBER() OVER "
              "(PARTITION BY event_id ORDER BY ts ASC) AS rn FROM events) WHERE rn = 1",
              "match", "", 120),
    "err_syntax": (["orders"], FILTER_SINK, gold_filter(20),
                   "SELECT order_id, customer, amount FROMM orders", "flink_error",
                   "SQL parse failed", 120),
    "err_unknown_column": (["orders"], FILTER_SINK, gold_filter(20),
                           "SELECT order_id, customer, nope FROM orders", "flink_error",
                           "nope", 120),
    "err_runtime": (["orders"], FILTER_SINK, gold_filter(20),
                    "SELECT order_id, customer, CAST(customer AS DOUBLE) AS amount "
                    "FROM orders", "flink_error", "NumberFormatException", 120),
    "err_updates_into_append": (["orders"], FILTER_SINK, gold_filter(20),
                                "SELECT COUNT(*) AS order_id, customer, SUM(amount) AS "
                                "amount FROM orders GROUP BY customer", "flink_error",
                                "doesn't support consuming update changes", 120),
    "err_timeout": (["nums"], sink("append", [("n", "BIGINT")]), [(0,)],
                    "SELECT a.n FROM nums AS a JOIN nums AS b ON a.k = b.k "
                    "JOIN nums AS c ON b.k = c.k", "timeout", "8 s", 8),
    "err_rejected": (["orders"], FILTER_SINK, gold_filter(20),
                     "SELECT * FROM orders /*+ OPTIONS('scan.bounded.mode'='unbounded') */",
                     "rejected_sql", "OPTIONS", 120),
    "err_missing": (["orders"], FILTER_SINK, gold_filter(20), None,
                    "missing_prediction", "", 120),
}


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_task(task_id, sources, sink_columns, timeout_s):
    sink_def, columns = sink_columns
    folder = os.path.join(HERE, "tasks", task_id)
    entries = []
    for name in sources:
        src = SOURCES[name]
        rows = list(src["rows"])
        if src["kind"] == "live":
            rows = rows[1::2] + rows[0::2]  # out of order on disk on purpose
        write_csv(os.path.join(folder, "sources", name + ".csv"), src["header"], rows)
        entry = {"name": name, "kind": src["kind"], "file": f"sources/{name}.csv",
                 "columns": src["columns"], "ddl": src["ddl"]}
        if "event_time" in src:
            entry["event_time"] = src["event_time"]
        entries.append(entry)
    task = {"task_id": task_id, "question": "e2e fixture: " + task_id, "sources": entries,
            "sink": sink_def,
            "output_schema": [{"name": n, "type": t} for n, t in columns],
            "timeout_s": timeout_s}
    with open(os.path.join(folder, "task.json"), "w") as out:
        json.dump(task, out, indent=1)
        out.write("\n")
    return [n for n, _ in columns]


def main():
    for sub in ("tasks", "gold", "evaluation"):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
        os.makedirs(os.path.join(HERE, sub))
    with open(os.path.join(HERE, "task_ids.txt"), "w") as ids, \
            open(os.path.join(HERE, "predictions.jsonl"), "w") as preds, \
            open(os.path.join(HERE, "expected.tsv"), "w") as expected:
        for task_id, (sources, sink_columns, gold, sql, status, detail, timeout_s) \
                in TASKS.items():
            ids.write(task_id + "\n")
            header = write_task(task_id, sources, sink_columns, timeout_s)
            write_csv(os.path.join(HERE, "gold", task_id + ".csv"), header, gold)
            with open(os.path.join(HERE, "evaluation", task_id + ".json"), "w") as out:
                json.dump({"ignore_order": True, "answer_policy": {"kind": "ordinary"}}, out)
                out.write("\n")
            if sql is not None:
                preds.write(json.dumps({"task_id": task_id, "sql": sql}) + "\n")
            expected.write(f"{task_id}\t{status}\t{detail}\n")


if __name__ == "__main__":
    main()
