#!/usr/bin/env python3
"""gen_cases.py: a seeded generator of adversarial EX scoring cases.

Writes a corpus as a benchmark folder that both `streamex score` and
reference.py can score (docs/benchmark.md, docs/outputs.md, docs/ex.md):

    OUT/task_ids.txt  OUT/gold/ID.csv  OUT/evaluation/ID.json
    OUT/pred/ID.csv   OUT/submission.jsonl  ({"task_id", "csv": "pred/ID.csv" | null})

Each case is a gold table plus a prediction derived from it by mutations
aimed at the corners of pandas read_csv and the Spider 2.0 comparison: NA
tokens, blank lines, type inference (int, float, bool, uint64, strings),
quoting, leading zeros, surrounding spaces, exponents, inf, -0.0, long
digit strings, values at the 1e-2 tolerance edge, NaN against 0 and against
strings, booleans against 1/0, permuted, extra and dropped columns,
duplicated and dropped rows, empty relations, one-column files with empty
values, unreadable files, condition_cols, ignore_order and the tie policies.
The generator never decides a verdict: the reference (pandas) does.

    gen_cases.py --out DIR --count N [--seed S] [--prefix ID_PREFIX]
"""

import argparse
import json
import os
import random
import sys

NA_TOKENS = ["", "NA", "N/A", "n/a", "NULL", "null", "None", "NaN", "nan", "-nan",
             "-NaN", "<NA>", "#N/A", "#N/A N/A", "#NA", "1.#QNAN", "-1.#IND", "1.#IND"]
# Close to NA tokens but not among pandas' defaults: these are strings.
NEAR_NA = ["Nan", "NAN", "none", "NONE", "Null", "na", " NA", "NA ", "nil", "N.A."]
TRUE_SPELLINGS = ["True", "TRUE", "true"]
FALSE_SPELLINGS = ["False", "FALSE", "false"]
WORDS = ["a", "b", "abc", "x y", " padded ", "O'Neil", 'say "hi"', "comma,inside",
         "line\nbreak", "1.0 ", "yes", "no", "0x1F", "1_000", "1e", "--1", "ü", "",
         "True ", "t", "1,5", "0.0.1", "+", "-", ".", "e5"]
# Fields written as they are, outside the quoting rules: pandas' tokenizer
# reads `"ab"c` as abc and a quote inside an unquoted field literally; a
# byte that is not UTF-8 (\udcff, written as 0xFF) makes the file unreadable.
RAW_FIELDS = ['"ab"c', 'a"b', '"a""b"', '" 5"', '"5" ', ' "5"', '"x"y"z"', '"1"2', "\udcff"]
# Deltas that sit on both sides of abs_tol=1e-2 once they pass through binary
# floating point.
EDGE_DELTAS = [0.0, 0.001, 0.005, 0.0099, 0.00999999, 0.01, 0.0100000001, 0.0101,
               0.011, 0.02, 0.1, 1.0]


class Gen:
    """Cell text for one column kind; every method returns CSV field text."""

    def __init__(self, rng):
        self.rng = rng

    def int_text(self):
        r = self.rng.random()
        if r < 0.6:
            return str(self.rng.randint(-20, 40))
        if r < 0.7:
            return self.rng.choice(["007", "00", "+5", "-0", "+0", "0010", " 3", "4 ", " 12 "])
        if r < 0.8:
            return str(self.rng.choice([2**53, 2**53 + 1, 2**63 - 1, -(2**63), 10**12 + 7]))
        if r < 0.9:
            return str(self.rng.choice([2**63, 2**63 + 1, 2**64 - 1, 2**64, 10**20]))
        return str(self.rng.randint(-(10**9), 10**9))

    def float_text(self):
        r = self.rng.random()
        if r < 0.45:
            return f"{self.rng.uniform(-100, 100):.{self.rng.randint(0, 6)}f}"
        if r < 0.55:
            return self.rng.choice(["1e3", "1E3", "2.5e-3", "-4.2E+2", ".5", "5.", "-.25",
                                    "1e-05", "1e16", "1.0E-7", "3.0", "-0.0", "0.0"])
        if r < 0.62:
            return self.rng.choice(["inf", "-inf", "Infinity", "-Infinity", "+inf", "INF"])
        if r < 0.72:
            return self.rng.choice(["0.30000000000000004441", "0.1000000000000000055511",
                                    "123456789.123456789012", "9007199254740993.0",
                                    "1.00000000000000000001", "2.675", "0.005", "1.005",
                                    "0.015", "1e308", "4.9e-324", "1.7976931348623157e308"])
        if r < 0.8:
            return repr(self.rng.randint(0, 500) / self.rng.choice([4, 8, 100, 1000]))
        if r < 0.85:
            # Where Python's repr switches to exponent form, which moves the
            # value in an ignore_order sort by str().
            return repr(self.rng.choice([1e-5, 5e-5, 0.0001, 0.00012, 0.004, 1e15, 9999999999999998.0,
                                         1e16, 1.5e16, 12345678901234567890.0]))
        return f"{self.rng.uniform(-1e9, 1e9):.3f}"

    def bool_text(self):
        return self.rng.choice(TRUE_SPELLINGS if self.rng.random() < 0.5 else FALSE_SPELLINGS)

    def str_text(self):
        r = self.rng.random()
        if r < 0.75:
            return self.rng.choice(WORDS)
        if r < 0.9:
            return self.rng.choice(NEAR_NA)
        return "".join(self.rng.choice("abxyz019 ") for _ in range(self.rng.randint(1, 5)))

    def na_text(self):
        return self.rng.choice(NA_TOKENS)

    def cell(self, kind):
        if kind == "mixed":
            kind = self.rng.choice(["int", "float", "bool", "str", "na"])
        return getattr(self, kind + "_text")()


def make_column(gen, rng, rows):
    """Cell texts of one column: one kind of value, and some share of NA tokens."""
    kind = rng.choices(["int", "float", "bool", "str", "mixed"], weights=[30, 30, 12, 18, 10])[0]
    na_rate = rng.choice([0, 0, 0.1, 0.2, 0.3, 0.8])
    return [gen.na_text() if rng.random() < na_rate else gen.cell(kind) for _ in range(rows)]


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def respell(gen, rng, text):
    """Another spelling of the same value (or a near one) as pandas may read it."""
    stripped = text.strip()
    if stripped in NA_TOKENS or text in NA_TOKENS:
        return rng.choice(NA_TOKENS + ["0", "0.0"])
    if stripped in TRUE_SPELLINGS:
        return rng.choice(TRUE_SPELLINGS + ["1", "1.0"])
    if stripped in FALSE_SPELLINGS:
        return rng.choice(FALSE_SPELLINGS + ["0", "0.0"])
    number = as_number(stripped)
    if number is None:
        return text
    choice = rng.random()
    if choice < 0.3:
        return repr(number)
    if choice < 0.5:
        if rng.random() < 0.5:
            return f" {stripped} "
        return f"0{stripped}" if stripped[:1].isdigit() else stripped  # leading zero
    if choice < 0.6:
        return rng.choice(["True", "False"]) if number in (0.0, 1.0) else f"{number:e}"
    delta = rng.choice(EDGE_DELTAS) * rng.choice([1, -1])
    if abs(number) > 1e6 and rng.random() < 0.5:
        delta = number * rng.choice([1e-9, 2e-9, 5e-10, 1e-8])  # math.isclose rel_tol edge
    return repr(number + delta)


def nan_zero_swap(gen, rng, text):
    """NaN where there was a zero and a zero (or a string) where there was a
    NaN: what the two profiles disagree on."""
    if text.strip() in NA_TOKENS:
        return rng.choice(["0", "0.0", "-0", "-0.0", "0e0", "False", "0.004", "x"])
    return gen.na_text()


def mutate_cell(gen, rng, text):
    r = rng.random()
    if r < 0.5:
        return respell(gen, rng, text)
    if r < 0.65:
        return gen.na_text()
    if r < 0.75:
        return rng.choice(["0", "0.0", "1", "True", "False"])
    if r < 0.85:
        return text.strip() + rng.choice([" ", "x", "0"])
    return gen.cell("mixed")


def mutate_columns(gen, rng, columns):
    """Prediction columns from gold ones: the benign and the breaking changes."""
    pred = [list(c) for c in columns]
    rows = len(pred[0]) if pred else 0
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        op = rng.choice(["respell", "respell", "cell", "nan_zero", "swap", "perm_rows", "dup_row",
                         "drop_row", "add_row", "perm_cols", "extra_col", "drop_col", "dup_col"])
        if op == "nan_zero" and rows:
            c, r = rng.randrange(len(pred)), rng.randrange(rows)
            pred[c][r] = nan_zero_swap(gen, rng, pred[c][r])
        elif op in ("respell", "cell") and rows:
            c, r = rng.randrange(len(pred)), rng.randrange(rows)
            fn = respell if op == "respell" else mutate_cell
            pred[c][r] = fn(gen, rng, pred[c][r])
        elif op == "swap" and rows > 1:
            c = rng.randrange(len(pred))
            a, b = rng.sample(range(rows), 2)
            pred[c][a], pred[c][b] = pred[c][b], pred[c][a]
        elif op == "perm_rows" and rows > 1:
            order = rng.sample(range(rows), rows)
            pred = [[col[i] for i in order] for col in pred]
        elif op == "dup_row" and rows:
            i = rng.randrange(rows)
            pred = [col + [col[i]] for col in pred]
            rows += 1
        elif op == "drop_row" and rows:
            i = rng.randrange(rows)
            pred = [col[:i] + col[i + 1:] for col in pred]
            rows -= 1
        elif op == "add_row":
            pred = [col + [gen.cell("mixed")] for col in pred]
            rows += 1
        elif op == "perm_cols":
            rng.shuffle(pred)
        elif op == "extra_col":
            pred.insert(rng.randint(0, len(pred)), make_column(gen, rng, rows))
        elif op == "drop_col" and len(pred) > 1:
            pred.pop(rng.randrange(len(pred)))
        elif op == "dup_col" and pred:
            pred.append(list(rng.choice(pred)))
    return pred


def csv_field(rng, text):
    if rng.random() < 0.004:
        return rng.choice(RAW_FIELDS)
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    if rng.random() < 0.1:
        return '"' + text + '"'
    return text


def render_csv(rng, columns, header=None):
    """CSV text of columns (lists of cell text), with pandas-relevant noise:
    CRLF, a BOM, blank and whitespace-only lines, no final newline, and now
    and then a ragged row."""
    width = len(columns)
    rows = len(columns[0]) if columns else 0
    if header is None:
        header = [rng.choice(["c%d" % i, "col", "", "NA", "a b", "x,y"]) for i in range(width)]
    ragged_row = rng.randrange(rows) if rows and rng.random() < 0.03 else -1
    lines = [",".join(csv_field(rng, h) for h in header)]
    for r in range(rows):
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "  ", "\t"]))
        fields = [csv_field(rng, col[r]) for col in columns]
        if r == ragged_row:
            fields = fields[:-1] if rng.random() < 0.5 else fields + ["9"]
        lines.append(",".join(fields))
    eol = "\r\n" if rng.random() < 0.2 else "\n"
    text = eol.join(lines)
    if rng.random() < 0.9:
        text += eol
    if rng.random() < 0.05:
        text = "\ufeff" + text
    if rng.random() < 0.003:
        text += '"unterminated' + eol
    return text


def evaluation_json(rng, width):
    spec = {}
    if rng.random() < 0.4 and width:
        count = rng.randint(1, width)
        cols = rng.sample(range(width), count)
        if rng.random() < 0.05:
            cols.append(cols[0])
        if rng.random() < 0.01:
            cols.append(width + rng.randint(0, 2))  # out of range: a broken task
        spec["condition_cols"] = cols
    elif rng.random() < 0.5:
        spec["condition_cols"] = []
    if rng.random() < 0.5:
        spec["ignore_order"] = True
    elif rng.random() < 0.5:
        spec["ignore_order"] = False
    if rng.random() < 0.3:
        spec["answer_policy"] = {"kind": "ordinary"}
    return spec


def ordinary_case(gen, rng):
    width = rng.choice([1, 1, 2, 2, 3, 4])
    rows = rng.choice([0, 1, 2, 3, 3, 4, 5, 6, 8, 12, 30])
    columns = [make_column(gen, rng, rows) for _ in range(width)]
    if width == 1 and rng.random() < 0.3:
        columns[0] = [c if rng.random() < 0.6 else "" for c in columns[0]]  # vanishing lines
    pred = mutate_columns(gen, rng, columns) if rng.random() < 0.85 else columns
    return columns, pred, evaluation_json(rng, width)


def tie_case(gen, rng):
    """any_one_argmax or any_k_from_tie_set: gold holds the mandatory rows and
    the tie set; the prediction picks some rows of it, then maybe mutates."""
    width = rng.choice([1, 2, 3])
    rows = rng.randint(1, 7)
    columns = [make_column(gen, rng, rows) for _ in range(width)]
    spec = evaluation_json(rng, width)
    if rng.random() < 0.5:
        spec["answer_policy"] = {"kind": "any_one_argmax"}
        picked = [rng.randrange(rows)] if rng.random() < 0.85 else rng.sample(range(rows), min(2, rows))
    else:
        mandatory = rng.randint(0, rows)
        k = rng.randint(mandatory, rows)
        spec["answer_policy"] = {"kind": "any_k_from_tie_set", "k": k, "mandatory_rows": mandatory}
        picked = list(range(mandatory)) + sorted(rng.sample(range(mandatory, rows), k - mandatory))
        if rng.random() < 0.3:
            rng.shuffle(picked)
    pred = [[col[i] for i in picked] for col in columns]
    if rng.random() < 0.5:
        pred = mutate_columns(gen, rng, pred)
    return columns, pred, spec


def write_case(out, rng, task_id, gold, pred, spec):
    """Writes one case; returns the submission line's csv value."""
    kind = rng.random()
    gold_text = "" if kind < 0.01 else render_csv(rng, gold)
    with open(os.path.join(out, "gold", task_id + ".csv"), "w", encoding="utf-8", errors="surrogateescape",
              newline="") as f:
        f.write(gold_text)
    with open(os.path.join(out, "evaluation", task_id + ".json"), "w", encoding="utf-8") as f:
        json.dump(spec, f)
    if kind < 0.03:
        return None  # explicit null: a terminal failure upstream of scoring
    if kind < 0.04:
        return "pred/does-not-exist-%s.csv" % task_id
    pred_text = "" if kind < 0.06 else render_csv(rng, pred)
    with open(os.path.join(out, "pred", task_id + ".csv"), "w", encoding="utf-8", errors="surrogateescape",
              newline="") as f:
        f.write(pred_text)
    return "pred/%s.csv" % task_id


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefix", default="c")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    gen = Gen(rng)
    for sub in ("gold", "evaluation", "pred"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    task_ids = []
    with open(os.path.join(args.out, "submission.jsonl"), "w", encoding="utf-8") as sub:
        for i in range(args.count):
            task_id = "%s%06d" % (args.prefix, i)
            task_ids.append(task_id)
            gold, pred, spec = tie_case(gen, rng) if rng.random() < 0.15 else ordinary_case(gen, rng)
            csv = write_case(args.out, rng, task_id, gold, pred, spec)
            if csv is None and rng.random() < 0.3:
                continue  # no line at all: also a missing prediction
            sub.write(json.dumps({"task_id": task_id, "csv": csv}) + "\n")
    with open(os.path.join(args.out, "task_ids.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(task_ids) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
