#!/usr/bin/env python3
"""generate.py: builds the bundled sample benchmark (examples/sample-bench).

Everything in the benchmark comes from this one script and a fixed seed: the
source CSVs of six small event streams and three static tables, every
task.json, the gold relations, the evaluation specs, the reference Flink SQL
(reference.jsonl), the sample method's predictions (predictions.jsonl) and the
verdict each prediction is meant to get (expected.jsonl).

Gold never comes from Flink. Each gold relation is computed by an independent
oracle: SQLite batch SQL over the prepared rows (after the registered
projection and time conversion), or a few lines of Python where SQLite has no
streaming notion (tumbling, hopping and session windows). reference.jsonl
holds the Flink SQL that must reproduce each gold relation when run through
streamex; a disagreement means the task, the reference or the oracle is wrong,
never that gold should be copied from Flink.

Event-time semantics the oracle relies on (documented in the README):
  * live sources are replayed sorted by event time, one partition each, so a
    row that is out of order in its CSV is in order in Kafka and is counted;
    window aggregations therefore see every row, and windows fire at end of
    input on the final watermark;
  * windows are aligned to the epoch: [k*size, (k+1)*size); a row exactly on a
    boundary belongs to the later window;
  * a session closes when the next row of the key comes more than the gap
    after the previous one; the data keeps every gap far from the threshold;
  * interval-join bounds are inclusive (BETWEEN).

Usage: generate.py [--out DIR]   (default: the benchmark folder above tools/)
Standard library only.
"""

import argparse
import calendar
import csv
import io
import json
import os
import random
import shutil
import sqlite3
import sys
import time

SEED = 20260302
DAY = (2026, 3, 2)  # every event happens on this (UTC) day
TIMEOUT_S = 120  # generous: a cold or busy Flink needs it
# sb17's own timeout: its prediction is meant to time out, and the demo should
# not wait two minutes for that. Its reference query ran 14.2 s as the first
# job of a cold pair on a busy machine and 2.9-4.2 s warm (`streamex doctor
# --bench examples/sample-bench --repeat 3`), so 30 s keeps a margin of 2x
# cold and 7x warm (docs/internals/measurements.md).
SB17_TIMEOUT_S = 30
SINK = "task_output"

# ---------------------------------------------------------------------------
# Time helpers. Times inside the oracle are epoch milliseconds (UTC).

MIN = 60000  # one minute in ms


def at(hour, minute=0, second=0, ms=0):
    """Epoch milliseconds of a time of day on DAY."""
    secs = calendar.timegm(DAY + (hour, minute, second, 0, 0, 0))
    return secs * 1000 + ms


def strftime_ms(pattern, ms):
    return time.strftime(pattern, time.gmtime(ms // 1000))


def parse_time(spec, text):
    """Epoch ms of a source CSV time field, following a column's time.from."""
    if spec == "epoch_s":
        return int(text) * 1000
    if spec == "epoch_ms":
        return int(text)
    return calendar.timegm(time.strptime(text, spec)) * 1000


def flink_timestamp(ms):
    """TIMESTAMP(3) as flink-json writes it (SQL standard): seconds always,
    then the fraction only when it is not zero, trailing zeros dropped."""
    text = strftime_ms("%Y-%m-%d %H:%M:%S", ms)
    frac = ms % 1000
    if frac:
        text += ("." + "%03d" % frac).rstrip("0")
    return text


def date_format_ms(ms):
    """DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss.SSS')."""
    return strftime_ms("%Y-%m-%d %H:%M:%S", ms) + ".%03d" % (ms % 1000)


# ---------------------------------------------------------------------------
# Sources: how each CSV is registered (docs/benchmark.md). A column is
# (name, Flink type, CSV column or None, time.from or None).

SOURCE_TIME_FORMATS = {
    "bids": "%Y-%m-%d %H:%M:%S",
    "pageviews": "%Y-%m-%dT%H:%M:%SZ",
    "sensors": "epoch_ms",
    "trades": "epoch_s",
    "orders": "%d/%m/%Y %H:%M:%S",
    "shipments": "%d/%m/%Y %H:%M:%S",
}

SOURCES = {
    "bids": {
        "kind": "live",
        "columns": [
            ("bid_id", "BIGINT", None, None),
            ("auction", "BIGINT", "auction_id", None),
            ("bidder", "BIGINT", "bidder_id", None),
            ("price", "DOUBLE", None, None),
            ("channel", "STRING", None, None),
            ("bid_time", "TIMESTAMP(3)", "ts", SOURCE_TIME_FORMATS["bids"]),
        ],
        "event_time": "bid_time",
        "delay": "INTERVAL '5' SECOND",
    },
    "auctions": {
        "kind": "static",
        "columns": [
            ("auction_id", "BIGINT", None, None),
            ("item_name", "STRING", None, None),
            ("category", "STRING", None, None),
            ("seller", "BIGINT", "seller_id", None),
            ("reserve_price", "DOUBLE", None, None),
        ],
    },
    "persons": {
        "kind": "static",
        "columns": [
            ("person_id", "BIGINT", None, None),
            ("name", "STRING", "full_name", None),
            ("city", "STRING", None, None),
            ("country", "STRING", None, None),
        ],
    },
    "pageviews": {
        "kind": "live",
        "columns": [
            ("user_id", "STRING", None, None),
            ("url", "STRING", None, None),
            ("referrer", "STRING", None, None),
            ("view_time", "TIMESTAMP(3)", "viewed_at", SOURCE_TIME_FORMATS["pageviews"]),
        ],
        "event_time": "view_time",
        "delay": "INTERVAL '10' SECOND",
    },
    "sensors": {
        "kind": "live",
        "columns": [
            ("sensor_id", "STRING", None, None),
            ("temperature", "DOUBLE", "temp_c", None),
            ("humidity", "DOUBLE", None, None),
            ("reading_time", "TIMESTAMP(3)", "ts_ms", SOURCE_TIME_FORMATS["sensors"]),
        ],
        "event_time": "reading_time",
        "delay": "INTERVAL '2' SECOND",
    },
    "sensor_sites": {
        "kind": "static",
        "columns": [
            ("sensor_id", "STRING", None, None),
            ("site", "STRING", None, None),
            ("min_ok", "DOUBLE", None, None),
            ("max_ok", "DOUBLE", None, None),
        ],
    },
    "trades": {
        "kind": "live",
        "columns": [
            ("trade_id", "BIGINT", None, None),
            ("symbol", "STRING", None, None),
            ("price", "DOUBLE", None, None),
            ("qty", "BIGINT", None, None),
            ("trade_time", "TIMESTAMP(3)", "epoch", SOURCE_TIME_FORMATS["trades"]),
        ],
        "event_time": "trade_time",
        "delay": "INTERVAL '1' SECOND",
    },
    "orders": {
        "kind": "live",
        "columns": [
            ("order_id", "BIGINT", None, None),
            ("customer", "STRING", None, None),
            ("amount", "DOUBLE", None, None),
            ("order_time", "TIMESTAMP(3)", "placed", SOURCE_TIME_FORMATS["orders"]),
        ],
        "event_time": "order_time",
        "delay": "INTERVAL '1' MINUTE",
    },
    "shipments": {
        "kind": "live",
        "columns": [
            ("ship_id", "BIGINT", None, None),
            ("order_id", "BIGINT", None, None),
            ("carrier", "STRING", None, None),
            ("ship_time", "TIMESTAMP(3)", "shipped", SOURCE_TIME_FORMATS["shipments"]),
        ],
        "event_time": "ship_time",
        "delay": "INTERVAL '1' MINUTE",
    },
}

KAFKA_SOURCE_WITH = (
    "'connector'='kafka','topic'='${topic}',"
    "'properties.bootstrap.servers'='${bootstrap}','format'='json',"
    "'scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset'"
)


def source_ddl(name):
    spec = SOURCES[name]
    parts = ["%s %s" % (col, typ) for col, typ, _, _ in spec["columns"]]
    if spec["kind"] == "live":
        et = spec["event_time"]
        parts.append("WATERMARK FOR %s AS %s - %s" % (et, et, spec["delay"]))
    return "CREATE TABLE %s (%s) WITH (%s)" % (name, ", ".join(parts), KAFKA_SOURCE_WITH)


def source_entry(name):
    spec = SOURCES[name]
    columns = []
    for col, _, csv_col, time_from in spec["columns"]:
        entry = {"name": col}
        if csv_col:
            entry["from"] = csv_col
        if time_from:
            entry["time"] = {"from": time_from, "to": "sql"}
        columns.append(entry)
    entry = {"name": name, "kind": spec["kind"], "file": "sources/%s.csv" % name,
             "columns": columns}
    if spec["kind"] == "live":
        entry["event_time"] = spec["event_time"]
    entry["ddl"] = source_ddl(name)
    return entry


def sink_ddl(columns, changelog, key):
    parts = ["%s %s" % (col, typ) for col, typ in columns]
    common = ("'topic'='${topic}','properties.bootstrap.servers'='${bootstrap}'")
    if changelog == "upsert":
        parts.append("PRIMARY KEY (%s) NOT ENFORCED" % ", ".join(key))
        options = ("'connector'='upsert-kafka',%s,'key.format'='json',"
                   "'value.format'='json'" % common)
    elif changelog == "debezium":
        options = "'connector'='kafka',%s,'format'='debezium-json'" % common
    else:
        options = "'connector'='kafka',%s,'format'='json'" % common
    return "CREATE TABLE %s (%s) WITH (%s)" % (SINK, ", ".join(parts), options)


# ---------------------------------------------------------------------------
# Data. Every generator draws from one seeded Random, then enforces the
# properties tasks rely on (ties where a tie task wants one, no ties where a
# Top-N must be deterministic) and asserts them.

FIRST_NAMES = ["Ana", "Bruno", "Carla", "Diogo", "Eva", "Filipe", "Greta", "Hugo",
               "Ines", "Jonas", "Katrin", "Luis", "Marta", "Nils", "Olga", "Pedro",
               "Quinn", "Rita", "Sven", "Tiago", "Ursula", "Vasco", "Wanda", "Xavier",
               "Yara"]
LAST_NAMES = ["Silva", "Weber", "Costa", "Martin", "Moreau", "Santos", "Fischer",
              "Dubois", "Lopes", "Becker"]
CITIES = [("Lisbon", "Portugal"), ("Porto", "Portugal"), ("Berlin", "Germany"),
          ("Hamburg", "Germany"), ("Paris", "France"), ("Lyon", "France")]
ITEMS = [("Vintage camera", "electronics"), ("Oil painting", "art"),
         ("First edition novel", "books"), ("Garden bench", "garden"),
         ("Wooden train set", "toys"), ("Vinyl record player", "electronics"),
         ("Bronze statue", "art"), ("Atlas of the world", "books"),
         ("Rose bush collection", "garden"), ("Chess set", "toys"),
         ("Mechanical watch", "electronics"), ("Watercolour set", "art"),
         ("Cookbook bundle", "books"), ("Terracotta pots", "garden"),
         ("Model sailboat", "toys"), ("Film projector", "electronics"),
         ("Etching print", "art"), ("Poetry anthology", "books"),
         ("Bird bath", "garden"), ("Puppet theatre", "toys")]
BIDDING_AUCTIONS = 18  # auctions 19 and 20 never receive a bid
BIDDING_PERSONS = 22  # persons 23-25 never bid


def make_persons(rng):
    rows = []
    for pid in range(1, 26):
        city, country = CITIES[rng.randrange(len(CITIES))]
        name = "%s %s" % (FIRST_NAMES[pid - 1], rng.choice(LAST_NAMES))
        rows.append([pid, name, city, country, "%d-%02d-01" % (2019 + pid % 6, pid % 12 + 1)])
    return ["person_id", "full_name", "city", "country", "member_since"], rows


def make_auctions(rng):
    rows = []
    for aid, (item, category) in enumerate(ITEMS, start=1):
        seller = rng.randint(1, 25)
        reserve = None if aid % 6 == 0 else rng.randint(8, 60) * 2.5
        rows.append([aid, item, category, seller, reserve, "2026-03-01"])
    return ["auction_id", "item_name", "category", "seller_id", "reserve_price",
            "listed_on"], rows


def fix_window_top2(bids):
    """Lowers prices until no 10-minute window's second-highest bid ties with
    its third (window Top-2 must be deterministic). Returns how many prices
    it changed."""
    changes = 0
    while True:
        windows = {}
        for bid in bids:
            windows.setdefault(bid["t"] // (10 * MIN), []).append(bid)
        changed = 0
        for members in windows.values():
            members.sort(key=lambda b: -b["price"])
            if len(members) > 2 and members[1]["price"] == members[2]["price"]:
                members[2]["price"] -= 0.25
                changed += 1
        if not changed:
            return changes
        changes += changed


def equalize_top_bidders(rng, bids, used_seconds):
    """Gives the second biggest spender small extra bids (<= 10.00, late in the
    hour) so that the two biggest spenders tie exactly (prices are multiples of
    0.25, so the sums are exact in binary floating point)."""
    totals = {}
    for bid in bids:
        totals[bid["bidder"]] = totals.get(bid["bidder"], 0.0) + bid["price"]
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    (_, top), (second, runner) = ranked[0], ranked[1]
    missing = top - runner
    second_start = 50 * 60
    while missing > 0:
        price = min(10.0, missing)
        second_of_hour = second_start
        while second_of_hour in used_seconds:
            second_of_hour += 1
        used_seconds.add(second_of_hour)
        second_start = second_of_hour + rng.randint(20, 60)
        bids.append({"t": at(10) + second_of_hour * 1000,
                     "auction": rng.randint(1, BIDDING_AUCTIONS),
                     "bidder": second, "price": price, "channel": "web"})
        missing -= price


def make_bids(rng):
    used_seconds = set(rng.sample(range(0, 3600), 150))
    bids = []
    for second_of_hour in sorted(used_seconds):
        bids.append({
            "t": at(10) + second_of_hour * 1000,
            "auction": rng.randint(1, BIDDING_AUCTIONS),
            "bidder": rng.randint(1, BIDDING_PERSONS),
            "price": rng.randint(20, 480) * 0.25,
            "channel": rng.choice(["web", "web", "app", "app", "partner", None]),
        })
    bids[36]["price"] = 50.0  # exactly on the "more than 50" threshold
    bids[90]["price"] = 50.0
    fix_window_top2(bids)
    equalize_top_bidders(rng, bids, used_seconds)
    if fix_window_top2(bids):  # would break the tie just made
        raise SystemExit("generate.py: an equalizing bid reached a window's top 2")
    bids.sort(key=lambda b: b["t"])
    rows = []
    for bid_id, bid in enumerate(bids, start=1):
        rows.append([bid_id, bid["auction"], bid["bidder"], "%.2f" % bid["price"],
                     bid["channel"], strftime_ms(SOURCE_TIME_FORMATS["bids"], bid["t"]),
                     rng.choice(["Mozilla/5.0", "AuctionApp/3.2", "curl/8.5"])])
    shuffle_a_few(rng, rows)
    return ["bid_id", "auction_id", "bidder_id", "price", "channel", "ts",
            "user_agent"], rows


def shuffle_a_few(rng, rows):
    """Moves a few rows later in the file: real exports are not perfectly
    ordered. The replay sorts live sources by event time, so these rows are
    in order in Kafka and count like any other."""
    for _ in range(8):
        i = rng.randrange(len(rows) - 12)
        row = rows.pop(i)
        rows.insert(i + rng.randint(3, 10), row)


URL_OTHERS = ["/product/102", "/product/103", "/cart", "/checkout", "/about"]


def make_pageviews(rng):
    views = []
    for user in range(1, 13):
        start = at(9) + rng.randint(0, 40) * MIN
        for _ in range(rng.randint(1, 3)):
            t = start + rng.randint(0, 59) * 1000
            referrer = rng.choice(["google", "newsletter", "partner-blog", None])
            for position in range(rng.randint(2, 7)):
                views.append({"user": "u%02d" % user, "t": t,
                              "referrer": referrer if position == 0 else None})
                t += rng.randint(20, 360) * 1000  # in-session gap <= 6 min
            start = t + rng.randint(20, 40) * MIN  # next session >= 20 min later
    # URL counts fixed up front: '/home' first, then a tie for second place
    # between '/product/101' and '/search', then the rest clearly below.
    n = len(views)
    home, tied = n // 5, n * 4 // 25
    rest = n - home - 2 * tied
    counts = [("/home", home), ("/product/101", tied), ("/search", tied)]
    for i, url in enumerate(URL_OTHERS):
        counts.append((url, rest // len(URL_OTHERS) + (1 if i < rest % len(URL_OTHERS) else 0)))
    assert home > tied > max(c for u, c in counts[3:]), counts
    urls = [url for url, c in counts for _ in range(c)]
    rng.shuffle(urls)
    views.sort(key=lambda v: (v["t"], v["user"]))
    rows = []
    for view, url in zip(views, urls):
        rows.append([view["user"], url, view["referrer"],
                     strftime_ms(SOURCE_TIME_FORMATS["pageviews"], view["t"]),
                     rng.choice(["desktop", "mobile"])])
    shuffle_a_few(rng, rows)
    return ["user_id", "url", "referrer", "viewed_at", "device"], rows


SENSOR_BASE = {"s1": 18.0, "s2": 23.0, "s3": 26.0, "s4": 14.0, "s5": 21.0}


def make_sensors(rng):
    rows = []
    for sensor, base in SENSOR_BASE.items():
        for minute in range(30):
            t = at(10, minute) + rng.randint(0, 999)
            temp = round(base + rng.uniform(-3.5, 3.5), 1)
            if rng.random() < 0.08:
                temp = None
            if sensor == "s5" and 10 <= minute < 15:
                temp = None  # a whole window without a temperature
            rows.append([sensor, temp, round(rng.uniform(30, 70), 1), t])
    # Exact window edges: 10:04:59.999 is in the first 5-minute window,
    # 10:05:00.000 in the second.
    rows[4][3], rows[5][3] = at(10, 4, 59, 999), at(10, 5, 0, 0)
    # The hottest reading is shared by s2 and s4.
    rows[30 + 17][1] = 35.5
    rows[90 + 8][1] = 35.5
    # s3's latest reading has no temperature.
    rows[60 + 29][1] = None
    assert max(r[1] for r in rows if r[1] is not None and r[1] != 35.5) < 35.5
    rows.sort(key=lambda r: r[3])
    out = [[r[0], "" if r[1] is None else "%.1f" % r[1], "%.1f" % r[2], r[3]] for r in rows]
    shuffle_a_few(rng, out)
    return ["sensor_id", "temp_c", "humidity", "ts_ms"], out


def make_sensor_sites(_rng):
    rows = [["s1", "north", 15.0, 21.0], ["s2", "north", 20.0, 26.0],
            ["s3", "lab", 23.5, 28.5], ["s4", "south", 12.0, 16.0],
            ["s5", "south", 18.0, 24.0], ["s6", "lab", 10.0, 30.0]]
    return ["sensor_id", "site", "min_ok", "max_ok"], rows


SYMBOLS = {"ACME": 41.0, "BOLT": 12.5, "CRUX": 88.0, "DYNA": 150.0}


def make_trades(rng):
    trades = []
    for i in range(120):
        symbol = rng.choice(sorted(SYMBOLS))
        price = SYMBOLS[symbol] + rng.randint(-20, 20) * 0.25
        trades.append({"symbol": symbol, "price": price, "qty": rng.randint(1, 40) * 10,
                       "t": at(10) + rng.randint(0, 45 * 60 - 1) * 1000})
    trades.sort(key=lambda tr: tr["t"])
    # Top-2 by quantity per symbol: BOLT's second place is a three-way tie,
    # every other symbol's top-2 is clear.
    for symbol in SYMBOLS:
        members = sorted((tr for tr in trades if tr["symbol"] == symbol),
                         key=lambda tr: -tr["qty"])
        if symbol == "BOLT":
            members[0]["qty"] = 450
            for tr in members[1:4]:
                tr["qty"] = 420
            for tr in members[4:]:
                tr["qty"] = min(tr["qty"], 400)
        else:
            members[0]["qty"], members[1]["qty"] = 490, 470
            for tr in members[2:]:
                tr["qty"] = min(tr["qty"], 460)
    rows = [[i, tr["symbol"], "%.2f" % tr["price"], tr["qty"], tr["t"] // 1000, "XNAS"]
            for i, tr in enumerate(trades, start=5001)]
    shuffle_a_few(rng, rows)
    return ["trade_id", "symbol", "price", "qty", "epoch", "venue"], rows


CUSTOMERS = ["Acme Corp", "Blue Fin", "Cedar Ltd", "Delta Foods", "Elm Studio",
             "Fjord AS", "Granite Inc"]


def make_orders_and_shipments(rng):
    orders, shipments = [], []
    for i in range(40):
        order_id = 1001 + i
        placed = at(9) + rng.randint(0, 3 * 3600 - 1) * 1000
        orders.append([order_id, rng.choice(CUSTOMERS), rng.randint(40, 2000) * 0.5, placed])
        kind = i % 8
        if kind == 7:
            continue  # never shipped
        if kind == 6:
            shipped = placed + rng.randint(2 * 3600 + 60, 5 * 3600) * 1000  # too late
        elif kind == 5 and i < 20:
            shipped = placed - rng.randint(60, 900) * 1000  # bad data: before the order
        else:
            shipped = placed + rng.randint(5 * 60, 2 * 3600 - 60) * 1000
        shipments.append([order_id, rng.choice(["DHL", "UPS", "CTT"]), shipped])
    shipments[3][2] = orders[3][3] + 2 * 3600 * 1000  # exactly on the 2-hour bound
    # A second, partial shipment for one order, also in time.
    shipments.append([orders[10][0], "CTT", orders[10][3] + 95 * 60000])
    fmt = SOURCE_TIME_FORMATS["orders"]
    order_rows = [[o[0], o[1], "%.2f" % o[2], strftime_ms(fmt, o[3])]
                  for o in sorted(orders, key=lambda o: o[3])]
    shipments.sort(key=lambda s: s[2])
    ship_rows = [[7001 + i, s[0], s[1], strftime_ms(fmt, s[2])]
                 for i, s in enumerate(shipments)]
    return (["order_id", "customer", "amount", "placed"], order_rows), \
        (["ship_id", "order_id", "carrier", "shipped"], ship_rows)


def make_all_sources():
    rng = random.Random(SEED)
    data = {"persons": make_persons(rng), "auctions": make_auctions(rng),
            "bids": make_bids(rng), "pageviews": make_pageviews(rng),
            "sensors": make_sensors(rng), "sensor_sites": make_sensor_sites(rng),
            "trades": make_trades(rng)}
    data["orders"], data["shipments"] = make_orders_and_shipments(rng)
    return data


def csv_text(header, rows):
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


# ---------------------------------------------------------------------------
# Oracle database: each source as registered (projection, NULLs, time
# conversion to epoch ms), read back from the CSV text exactly as written.


def typed(flink_type, time_from, text):
    if text == "":
        return None
    if time_from:
        return parse_time(time_from, text)
    if flink_type == "BIGINT":
        return int(text)
    if flink_type == "DOUBLE":
        return float(text)
    return text


def build_oracle_db(texts):
    db = sqlite3.connect(":memory:")
    for name, spec in SOURCES.items():
        reader = csv.DictReader(io.StringIO(texts[name]))
        cols = spec["columns"]
        db.execute("CREATE TABLE %s (%s)" % (name, ", ".join(c[0] for c in cols)))
        rows = [[typed(typ, tf, rec[csv_col or col]) for col, typ, csv_col, tf in cols]
                for rec in reader]
        db.executemany("INSERT INTO %s VALUES (%s)" % (name, ", ".join("?" * len(cols))),
                       rows)
    return db


def query(db, sql):
    return [list(r) for r in db.execute(sql)]


# ---------------------------------------------------------------------------
# Window oracles (Python: SQLite has no notion of event-time windows).


def hop_windows(t, slide, size):
    """Starts of every hopping window [s, s + size) containing t."""
    first = t - t % slide - (size - slide)
    return [s for s in range(first, t + 1, slide) if s <= t < s + size]


def sessions(times, gap, near_threshold_ok=False):
    """(start, end) of each session of sorted times, end = last + gap. Flink
    merges a row into the session when it is at most gap after the previous
    row; the data keeps every gap at least a minute away from the threshold of
    the task, so the inclusive/exclusive question never matters."""
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert near_threshold_ok or all(abs(g - gap) > MIN for g in gaps), \
        "a gap too close to the session threshold"
    out = []
    for t in times:
        if out and t - out[-1][1] <= gap:
            out[-1][1] = t
        else:
            out.append([t, t])
    return [(s, last + gap) for s, last in out]


# ---------------------------------------------------------------------------
# Tasks. Each has a question, its sources, a sink (columns, changelog, key),
# the reference Flink SQL, the oracle producing gold, the evaluation, and the
# sample method's prediction with the verdict it is meant to get.


def tumble_count_sum(db, sql, size):
    """[(window start, rows, sum of value)] of tumbling windows of the given
    size over the rows (value, event time) of sql."""
    groups = {}
    for value, t in db.execute(sql):
        start = t - t % size
        count, total = groups.get(start, (0, 0.0))
        groups[start] = (count + 1, total + value)
    return [(start, count, total) for start, (count, total) in sorted(groups.items())]


def t_window_bids(db):
    return [[s, s + 10 * MIN, c, v]
            for s, c, v in tumble_count_sum(db, "SELECT price, bid_time FROM bids", 10 * MIN)]


def t_window_sensor_avg(db):
    groups = {}
    for sensor, temp, t in db.execute("SELECT sensor_id, temperature, reading_time FROM sensors"):
        groups.setdefault((sensor, t - t % (5 * MIN)), []).append(temp)
    out = []
    for (sensor, start), temps in sorted(groups.items()):
        known = [x for x in temps if x is not None]
        out.append([sensor, start, sum(known) / len(known) if known else None])
    return out


def t_hop_trades(db, slide=5 * MIN, size=15 * MIN):
    groups = {}
    for symbol, qty, t in db.execute("SELECT symbol, qty, trade_time FROM trades"):
        for start in hop_windows(t, slide, size):
            key = (symbol, start + size)
            count, total = groups.get(key, (0, 0))
            groups[key] = (count + 1, total + qty)
    return [[sym, end, total, count] for (sym, end), (count, total) in sorted(groups.items())]


def t_sessions(db, gap=10 * MIN, near_threshold_ok=False):
    out = []
    users = [r[0] for r in db.execute("SELECT DISTINCT user_id FROM pageviews ORDER BY 1")]
    for user in users:
        times = [r[0] for r in db.execute(
            "SELECT view_time FROM pageviews WHERE user_id = ? ORDER BY view_time", (user,))]
        for start, end in sessions(times, gap, near_threshold_ok):
            n = sum(1 for t in times if start <= t < end)
            out.append([user, start, end, n])
    return out


def t_window_top2(db):
    groups = {}
    for bid_id, price, t in db.execute("SELECT bid_id, price, bid_time FROM bids"):
        groups.setdefault(t - t % (10 * MIN), []).append((price, bid_id))
    out = []
    for start, members in sorted(groups.items()):
        members.sort(key=lambda m: -m[0])
        assert len(members) < 3 or members[1][0] != members[2][0]
        for rank, (price, bid_id) in enumerate(members[:2], start=1):
            out.append([start, bid_id, price, rank])
    return out


def t_orders_per_hour(db):
    return [list(w) for w in
            tumble_count_sum(db, "SELECT amount, order_time FROM orders", 60 * MIN)]


def tie_top_k_per_group(db, sql, k):
    """Rows of sql (group, ..., value) ranked by value within group. Returns
    (mandatory, tie_set, need): the rows in every legal top-k, the rows tied
    at the boundary of the one group that has a tie there, and how many of
    those a top-k holds. The tie adapter does not know groups, so the data
    keeps the boundary tie in a single group."""
    groups = {}
    for row in query(db, sql):
        groups.setdefault(row[0], []).append(row)
    mandatory, tie_set, need = [], [], 0
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda r: -r[-1])
        boundary = members[min(k, len(members)) - 1][-1]
        above = [r for r in members if r[-1] > boundary]
        at_boundary = [r for r in members if r[-1] == boundary]
        if len(above) + len(at_boundary) <= k:
            mandatory += above + at_boundary
        else:
            assert not tie_set, "ties in more than one group"
            mandatory += above
            tie_set, need = at_boundary, k - len(above)
    assert tie_set, "the tie task has no tie"
    return mandatory, tie_set, need


def without_group(result):
    mandatory, tie_set, need = result
    return [r[1:] for r in mandatory], [r[1:] for r in tie_set], need


def argmax_rows(db, sql):
    rows = query(db, sql)
    best = max(r[-1] for r in rows)
    winners = [r for r in rows if r[-1] == best]
    assert len(winners) >= 2, "the argmax task has no tie"
    return winners


TASKS = []


def task(tid, question, sources, sink, reference, oracle, prediction,
         changelog="append", key=None, policy="ordinary", condition_cols=None,
         timeout_s=TIMEOUT_S):
    """prediction = (sql or None, verdict it should get, why)."""
    TASKS.append({"id": tid, "question": question, "sources": sources, "sink": sink,
                  "changelog": changelog, "key": key, "reference": reference,
                  "oracle": oracle, "prediction": prediction,
                  "policy": policy,
                  "condition_cols": condition_cols, "timeout_s": timeout_s})


# Verdicts the sample predictions are written to get.
MATCH, MISMATCH, FLINK_ERROR, TIMEOUT, REJECTED, MISSING = (
    "match", "mismatch", "flink_error", "timeout", "rejected_sql", "missing_prediction")

task("sb01_high_bids",
     "List every bid of more than 50.00: bid id, auction and price.",
     ["bids"], [("bid_id", "BIGINT"), ("auction", "BIGINT"), ("price", "DOUBLE")],
     "SELECT bid_id, auction, price FROM bids WHERE price > 50",
     "SELECT bid_id, auction, price FROM bids WHERE price > 50",
     ("SELECT bid_id, auction, price FROM bids WHERE price >= 50",
      MISMATCH, "filter off by one: >= keeps the bids of exactly 50.00"))

task("sb02_app_or_unknown_channel",
     "Bids placed from the app or with no recorded channel; show the channel as "
     "'unknown' when it is missing.",
     ["bids"], [("bid_id", "BIGINT"), ("bidder", "BIGINT"), ("channel", "STRING")],
     "SELECT bid_id, bidder, COALESCE(channel, 'unknown') FROM bids "
     "WHERE channel = 'app' OR channel IS NULL",
     "SELECT bid_id, bidder, COALESCE(channel, 'unknown') FROM bids "
     "WHERE channel = 'app' OR channel IS NULL",
     ("SELECT bid_id, bidder, COALESCE(channel, 'unknown') AS channel FROM bids "
      "WHERE channel = 'app' OR channel = NULL",
      MISMATCH, "channel = NULL is never true, so the unknown-channel bids are lost"))

task("sb03_auctions_without_reserve",
     "Which auctions have no reserve price? Give auction id and item name.",
     ["auctions"], [("auction_id", "BIGINT"), ("item_name", "STRING")],
     "SELECT auction_id, item_name FROM auctions WHERE reserve_price IS NULL",
     "SELECT auction_id, item_name FROM auctions WHERE reserve_price IS NULL",
     ("SELECT auction_id, item_name FROM auctions WHERE reserve_price IS NULL",
      MATCH, "static table only"))

task("sb04_sensor_status",
     "Classify every sensor reading: 'missing' without a temperature, 'hot' above "
     "30, 'cold' below 12, else 'normal'. Give sensor, reading time as "
     "yyyy-MM-dd HH:mm:ss.SSS and status.",
     ["sensors"], [("sensor_id", "STRING"), ("reading_time", "STRING"), ("status", "STRING")],
     "SELECT sensor_id, DATE_FORMAT(reading_time, 'yyyy-MM-dd HH:mm:ss.SSS'), "
     "CASE WHEN temperature IS NULL THEN 'missing' WHEN temperature > 30 THEN 'hot' "
     "WHEN temperature < 12 THEN 'cold' ELSE 'normal' END FROM sensors",
     lambda db: [[s, date_format_ms(t), "missing" if x is None else "hot" if x > 30
                  else "cold" if x < 12 else "normal"]
                 for s, x, t in db.execute(
                     "SELECT sensor_id, temperature, reading_time FROM sensors")],
     ("SELECT sensor_id, DATE_FORMAT(reading_time, 'yyyy-MM-dd HH:mm:ss.SSS') AS reading_time, "
      "CASE WHEN temperature IS NULL THEN 'missing' WHEN temperature > 30 THEN 'hot' "
      "WHEN temperature < 12 THEN 'cold' ELSE 'normal' END AS status FROM sensors",
      MATCH, "epoch_ms time conversion with milliseconds, CASE, NULL"))

task("sb05_product_views",
     "For page views of product pages (/product/N), give the user id in upper case, "
     "'item-N' and the view time.",
     ["pageviews"], [("user_code", "STRING"), ("item", "STRING"), ("view_time", "TIMESTAMP(3)")],
     "SELECT UPPER(user_id), CONCAT('item-', SUBSTRING(url FROM 10)), view_time "
     "FROM pageviews WHERE url LIKE '/product/%'",
     "SELECT UPPER(user_id), 'item-' || SUBSTR(url, 10), view_time FROM pageviews "
     "WHERE url LIKE '/product/%'",
     ("SELECT UPPER(user_id) AS user_code, CONCAT('item-', REGEXP_EXTRACT(url, '/product/(\\d+)', 1)) "
      "AS item, view_time FROM pageviews WHERE url LIKE '/product/%'",
      MATCH, "ISO-8601 time conversion, string functions"))

task("sb06_large_trades",
     "Trades of at least 300 shares: trade id, symbol, trade time and notional "
     "(price times quantity).",
     ["trades"], [("trade_id", "BIGINT"), ("symbol", "STRING"), ("trade_time", "TIMESTAMP(3)"),
                  ("notional", "DOUBLE")],
     "SELECT trade_id, symbol, trade_time, price * qty FROM trades WHERE qty >= 300",
     "SELECT trade_id, symbol, trade_time, price * qty FROM trades WHERE qty >= 300",
     ("SELECT trade_id, symbol, trade_time, price * qty AS notional FROM trades "
      "WHERE qty >= 300",
      MATCH, "epoch_s time conversion"))

task("sb07_bidder_categories",
     "Which (bidder, category) pairs occur, i.e. which categories has each bidder "
     "bid in?",
     ["bids", "auctions"], [("bidder", "BIGINT"), ("category", "STRING")],
     "SELECT DISTINCT b.bidder, a.category FROM bids b JOIN auctions a "
     "ON b.auction = a.auction_id",
     "SELECT DISTINCT b.bidder, a.category FROM bids b JOIN auctions a "
     "ON b.auction = a.auction_id",
     ("SELECT b.bidder, a.category FROM bids AS b, auctions AS a "
      "WHERE b.auction = a.auction_id GROUP BY b.bidder, a.category",
      MATCH, "DISTINCT written as GROUP BY"),
     changelog="upsert", key=["bidder", "category"])

task("sb08_bids_per_auction",
     "For each auction that received bids: number of bids and highest bid.",
     ["bids"], [("auction", "BIGINT"), ("bid_count", "BIGINT"), ("max_price", "DOUBLE")],
     "SELECT auction, COUNT(*), MAX(price) FROM bids GROUP BY auction",
     "SELECT auction, COUNT(*), MAX(price) FROM bids GROUP BY auction",
     ("SELECT auction, COUNT(*) AS bid_count, MAX(bid_price) AS max_price FROM bids "
      "GROUP BY auction",
      FLINK_ERROR, "unknown column bid_price"),
     changelog="upsert", key=["auction"])

task("sb09_sensor_averages",
     "Per sensor: average temperature over the readings that have one, how many "
     "readings have a temperature and how many do not.",
     ["sensors"], [("sensor_id", "STRING"), ("avg_temp", "DOUBLE"), ("readings", "BIGINT"),
                   ("missing", "BIGINT")],
     "SELECT sensor_id, AVG(temperature), COUNT(temperature), "
     "COUNT(*) - COUNT(temperature) FROM sensors GROUP BY sensor_id",
     "SELECT sensor_id, AVG(temperature), COUNT(temperature), "
     "COUNT(*) - COUNT(temperature) FROM sensors GROUP BY sensor_id",
     ("SELECT sensor_id, AVG(temperature) AS avg_temp, COUNT(temperature) AS readings, "
      "SUM(CASE WHEN temperature IS NULL THEN 1 ELSE 0 END) AS missing FROM sensors "
      "GROUP BY sensor_id",
      MATCH, "NULL-aware aggregates"),
     changelog="upsert", key=["sensor_id"])

task("sb10_vwap",
     "Per symbol: total traded quantity and volume-weighted average price.",
     ["trades"], [("symbol", "STRING"), ("total_qty", "BIGINT"), ("vwap", "DOUBLE")],
     "SELECT symbol, SUM(qty), SUM(price * qty) / SUM(qty) FROM trades GROUP BY symbol",
     "SELECT symbol, SUM(qty), SUM(price * qty) / SUM(qty) FROM trades GROUP BY symbol",
     ("SELECT symbol, SUM(qty) AS total_qty, SUM(price * qty) / SUM(qty) AS vwap "
      "FROM trades GROUP BY symbol",
      MATCH, "aggregation with updates"),
     changelog="upsert", key=["symbol"])

task("sb11_referrer_reach",
     "How many distinct users arrived through each referrer? Count views without a "
     "referrer under '(direct)'.",
     ["pageviews"], [("referrer", "STRING"), ("users", "BIGINT")],
     "SELECT COALESCE(referrer, '(direct)'), COUNT(DISTINCT user_id) FROM pageviews "
     "GROUP BY COALESCE(referrer, '(direct)')",
     "SELECT COALESCE(referrer, '(direct)'), COUNT(DISTINCT user_id) FROM pageviews "
     "GROUP BY COALESCE(referrer, '(direct)')",
     ("CREATE TEMPORARY VIEW reach AS SELECT COALESCE(referrer, '(direct)') AS referrer, "
      "user_id FROM pageviews; INSERT INTO task_output SELECT referrer, "
      "COUNT(DISTINCT user_id) FROM reach GROUP BY referrer",
      REJECTED, "two statements, one of them DDL"),
     changelog="upsert", key=["referrer"])

task("sb12_category_revenue",
     "Per auction category: number of bids and their total value.",
     ["bids", "auctions"], [("category", "STRING"), ("bid_count", "BIGINT"), ("total", "DOUBLE")],
     "SELECT a.category, COUNT(*), SUM(b.price) FROM bids b JOIN auctions a "
     "ON b.auction = a.auction_id GROUP BY a.category",
     "SELECT a.category, COUNT(*), SUM(b.price) FROM bids b JOIN auctions a "
     "ON b.auction = a.auction_id GROUP BY a.category",
     ("SELECT a.category, COUNT(*) AS bid_count, SUM(b.price) AS total FROM bids b "
      "JOIN auctions a ON b.auction = a.auction_id GROUP BY a.item_name",
      FLINK_ERROR, "category is not grouped"),
     changelog="upsert", key=["category"])

task("sb13_lisbon_bids",
     "Bids placed by people living in Lisbon: bid id, bidder name and price.",
     ["bids", "persons"], [("bid_id", "BIGINT"), ("name", "STRING"), ("price", "DOUBLE")],
     "SELECT b.bid_id, p.name, b.price FROM bids b JOIN persons p "
     "ON b.bidder = p.person_id WHERE p.city = 'Lisbon'",
     "SELECT b.bid_id, p.name, b.price FROM bids b JOIN persons p "
     "ON b.bidder = p.person_id WHERE p.city = 'Lisbon'",
     ("SELECT b.bid_id, p.name, b.price FROM bids b JOIN persons p "
      "ON b.bidder = p.person_id",
      MISMATCH, "missing filter: every city"))

task("sb14_out_of_range_alerts",
     "Per site: how many readings were outside the sensor's allowed range "
     "(below min_ok or above max_ok)?",
     ["sensors", "sensor_sites"], [("site", "STRING"), ("alerts", "BIGINT")],
     "SELECT s.site, COUNT(*) FROM sensors r JOIN sensor_sites s "
     "ON r.sensor_id = s.sensor_id WHERE r.temperature < s.min_ok "
     "OR r.temperature > s.max_ok GROUP BY s.site",
     "SELECT s.site, COUNT(*) FROM sensors r JOIN sensor_sites s "
     "ON r.sensor_id = s.sensor_id WHERE r.temperature < s.min_ok "
     "OR r.temperature > s.max_ok GROUP BY s.site",
     (None, MISSING, "the method produced nothing"),
     changelog="upsert", key=["site"])

task("sb15_bids_per_10min",
     "Number of bids and total bid value in each 10-minute tumbling window of bid "
     "time (window start and end).",
     ["bids"], [("window_start", "TIMESTAMP(3)"), ("window_end", "TIMESTAMP(3)"),
                ("bid_count", "BIGINT"), ("volume", "DOUBLE")],
     "SELECT window_start, window_end, COUNT(*), SUM(price) FROM TABLE(TUMBLE("
     "TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' MINUTES)) "
     "GROUP BY window_start, window_end",
     t_window_bids,
     ("SELECT TUMBLE_START(bid_time, INTERVAL '10' MINUTE), "
      "TUMBLE_END(bid_time, INTERVAL '10' MINUTE), COUNT(*), SUM(price) FROM bids "
      "GROUP BY TUMBLE(bid_time, INTERVAL '10' MINUTE)",
      MATCH, "legacy group-window syntax"),
     condition_cols=[0, 2, 3])

task("sb16_sensor_5min_avg",
     "Average temperature per sensor in 5-minute tumbling windows of reading time "
     "(sensor, window start, average; empty when no reading in the window has a "
     "temperature).",
     ["sensors"], [("sensor_id", "STRING"), ("window_start", "TIMESTAMP(3)"),
                   ("avg_temp", "DOUBLE")],
     "SELECT sensor_id, window_start, AVG(temperature) FROM TABLE(TUMBLE(TABLE sensors, "
     "DESCRIPTOR(reading_time), INTERVAL '5' MINUTES)) "
     "GROUP BY sensor_id, window_start, window_end",
     t_window_sensor_avg,
     ("SELECT sensor_id, window_start, AVG(temperature) AS avg_temp FROM TABLE("
      "TUMBLE(TABLE sensors, DESCRIPTOR(reading_time), INTERVAL '5' MINUTES)) "
      "GROUP BY sensor_id, window_start, window_end",
      MATCH, "millisecond window edges, all-NULL window"))

task("sb17_trades_hopping",
     "Per symbol, total quantity and number of trades in 15-minute windows sliding "
     "every 5 minutes (symbol, window end, quantity, trades).",
     ["trades"], [("symbol", "STRING"), ("window_end", "TIMESTAMP(3)"), ("total_qty", "BIGINT"),
                  ("trades", "BIGINT")],
     "SELECT symbol, window_end, SUM(qty), COUNT(*) FROM TABLE(HOP(TABLE trades, "
     "DESCRIPTOR(trade_time), INTERVAL '5' MINUTES, INTERVAL '15' MINUTES)) "
     "GROUP BY symbol, window_start, window_end",
     t_hop_trades,
     ("SELECT symbol, window_end, SUM(qty) AS total_qty, COUNT(*) AS trades FROM TABLE("
      "HOP(TABLE trades, DESCRIPTOR(trade_time), INTERVAL '1' SECOND, INTERVAL '1' DAY)) "
      "GROUP BY symbol, window_start, window_end",
      TIMEOUT, "1-second slide over 1-day windows: every window merges 86,400 "
      "slices and ~90,000 windows fire per symbol, far beyond timeout_s"),
     timeout_s=SB17_TIMEOUT_S)

task("sb18_user_sessions",
     "Sessions of page views per user with a 10-minute inactivity gap: user, session "
     "start, session end and number of views.",
     ["pageviews"], [("user_id", "STRING"), ("window_start", "TIMESTAMP(3)"),
                     ("window_end", "TIMESTAMP(3)"), ("view_count", "BIGINT")],
     "SELECT user_id, window_start, window_end, COUNT(*) FROM TABLE(SESSION("
     "TABLE pageviews PARTITION BY user_id, DESCRIPTOR(view_time), INTERVAL '10' MINUTES)) "
     "GROUP BY user_id, window_start, window_end",
     t_sessions,
     ("SELECT user_id, SESSION_START(view_time, INTERVAL '5' MINUTE), "
      "SESSION_END(view_time, INTERVAL '5' MINUTE), COUNT(*) FROM pageviews "
      "GROUP BY user_id, SESSION(view_time, INTERVAL '5' MINUTE)",
      MISMATCH, "session gap of 5 minutes instead of 10 splits sessions"))

task("sb19_window_top2_bids",
     "The two highest bids of each 10-minute tumbling window: window start, bid id, "
     "price and rank.",
     ["bids"], [("window_start", "TIMESTAMP(3)"), ("bid_id", "BIGINT"), ("price", "DOUBLE"),
                ("rn", "BIGINT")],
     "SELECT window_start, bid_id, price, rn FROM (SELECT window_start, window_end, "
     "bid_id, price, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     "ORDER BY price DESC) AS rn FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), "
     "INTERVAL '10' MINUTES))) WHERE rn <= 2",
     t_window_top2,
     ("SELECT window_start, bid_id, price, rn FROM (SELECT window_start, bid_id, price, "
      "ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY price DESC) AS rn "
      "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' MINUTES))) "
      "WHERE rn <= 2",
      FLINK_ERROR, "without window_end in PARTITION BY this is a regular Top-N, whose "
      "updates an append-only sink refuses"))

task("sb20_shipped_within_2h",
     "Orders shipped within two hours of being placed (inclusive): order id, customer "
     "and whole minutes from order to shipment, one row per qualifying shipment.",
     ["orders", "shipments"], [("order_id", "BIGINT"), ("customer", "STRING"),
                               ("minutes_to_ship", "INT")],
     "SELECT o.order_id, o.customer, TIMESTAMPDIFF(MINUTE, o.order_time, s.ship_time) "
     "FROM orders o JOIN shipments s ON o.order_id = s.order_id "
     "AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '2' HOUR",
     "SELECT o.order_id, o.customer, (s.ship_time - o.order_time) / 60000 "
     "FROM orders o JOIN shipments s ON o.order_id = s.order_id "
     "AND s.ship_time BETWEEN o.order_time AND o.order_time + 7200000",
     ("SELECT o.order_id, o.customer, TIMESTAMPDIFF(MINUTE, o.order_time, s.ship_time) "
      "FROM orders o JOIN shipments s ON o.order_id = s.order_id "
      "AND s.ship_time <= o.order_time + INTERVAL '2' HOUR",
      MISMATCH, "wrong join: no lower bound, so shipments dated before the order "
      "count (and it becomes a regular join)"))

task("sb21_not_shipped_in_time",
     "Orders with no shipment within two hours of being placed: order id and customer.",
     ["orders", "shipments"], [("order_id", "BIGINT"), ("customer", "STRING")],
     "SELECT o.order_id, o.customer FROM orders o LEFT JOIN shipments s "
     "ON o.order_id = s.order_id AND s.ship_time BETWEEN o.order_time "
     "AND o.order_time + INTERVAL '2' HOUR WHERE s.ship_id IS NULL",
     "SELECT o.order_id, o.customer FROM orders o WHERE NOT EXISTS (SELECT 1 FROM "
     "shipments s WHERE s.order_id = o.order_id AND s.ship_time BETWEEN o.order_time "
     "AND o.order_time + 7200000)",
     ("SELECT o.order_id, o.customer FROM orders o LEFT JOIN shipments s "
      "ON o.order_id = s.order_id AND s.ship_time BETWEEN o.order_time "
      "AND o.order_time + INTERVAL '2' HOUR WHERE s.ship_id IS NULL",
      MATCH, "outer interval join"))

task("sb22_first_bid_per_bidder",
     "The first bid (by bid time) of every bidder: bidder, bid id and price.",
     ["bids"], [("bidder", "BIGINT"), ("bid_id", "BIGINT"), ("price", "DOUBLE")],
     "SELECT bidder, bid_id, price FROM (SELECT bidder, bid_id, price, ROW_NUMBER() "
     "OVER (PARTITION BY bidder ORDER BY bid_time ASC) AS rn FROM bids) WHERE rn = 1",
     "SELECT b.bidder, b.bid_id, b.price FROM bids b WHERE b.bid_time = "
     "(SELECT MIN(bid_time) FROM bids c WHERE c.bidder = b.bidder)",
     ("SELECT bidder, bid_id, price FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
      "bidder ORDER BY bid_time) AS rn FROM bids) WHERE rn = 1",
      MATCH, "deduplication, keep first"),
     changelog="upsert", key=["bidder"])

task("sb23_latest_reading",
     "The latest reading of every sensor: sensor, temperature (empty when missing) "
     "and reading time as yyyy-MM-dd HH:mm:ss.SSS.",
     ["sensors"], [("sensor_id", "STRING"), ("temperature", "DOUBLE"),
                   ("reading_time", "STRING")],
     "SELECT sensor_id, temperature, DATE_FORMAT(reading_time, 'yyyy-MM-dd HH:mm:ss.SSS') "
     "FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY sensor_id ORDER BY reading_time "
     "DESC) AS rn FROM sensors) WHERE rn = 1",
     lambda db: [[s, x, date_format_ms(t)] for s, x, t in db.execute(
         "SELECT sensor_id, temperature, reading_time FROM sensors r WHERE reading_time = "
         "(SELECT MAX(reading_time) FROM sensors q WHERE q.sensor_id = r.sensor_id)")],
     ("SELECT sensor_id, temperature, DATE_FORMAT(reading_time, 'yyyy-MM-dd HH:mm:ss.SSS') "
      "FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY sensor_id ORDER BY reading_time "
      "DESC) AS rn FROM sensors) WHERE rn = 1",
      MATCH, "deduplication, keep last (retractions), NULL value"),
     changelog="upsert", key=["sensor_id"])

task("sb24_auctions_without_bids",
     "Auctions that received no bid at all: auction id and item name.",
     ["auctions", "bids"], [("auction_id", "BIGINT"), ("item_name", "STRING")],
     "SELECT a.auction_id, a.item_name FROM auctions a LEFT JOIN bids b "
     "ON a.auction_id = b.auction WHERE b.bid_id IS NULL",
     "SELECT auction_id, item_name FROM auctions WHERE auction_id NOT IN "
     "(SELECT auction FROM bids)",
     ("SELECT a.auction_id, a.item_name FROM auctions a WHERE NOT EXISTS "
      "(SELECT 1 FROM bids b WHERE b.auction = a.auction_id)",
      MATCH, "anti join with retractions into a debezium sink"),
     changelog="debezium")

task("sb25_orders_per_hour",
     "Number of orders and order revenue in each hour of order time (hour start).",
     ["orders"], [("window_start", "TIMESTAMP(3)"), ("order_count", "BIGINT"),
                  ("revenue", "DOUBLE")],
     "SELECT window_start, COUNT(*), SUM(amount) FROM TABLE(TUMBLE(TABLE orders, "
     "DESCRIPTOR(order_time), INTERVAL '1' HOUR)) GROUP BY window_start, window_end",
     t_orders_per_hour,
     (None, MISSING, "the method produced nothing"))

task("sb26_top2_trades_per_symbol",
     "The two largest trades by quantity for each symbol: symbol, trade id and "
     "quantity. Where trades tie for second place, any of them is a right answer.",
     ["trades"], [("symbol", "STRING"), ("trade_id", "BIGINT"), ("qty", "BIGINT")],
     "SELECT symbol, trade_id, qty FROM (SELECT symbol, trade_id, qty, ROW_NUMBER() "
     "OVER (PARTITION BY symbol ORDER BY qty DESC) AS rn FROM trades) WHERE rn <= 2",
     lambda db: tie_top_k_per_group(db, "SELECT symbol, trade_id, qty FROM trades", 2),
     ("SELECT symbol, trade_id, qty FROM (SELECT symbol, trade_id, qty, ROW_NUMBER() "
      "OVER (PARTITION BY symbol ORDER BY qty DESC) AS rn FROM trades) WHERE rn <= 2",
      MATCH, "Top-N per group with a three-way tie for BOLT's second place"),
     changelog="debezium", policy="k_from_tie")

task("sb27_top2_pages",
     "The two most viewed URLs with their view counts. If URLs tie for second place, "
     "any one of them is a right answer.",
     ["pageviews"], [("url", "STRING"), ("view_count", "BIGINT")],
     "SELECT url, view_count FROM (SELECT url, COUNT(*) AS view_count FROM pageviews "
     "GROUP BY url) ORDER BY view_count DESC LIMIT 2",
     lambda db: without_group(tie_top_k_per_group(
         db, "SELECT 'all', url, COUNT(*) FROM pageviews GROUP BY url", 2)),
     ("SELECT url, n FROM (SELECT url, n, ROW_NUMBER() OVER (ORDER BY n DESC) "
      "AS rn FROM (SELECT url, COUNT(*) AS n FROM pageviews GROUP BY url)) WHERE rn <= 3",
      MISMATCH, "returns three URLs (both tied ones) where two were asked for"),
     changelog="debezium", policy="k_from_tie")

task("sb28_top_spender",
     "Which bidder has the highest total of bid prices, and what is the total? If "
     "several tie, any one of them is a right answer.",
     ["bids"], [("bidder", "BIGINT"), ("total", "DOUBLE")],
     "SELECT bidder, total FROM (SELECT bidder, SUM(price) AS total FROM bids "
     "GROUP BY bidder) ORDER BY total DESC LIMIT 1",
     lambda db: argmax_rows(db, "SELECT bidder, SUM(price) FROM bids GROUP BY bidder"),
     ("SELECT bidder, total FROM (SELECT bidder, total, ROW_NUMBER() OVER (ORDER BY total "
      "DESC) AS rn FROM (SELECT bidder, SUM(price) AS total FROM bids GROUP BY bidder)) "
      "WHERE rn = 1",
      MATCH, "Top-1 over an updating aggregate, two bidders tie"),
     changelog="debezium", policy="argmax")

task("sb29_hottest_reading",
     "Which sensor recorded the highest temperature, and what was it? If several "
     "sensors share the maximum, any one of them is a right answer.",
     ["sensors"], [("sensor_id", "STRING"), ("temperature", "DOUBLE")],
     "SELECT sensor_id, temperature FROM sensors WHERE temperature IS NOT NULL "
     "ORDER BY temperature DESC LIMIT 1",
     lambda db: argmax_rows(db, "SELECT DISTINCT sensor_id, temperature FROM sensors "
                                "WHERE temperature IS NOT NULL"),
     ("SELECT sensor_id, temperature FROM sensors WHERE temperature IS NOT NULL "
      "ORDER BY temperature DESC LIMIT 1",
      MATCH, "Top-1 over an append stream, two sensors tie"),
     changelog="debezium", policy="argmax")

task("sb30_bid_count_by_country",
     "Number of bids and distinct bidders per bidder country.",
     ["bids", "persons"], [("country", "STRING"), ("bid_count", "BIGINT"),
                           ("bidders", "BIGINT")],
     "SELECT p.country, COUNT(*), COUNT(DISTINCT b.bidder) FROM bids b JOIN persons p "
     "ON b.bidder = p.person_id GROUP BY p.country",
     "SELECT p.country, COUNT(*), COUNT(DISTINCT b.bidder) FROM bids b JOIN persons p "
     "ON b.bidder = p.person_id GROUP BY p.country",
     ("SELECT p.country, COUNT(b.bid_id), COUNT(DISTINCT p.person_id) FROM persons p "
      "JOIN bids b ON p.person_id = b.bidder GROUP BY p.country",
      MATCH, "stream-static join then aggregation"),
     changelog="upsert", key=["country"])


# What the subtly wrong predictions return, by the same oracle: each must
# differ from gold, or the sample's expected EX would be a lie.
WRONG_ORACLES = {
    "sb01_high_bids": "SELECT bid_id, auction, price FROM bids WHERE price >= 50",
    "sb02_app_or_unknown_channel":
        "SELECT bid_id, bidder, channel FROM bids WHERE channel = 'app'",
    "sb13_lisbon_bids":
        "SELECT b.bid_id, p.name, b.price FROM bids b JOIN persons p ON b.bidder = p.person_id",
    "sb18_user_sessions": lambda db: t_sessions(db, 5 * MIN, near_threshold_ok=True),
    "sb20_shipped_within_2h":
        "SELECT o.order_id, o.customer, (s.ship_time - o.order_time) / 60000 FROM orders o "
        "JOIN shipments s ON o.order_id = s.order_id AND s.ship_time <= o.order_time + 7200000",
    "sb27_top2_pages": lambda db: query(
        db, "SELECT url, COUNT(*) AS n FROM pageviews GROUP BY url ORDER BY n DESC LIMIT 3"),
}


def check_wrong_predictions(db, t, gold):
    """A prediction meant to mismatch must return something else than gold
    (for a tie task: more rows than the k a right answer has)."""
    wrong = WRONG_ORACLES[t["id"]]
    rows = query(db, wrong) if isinstance(wrong, str) else wrong(db)
    if t["policy"] == "k_from_tie":
        assert len(rows) != gold[1]["k"], t["id"]
        return
    canon = sorted(str(r) for r in rows)
    assert canon != sorted(str(r) for r in gold[0]), "%s: wrong query is right" % t["id"]


# ---------------------------------------------------------------------------
# Writing the benchmark.


def gold_value(flink_type, value):
    if value is None:
        return ""
    if flink_type == "TIMESTAMP(3)":
        return flink_timestamp(value)
    if flink_type == "DOUBLE":
        return repr(round(float(value), 6))
    if flink_type in ("BIGINT", "INT"):
        return str(int(value))
    return str(value)


def gold_rows(db, t):
    """(rows, evaluation policy) of a task from its oracle."""
    oracle = t["oracle"]
    result = query(db, oracle) if isinstance(oracle, str) else oracle(db)
    if t["policy"] == "k_from_tie":
        mandatory, tie_set, need = result
        return mandatory + tie_set, {"kind": "any_k_from_tie_set",
                                     "k": len(mandatory) + need,
                                     "mandatory_rows": len(mandatory)}
    if t["policy"] == "argmax":
        return result, {"kind": "any_one_argmax"}
    return sorted(result, key=lambda r: [(v is None, str(v)) for v in r]), {"kind": "ordinary"}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def jsonl(records):
    return "".join(json.dumps(r) + "\n" for r in records)


def build(out):
    data = make_all_sources()
    texts = {name: csv_text(*data[name]) for name in SOURCES}
    db = build_oracle_db(texts)
    for sub in ("tasks", "gold", "evaluation"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    ids = [t["id"] for t in TASKS]
    assert len(set(ids)) == len(ids)
    write(os.path.join(out, "task_ids.txt"), "".join(i + "\n" for i in ids))
    references, predictions, expected = [], [], []
    for t in TASKS:
        tdir = os.path.join(out, "tasks", t["id"])
        for name in t["sources"]:
            write(os.path.join(tdir, "sources", name + ".csv"), texts[name])
        task_json = {
            "task_id": t["id"], "question": t["question"],
            "sources": [source_entry(name) for name in t["sources"]],
            "sink": {"name": SINK, "changelog": t["changelog"],
                     "ddl": sink_ddl(t["sink"], t["changelog"], t["key"])},
            "output_schema": [{"name": n, "type": typ} for n, typ in t["sink"]],
            "timeout_s": t["timeout_s"],
        }
        write(os.path.join(tdir, "task.json"), json.dumps(task_json, indent=2) + "\n")
        rows, policy = gold_rows(db, t)
        assert rows, "%s: empty gold" % t["id"]
        if t["prediction"][1] == MISMATCH:
            check_wrong_predictions(db, t, (rows, policy))
        types = [typ for _, typ in t["sink"]]
        write(os.path.join(out, "gold", t["id"] + ".csv"), csv_text(
            [n for n, _ in t["sink"]],
            [[gold_value(typ, v) for typ, v in zip(types, row)] for row in rows]))
        evaluation = {"condition_cols": t["condition_cols"] or [], "ignore_order": True,
                      "answer_policy": policy}
        write(os.path.join(out, "evaluation", t["id"] + ".json"),
              json.dumps(evaluation) + "\n")
        references.append({"task_id": t["id"], "sql": t["reference"]})
        sql, status, why = t["prediction"]
        if sql is not None:
            predictions.append({"task_id": t["id"], "sql": sql})
        expected.append({"task_id": t["id"], "status": status, "why": why})
    write(os.path.join(out, "reference.jsonl"), jsonl(references))
    write(os.path.join(out, "predictions.jsonl"), jsonl(predictions))
    write(os.path.join(out, "expected.jsonl"), jsonl(expected))
    matches = sum(1 for e in expected if e["status"] == MATCH)
    return matches, len(expected)


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=here, help="benchmark folder to (re)write")
    args = parser.parse_args()
    matches, total = build(args.out)
    print("wrote %d tasks to %s; predictions.jsonl should score EX %d/%d = %.4f"
          % (total, args.out, matches, total, matches / total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
