#!/usr/bin/env python3
"""batch_gold.py: the oracle of the differential test. Runs each task's
reference query with Flink in BATCH mode over filesystem tables that hold
the task's prepared rows (OUT/oracle/ID.json, written by generate.py), and
writes the result as the task's gold CSV. Nothing of streamex is on this
path: its own Python client speaks the SQL Gateway REST API, the rows come
from the generator, the output is Flink's JSON format read back here.

Gold CSVs are written as Python's csv module writes them (NULL as an empty
field, a lone NULL as ""), in the JSON text Flink wrote (so numbers keep
Flink's spelling, as in a streamex final CSV). A task whose reference query
fails in BATCH mode is dropped from task_ids.txt and predictions.jsonl and
listed in OUT/oracle/errors.jsonl.

    batch_gold.py --bench OUT --gateway http://127.0.0.1:PORT [--jobs N]
"""

import argparse
import concurrent.futures
import csv
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request


class GatewayError(Exception):
    pass


class Session:
    """One SQL Gateway session in BATCH mode; INSERTs return when the job ends."""

    def __init__(self, gateway):
        self.gateway = gateway.rstrip("/")
        body = {"properties": {"execution.runtime-mode": "batch", "table.dml-sync": "true",
                               "table.local-time-zone": "UTC"}}
        self.handle = self.call("POST", "/v1/sessions", body)["sessionHandle"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.gateway + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                text = response.read()
        except urllib.error.HTTPError as e:
            raise GatewayError(f"{method} {path}: HTTP {e.code}: {root_cause(e.read())}")
        return json.loads(text) if text else {}

    def execute(self, statement, deadline_s=300):
        base = f"/v1/sessions/{self.handle}"
        op = self.call("POST", base + "/statements", {"statement": statement})
        path = f"{base}/operations/{op['operationHandle']}"
        deadline = time.monotonic() + deadline_s
        delay = 0.05
        while True:
            status = self.call("GET", path + "/status")["status"]
            if status in ("FINISHED", "ERROR", "CANCELED", "CLOSED"):
                break
            if time.monotonic() > deadline:
                self.call("POST", path + "/cancel")
                raise GatewayError(f"no end within {deadline_s} s: {statement[:80]}")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        if status != "FINISHED":
            try:  # the result call reports the error of a failed operation
                self.call("GET", path + "/result/0")
            except GatewayError as e:
                raise GatewayError(str(e)) from None
            raise GatewayError(f"operation {status}: {statement[:80]}")
        self.call("DELETE", path + "/close")

    def close(self):
        try:
            self.call("DELETE", f"/v1/sessions/{self.handle}")
        except (GatewayError, OSError):
            pass


def root_cause(body):
    """The last 'Caused by' of a Gateway error, or its first line."""
    try:
        errors = json.loads(body).get("errors", [])
    except ValueError:
        return body[:300].decode(errors="replace")
    text = "\n".join(errors)
    causes = [line for line in text.splitlines() if line.startswith("Caused by: ")]
    line = causes[-1] if causes else (text.splitlines() or [""])[0]
    return line.replace("Caused by: ", "")[:400]


def filesystem(path):
    return f"'connector'='filesystem','path'='file://{path}','format'='json'"


def table_ddl(name, columns, event_time, path):
    body = ", ".join(f"`{c}` {t}" for c, t in columns)
    if event_time:
        body += f", WATERMARK FOR `{event_time}` AS `{event_time}` - INTERVAL '1' SECOND"
    return f"CREATE TABLE `{name}` ({body}) WITH ({filesystem(path)})"


def read_output(folder, columns):
    """Rows of the JSON files Flink wrote, each value as its JSON text."""
    rows = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.startswith((".", "_")):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    record = json.loads(line, parse_float=str, parse_int=str)
                    rows.append([text(record.get(c)) for c, _ in columns])
    return rows


def text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return value


def write_gold(path, columns, rows):
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow([c for c, _ in columns])
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])
    os.replace(path + ".tmp", path)


def run_task(gateway, bench, work, task_id):
    with open(os.path.join(bench, "oracle", task_id + ".json"), encoding="utf-8") as f:
        oracle = json.load(f)
    folder = os.path.join(work, task_id)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    session = Session(gateway)
    start = time.monotonic()
    try:
        for source in oracle["sources"]:
            data = os.path.join(folder, source["name"])
            os.makedirs(data)
            with open(os.path.join(data, "rows.json"), "w", encoding="utf-8") as f:
                for row in source["rows"]:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
            session.execute(table_ddl(source["name"], source["columns"],
                                      source["event_time"], data))
        out = os.path.join(folder, "out")
        session.execute(table_ddl("result", oracle["columns"], None, out))
        session.execute("INSERT INTO `result` " + oracle["sql"])
        rows = read_output(out, oracle["columns"])
        write_gold(os.path.join(bench, "gold", task_id + ".csv"), oracle["columns"], rows)
        return task_id, None, time.monotonic() - start
    except GatewayError as e:
        return task_id, str(e), time.monotonic() - start
    finally:
        session.close()
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bench = os.path.abspath(args.bench)
    work = os.path.join(bench, "oracle", "work")
    with open(os.path.join(bench, "task_ids.txt")) as f:
        ids = [line.strip() for line in f if line.strip()]
    errors, seconds = {}, []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for task_id, error, took in pool.map(
                lambda t: run_task(args.gateway, bench, work, t), ids):
            seconds.append(took)
            if error:
                errors[task_id] = error
                print(f"{task_id}: batch error: {error}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(bench, "oracle", "errors.jsonl"), "w") as f:
        for task_id, error in errors.items():
            f.write(json.dumps({"task_id": task_id, "error": error}) + "\n")
    with open(os.path.join(bench, "task_ids.txt"), "w") as f:
        f.write("".join(t + "\n" for t in ids if t not in errors))
    predictions = os.path.join(bench, "predictions.jsonl")
    with open(predictions, encoding="utf-8") as f:
        kept = [line for line in f if json.loads(line)["task_id"] not in errors]
    with open(predictions, "w", encoding="utf-8") as f:
        f.writelines(kept)
    wall = time.monotonic() - start
    print(f"batch gold: {len(ids) - len(errors)} of {len(ids)} tasks, {len(errors)} batch "
          f"errors, {wall:.0f} s wall, {sum(seconds) / max(len(ids), 1):.1f} s per task")
    return 0


if __name__ == "__main__":
    sys.exit(main())
