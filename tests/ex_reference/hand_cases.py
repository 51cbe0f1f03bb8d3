#!/usr/bin/env python3
"""hand_cases.py: hand-written EX scoring cases with the verdict docs/ex.md
(section 6) and pandas give each under both profiles. They pin down the
reference itself before it judges streamex: `check` scores them with
reference.py and fails on any verdict other than the one written here;
`write` lays them out as a corpus (the gen_cases.py layout) so the
differential test also runs streamex on them.

    hand_cases.py check
    hand_cases.py write --out DIR
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

M, X, E = "match", "mismatch", "eval_error"
ANY = {"ignore_order": True}
ARGMAX = {"answer_policy": {"kind": "any_one_argmax"}}

# (name, gold CSV, predicted CSV or None for an empty file, evaluation,
#  verdict under spider2-lite-2025-11, verdict under spider2-lite-2025-03)
CASES = [
    ("identical_ints", "a\n1\n2\n", "b\n1\n2\n", {}, M, M),
    ("row_order_matters", "a\n1\n2\n", "b\n2\n1\n", {}, X, X),
    ("ignore_order_sorts", "a\n1\n2\n", "b\n2\n1\n", ANY, M, M),
    ("tolerance_inside", "a\n1.0\n", "a\n1.0099\n", {}, M, M),
    ("tolerance_exact_hundredth_in_binary", "a\n0\n", "a\n0.01\n", {}, M, M),
    ("tolerance_just_over_in_binary", "a\n1.0\n", "a\n1.01\n", {}, X, X),
    ("rel_tol_for_large_values", "a\n1000000000\n", "a\n1000000000.9\n", {}, M, M),
    ("int_equals_float", "a\n3\n", "a\n3.0\n", {}, M, M),
    ("blank_line_is_no_nan_row", "a\n1\n\n", "a\n1\nNA\n", {}, X, X),
    ("nan_vs_zero_real", "a,b\n1,NA\n", "a,b\n1,0\n", {}, M, X),
    ("nan_pairs", "a,b\nx,NULL\n", "a,b\nx,nan\n", {}, M, M),
    ("nan_vs_string", "a,b\nx,NA\n", "a,b\nx,y\n", {}, X, X),
    ("zero_vs_string_zero", "a,b\nx,0\n", "a,b\nx,y\n", {}, X, X),
    ("bool_vs_int", "a\nTrue\nFalse\n", "a\n1\n0\n", {}, M, M),
    ("bool_spellings", "a\nTRUE\nfalse\n", "a\ntrue\nFalse\n", {}, M, M),
    ("quoted_na_is_na", 'a,b\nx,"NA"\n', "a,b\nx,\n", {}, M, M),
    ("near_na_is_string", "a,b\nx,Nan\n", "a,b\nx,NaN\n", {}, X, X),
    ("leading_zeros_are_ints", "a\n007\n", "a\n7\n", {}, M, M),
    ("spaces_around_numbers", "a\n 5 \n", "a\n5\n", {}, M, M),
    ("spaces_around_strings_kept", "a\n x\n", "a\nx\n", {}, X, X),
    ("exponent", "a\n1e3\n", "a\n1000\n", {}, M, M),
    ("inf", "a\ninf\n", "a\nInfinity\n", {}, M, M),
    ("inf_vs_big", "a\ninf\n", "a\n1e308\n", {}, X, X),
    ("uint64", "a\n18446744073709551615\n", "a\n18446744073709551615\n", {}, M, M),
    ("beyond_uint64_is_string", "a\n18446744073709551616\n", "a\n18446744073709551616.0\n", {}, X, X),
    ("blank_lines_skipped", "a\n1\n\n2\n", "a\n1\n2\n", {}, M, M),
    ("one_column_empty_value_vanishes", "a\nx\n\ny\n", "a\nx\ny\n", {}, M, M),
    # A lone NULL written as Python's csv and pandas.to_csv write it (and as
    # streamex writes it, docs/benchmark.md) is a NaN row, not a blank line.
    ("one_column_quoted_empty_is_nan_row", 'a\nx\n""\n', "a\nx\nNA\n", {}, M, M),
    ("one_column_quoted_empty_is_a_row", 'a\nx\n""\n', "a\nx\n", {}, X, X),
    ("one_column_only_null", 'a\n""\n', 'a\n""\n', {}, M, M),
    ("one_column_literal_quotes", 'a\n""""""\n', 'a\n""\n', {}, X, X),
    ("one_column_tab_line_is_blank", 'a\n"\t"\nx\n', "a\n\t\nx\n", {}, X, X),
    ("extra_pred_column", "a\n1\n", "z,a\n9,1\n", {}, M, M),
    ("missing_gold_column", "a,b\n1,2\n", "a\n1\n", {}, X, X),
    ("condition_cols", "a,b\n1,2\n", "a\n1\n", {"condition_cols": [0]}, M, M),
    ("condition_out_of_range", "a\n1\n", "a\n1\n", {"condition_cols": [3]}, E, E),
    ("duplicate_row", "a\n1\n", "a\n1\n1\n", ANY, X, X),
    ("empty_relations", "a\n", "a\n", {}, M, M),
    ("empty_vs_rows", "a\n", "a\n1\n", {}, X, X),
    ("pred_empty_file", "a\n1\n", None, {}, X, X),
    ("gold_empty_file", "", "a\n1\n", {}, E, E),
    # NaN becomes the int 0, which sorts as "0" before "0.0" and "0.005".
    ("nan_sorts_as_zero", "a\n0.005\nNA\n", "a\n0.0\n0.005\n", ANY, M, X),
    # In a str column 10 sorts before 9 by str(); in an int column too.
    ("str_sort_key", "a\n9\n10\n", "a\n10\n9\n", ANY, M, M),
    # Ints stay ints unless numeric dtypes mix: str(10**16) sorts before "15"
    # (as a float, "1e+16" would sort after "15.0").
    ("int_column_keeps_int_sort_keys", "a\n10000000000000000\n15\n",
     "a,b\n10000000000000000,x\n15,y\n", ANY, M, M),
    # When numeric dtypes mix, .values turns every int to a float: the
    # prediction's 10**16 sorts as "1e+16", after "15.0", while the int-only
    # gold sorts it first, so the rows pair wrongly (upstream's verdict).
    ("mixed_numeric_prediction_becomes_floats", "a\n10000000000000000\n15\n",
     "a,b\n10000000000000000,0.5\n15,1.5\n", ANY, X, X),
    # A string column makes the prediction's .values objects: its ints stay
    # ints, and now the gold's floats pair wrongly.
    ("mixed_numeric_gold_becomes_floats", "a,b\n10000000000000000,0.5\n15,1.5\n",
     "a,b,c\n10000000000000000,0.5,x\n15,1.5,y\n", ANY, X, X),
    ("mixed_numeric_on_both_sides", "a,b\n10000000000000000,0.5\n15,1.5\n",
     "b,a\n1.5,15\n0.5,10000000000000000\n", ANY, M, M),
    # On equal str() keys the string sorts first: 2025-11's NaN-turned-0 in a
    # str column ties with "0", and both sides pair "0" with "0", 0 with 0.
    ("string_before_number_on_equal_key", "v,w\nx,1\n0,2\n,3\n", "v,w\nx,1\n,2\n0,3\n", ANY, M, M),
    ("argmax_one_row", "a,b\nx,1\ny,1\n", "a,b\ny,1\n", ARGMAX, M, M),
    ("argmax_two_rows", "a,b\nx,1\ny,1\n", "a,b\nx,1\ny,1\n", ARGMAX, X, X),
    ("tie_k", "a\n1\n2\n3\n", "a\n1\n3\n",
     {"answer_policy": {"kind": "any_k_from_tie_set", "k": 2, "mandatory_rows": 1}}, M, M),
    ("tie_k_missing_mandatory", "a\n1\n2\n3\n", "a\n2\n3\n",
     {"answer_policy": {"kind": "any_k_from_tie_set", "k": 2, "mandatory_rows": 1}}, X, X),
    # Two mandatory rows: both must appear, beside one tied row.
    ("tie_k_two_mandatory", "a,b\nZ,50\nY,40\nB,10\nC,10\n", "a,b\nY,40\nC,10\nZ,50\n",
     {"ignore_order": True,
      "answer_policy": {"kind": "any_k_from_tie_set", "k": 3, "mandatory_rows": 2}}, M, M),
    ("tie_k_mandatory_row_twice", "a,b\nZ,50\nY,40\nB,10\nC,10\n", "a,b\nZ,50\nZ,50\nC,10\n",
     {"ignore_order": True,
      "answer_policy": {"kind": "any_k_from_tie_set", "k": 3, "mandatory_rows": 2}}, X, X),
    ("tie_k_tied_row_twice", "a,b\nZ,50\nA,10\nB,10\nC,10\n", "a,b\nA,10\nZ,50\nA,10\n",
     {"ignore_order": True,
      "answer_policy": {"kind": "any_k_from_tie_set", "k": 3, "mandatory_rows": 1}}, X, X),
    # Types come from the whole gold file: 1 is a float because of the NaN row.
    # int64 overflow: pandas falls back by the order of the rows.
    ("overflow_after_float_is_float", "a\n1.5\n18446744073709551616\n",
     "a\n1.5\n1.8446744073709552e19\n", {}, M, M),
    ("overflow_before_float_is_strings", "a\n18446744073709551616\n1.5\n",
     "a\n1.8446744073709552e19\n1.5\n", {}, X, X),
    # In an int column with NA values, INT64_MIN is pandas' NA sentinel.
    ("int64_min_with_na_is_nan", "a,b\nx,-9223372036854775808\ny,\n", "a,b\nx,\ny,\n", {}, M, M),
    # An int column that is float only because of NA converts -0 to 0.0, not
    # -0.0, so it sorts as "0.0" (and -3.0 pairs with -3.0).
    ("minus_zero_in_int_with_na", "a\nNA\n-3\n-0\n", "a\nNA\n-3\n0.01\n", ANY, M, M),
    ("broken_evaluation_beats_unreadable_pred", "a\n1\n", None, {"condition_cols": [3]}, E, E),
    ("k_zero_is_eval_error", "a\n1\n", "a\n",
     {"answer_policy": {"kind": "any_k_from_tie_set", "k": 0}}, E, E),
    ("tie_types_from_whole_file", "a,b\nx,1\ny,\n", "a,b\nx,1.0\n", ARGMAX, M, M),
]


def write(out):
    for sub in ("gold", "evaluation", "pred"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "submission.jsonl"), "w") as sub:
        for name, gold, pred, spec, _, _ in CASES:
            with open(os.path.join(out, "gold", name + ".csv"), "w", newline="") as f:
                f.write(gold)
            with open(os.path.join(out, "pred", name + ".csv"), "w", newline="") as f:
                f.write(pred or "")
            with open(os.path.join(out, "evaluation", name + ".json"), "w") as f:
                json.dump(spec, f)
            sub.write(json.dumps({"task_id": name, "csv": "pred/%s.csv" % name}) + "\n")
    with open(os.path.join(out, "task_ids.txt"), "w") as f:
        f.write("".join(case[0] + "\n" for case in CASES))


def check():
    failures = 0
    with tempfile.TemporaryDirectory() as out:
        write(out)
        for name, _, _, _, want_11, want_03 in CASES:
            for nan_as_zero, want in ((True, want_11), (False, want_03)):
                got, detail = reference.score_task(out, name, os.path.join(out, "pred", name + ".csv"),
                                                   nan_as_zero)
                if got != want:
                    failures += 1
                    print(f"FAIL {name} ({'2025-11' if nan_as_zero else '2025-03'}): "
                          f"want {want}, reference says {got} {detail}")
    print(f"hand cases: {len(CASES)} x 2 profiles, {failures} failures")
    return 1 if failures else 0


def main(argv):
    if argv[:1] == ["check"]:
        return check()
    if argv[:2] == ["write", "--out"] and len(argv) == 3:
        write(argv[2])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
