/* score.c: the EX verdict of one task (see score.h): the evaluation spec of
 * BENCH/evaluation/ID.json, the two comparison profiles, and sx_score_files,
 * which reads both CSVs as pandas would (frame.c) and runs the Spider 2.0
 * comparison (compare.c) or the tie adapter (tie.c) around it, then the
 * strict check (strict.c) the same way. The strict verdict never changes
 * the frozen one: it only adds its own, and a note in detail when they differ.
 * Unreadable files follow the official evaluator, where any exception scores
 * 0: an unreadable prediction is a mismatch; an unreadable gold (or an
 * evaluation that does not fit gold) is an eval_error. */
#include "common/ex/score.h"

#include "common/ex/compare.h"
#include "common/files.h"
#include "common/ex/frame.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/ex/strict.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/ex/tie.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const s_profile_names[] = {"spider2-lite-2025-11",
                                              "spider2-lite-2025-03"};

int sx_profile_parse(const char *name, sx_profile_t *profile)
{
    for (int i = 0; name && i < 2; i++)
        if (strcmp(name, s_profile_names[i]) == 0) {
            *profile = (sx_profile_t)i;
            return 0;
        }
    return -1;
}

const char *sx_profile_name(sx_profile_t profile)
{
    return (unsigned)profile < 2 ? s_profile_names[profile] : "unknown";
}

void sx_evaluation_destroy(sx_evaluation_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->condition_cols);
    free(*self_p);
    *self_p = NULL;
}

/* condition_cols: a list of column indexes (upstream also takes one index). */
static int load_condition_cols(json_t *value, sx_evaluation_t *ev, sx_error_t *err)
{
    if (json_is_null(value))
        return 0;
    size_t count = json_is_array(value) ? json_array_size(value) : 1;
    if (!json_is_array(value) && !json_is_integer(value))
        return sx_error_set(err, "condition_cols must be a list of column indexes");
    ev->condition_cols = sx_alloc(count + 1, sizeof *ev->condition_cols);
    for (size_t i = 0; i < count; i++) {
        json_t *item = json_is_array(value) ? json_array_get(value, i) : value;
        if (!json_is_integer(item) || json_integer_value(item) < 0)
            return sx_error_set(err, "condition_cols[%zu] is not a column index (>= 0)",
                                i);
        ev->condition_cols[i] = (long)json_integer_value(item);
    }
    ev->condition_count = count;
    return 0;
}

static int load_count(json_t *policy, const char *key, long *out, sx_error_t *err)
{
    json_t *v = json_object_get(policy, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return sx_error_set(err, "answer_policy.%s must be an integer >= 0", key);
    *out = (long)json_integer_value(v);
    return 0;
}

static int load_policy(json_t *policy, sx_evaluation_t *ev, sx_error_t *err)
{
    if (!policy)
        return 0;
    const char *kind = json_string_value(json_object_get(policy, "kind"));
    if (!json_is_object(policy) || !kind)
        return sx_error_set(err, "answer_policy must be an object with a string kind");
    const char *key;
    json_t *value;
    json_object_foreach(policy, key, value)
    {
        if (strcmp(key, "kind") != 0 && strcmp(key, "k") != 0 &&
            strcmp(key, "mandatory_rows") != 0)
            return sx_error_set(err, "answer_policy: unknown field '%s'", key);
    }
    bool has_counts =
        json_object_get(policy, "k") || json_object_get(policy, "mandatory_rows");
    if (strcmp(kind, "ordinary") == 0 || strcmp(kind, "any_one_argmax") == 0) {
        ev->kind = kind[0] == 'o' ? SX_ANSWER_ORDINARY : SX_ANSWER_ANY_ONE_ARGMAX;
        return has_counts ? sx_error_set(err,
                                         "answer_policy '%s' takes no k or "
                                         "mandatory_rows",
                                         kind)
                          : 0;
    }
    if (strcmp(kind, "any_k_from_tie_set") != 0)
        return sx_error_set(err, "answer_policy: unknown kind '%s'", kind);
    ev->kind = SX_ANSWER_ANY_K_FROM_TIE_SET;
    if (load_count(policy, "k", &ev->k, err) != 0)
        return -1;
    if (!json_object_get(policy, "mandatory_rows"))
        ev->mandatory_rows = 0;
    else if (load_count(policy, "mandatory_rows", &ev->mandatory_rows, err) != 0)
        return -1;
    if (ev->k < 1 || ev->k < ev->mandatory_rows)
        return sx_error_set(err,
                            "answer_policy: need 1 <= k and mandatory_rows <= k "
                            "(k=%ld, mandatory_rows=%ld)",
                            ev->k, ev->mandatory_rows);
    return 0;
}

static int load_evaluation(json_t *root, sx_evaluation_t *ev, sx_error_t *err)
{
    if (!json_is_object(root))
        return sx_error_set(err, "not a JSON object");
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (strcmp(key, "condition_cols") == 0) {
            if (load_condition_cols(value, ev, err) != 0)
                return -1;
        } else if (strcmp(key, "ignore_order") == 0) {
            if (!json_is_boolean(value))
                return sx_error_set(err, "ignore_order must be true or false");
            ev->ignore_order = json_is_true(value);
        } else if (strcmp(key, "answer_policy") == 0) {
            if (load_policy(value, ev, err) != 0)
                return -1;
        } else {
            return sx_error_set(err, "unknown field '%s'", key);
        }
    }
    return 0;
}

sx_evaluation_t *sx_evaluation_load(const char *path, sx_error_t *err)
{
    /* BENCH/evaluation/ID.json belongs to its folder (files.h). */
    char *folder = sx_file_folder(path);
    size_t size = 0;
    char *text = sx_file_load(folder, path, SX_FILE_JSON, &size, err);
    free(folder);
    if (!text)
        return NULL;
    json_error_t jerr;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root) {
        sx_error_set(err, "%s:%d: %s", path, jerr.line, jerr.text);
        return NULL;
    }
    sx_evaluation_t *ev = sx_new(sx_evaluation_t);
    if (load_evaluation(root, ev, err) != 0) {
        sx_error_prefix(err, "%s", path);
        sx_evaluation_destroy(&ev);
    }
    json_decref(root);
    return ev;
}

static sx_status_t say(sx_status_t status, char *detail, size_t size, const char *what,
                       const char *why)
{
    if (detail && size)
        snprintf(detail, size, "%s%s", what, why);
    return status;
}

/* The frozen verdict (1, 0, -1 with err set), with its detail. */
static int frozen_verdict(sx_tie_target_t *t, size_t pred_rows, char *detail,
                          size_t detail_size, sx_error_t *err)
{
    const sx_evaluation_t *ev = t->evaluation;
    if (ev->kind == SX_ANSWER_ORDINARY)
        return sx_compare_gold(t->frozen, t->gold, NULL, 0, ev->condition_cols,
                               ev->condition_count, detail, detail_size, err);
    return sx_tie_match(sx_tie_frozen_check, t, t->gold, pred_rows, ev, detail,
                        detail_size, err);
}

/* The strict verdict, 0 or 1; when it differs from the frozen one, detail
 * gets "strict N: why" (after "; " if it holds the frozen reason). */
static int strict_verdict(sx_tie_target_t *t, size_t pred_rows, int frozen, char *detail,
                          size_t detail_size)
{
    char scratch[256];
    sx_error_t err;
    sx_error_clear(&err);
    int strict = t->evaluation->kind == SX_ANSWER_ORDINARY
                     ? sx_tie_strict_check(t, NULL, 0, &err)
                     : sx_tie_match(sx_tie_strict_check, t, t->gold, pred_rows,
                                    t->evaluation, scratch, sizeof scratch, &err);
    if (strict < 0)
        sx_error_prefix(&err, "strict check failed");
    int value = strict == 1;
    if (value == frozen)
        return value;
    const char *why = value        ? SX_STRICT_PAIRING_MISSED
                      : strict < 0 ? err.msg
                                   : sx_strict_reason_text(sx_strict_reason(t->strict));
    size_t used = strlen(detail);
    if (used + 1 < detail_size)
        snprintf(detail + used, detail_size - used, "%sstrict %d: %s", used ? "; " : "",
                 value, why);
    return value;
}

sx_frame_t *sx_gold_read(const char *gold_csv, sx_error_t *err)
{
    char *folder = sx_file_folder(gold_csv);
    sx_frame_t *gold = sx_frame_read(folder, gold_csv, err);
    free(folder);
    return gold;
}

sx_status_t sx_score_files(const char *gold_csv, const char *pred_csv,
                           const sx_evaluation_t *evaluation, sx_profile_t profile,
                           int *strict, char *detail, size_t detail_size)
{
    char scratch[1];
    if (!detail) {
        detail = scratch;
        detail_size = sizeof scratch;
    }
    detail[0] = '\0';
    *strict = 0;
    sx_error_t err;
    sx_error_clear(&err);
    sx_frame_t *gold = sx_gold_read(gold_csv, &err);
    if (!gold)
        return say(SX_STATUS_EVAL_ERROR, detail, detail_size,
                   "cannot read gold: ", err.msg);
    /* Whether the evaluation fits gold does not depend on the prediction:
     * checked first, so a broken task is eval_error even when the
     * prediction is unreadable. */
    if (sx_compare_check_columns(gold, evaluation->condition_cols,
                                 evaluation->condition_count, &err) != 0 ||
        sx_tie_check_fits(gold, evaluation, &err) != 0) {
        sx_frame_destroy(&gold);
        return say(SX_STATUS_EVAL_ERROR, detail, detail_size, "", err.msg);
    }
    /* The prediction is wherever the submission says: no folder. */
    sx_frame_t *pred = sx_frame_read(NULL, pred_csv, &err);
    if (!pred) {
        sx_frame_destroy(&gold);
        return say(SX_STATUS_MISMATCH, detail, detail_size,
                   "cannot read prediction: ", err.msg);
    }
    /* One checker at a time: the frozen one is gone before the strict one is
     * built, so a large table's peak is the frames and the larger of the
     * two, not their sum. */
    size_t pred_rows = sx_frame_row_count(pred);
    sx_tie_target_t target = {.frozen =
                                  sx_compare_new(pred, evaluation->ignore_order, profile),
                              .gold = gold,
                              .evaluation = evaluation};
    int verdict = frozen_verdict(&target, pred_rows, detail, detail_size, &err);
    sx_compare_destroy(&target.frozen);
    if (verdict >= 0) {
        target.strict = sx_strict_new(pred, evaluation->ignore_order, profile);
        *strict = strict_verdict(&target, pred_rows, verdict, detail, detail_size);
        sx_strict_destroy(&target.strict);
    }
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
    if (verdict < 0)
        return say(SX_STATUS_EVAL_ERROR, detail, detail_size, "", err.msg);
    return verdict == 1 ? SX_STATUS_MATCH : SX_STATUS_MISMATCH;
}

bool sx_task_ignores_order(const sx_bench_t *bench, const char *task_id)
{
    char *path = bench ? sx_bench_evaluation_path(bench, task_id) : NULL;
    sx_error_t err;
    sx_evaluation_t *evaluation = path ? sx_evaluation_load(path, &err) : NULL;
    bool ignore = evaluation && evaluation->ignore_order;
    sx_evaluation_destroy(&evaluation);
    free(path);
    return ignore;
}

bool *sx_bench_ignore_order(const sx_bench_t *bench)
{
    size_t count = sx_bench_task_count(bench);
    bool *ignore = sx_alloc(count + 1, sizeof *ignore);
    for (size_t i = 0; i < count; i++)
        ignore[i] = sx_task_ignores_order(bench, sx_bench_task_id(bench, i));
    return ignore;
}

int sx_score_inputs(const char *bench_dir, const char *task_id, char **gold_csv,
                    sx_evaluation_t **evaluation, sx_error_t *err)
{
    sx_error_clear(err);
    sx_bench_t *bench = sx_bench_open(bench_dir, err);
    *gold_csv = bench ? sx_bench_gold_path(bench, task_id) : NULL;
    char *evaluation_path = bench ? sx_bench_evaluation_path(bench, task_id) : NULL;
    sx_bench_destroy(&bench);
    *evaluation = evaluation_path ? sx_evaluation_load(evaluation_path, err) : NULL;
    free(evaluation_path);
    if (*gold_csv && *evaluation)
        return 0;
    if (!sx_error_is_set(err))
        sx_error_set(err, "out of memory");
    free(*gold_csv);
    *gold_csv = NULL;
    sx_evaluation_destroy(evaluation);
    return -1;
}

sx_status_t sx_score_task(const char *bench_dir, const char *task_id,
                          const char *pred_csv, sx_profile_t profile, int *strict,
                          char *detail, size_t detail_size)
{
    *strict = 0;
    sx_error_t err;
    char *gold = NULL;
    sx_evaluation_t *evaluation = NULL;
    sx_status_t status = SX_STATUS_EVAL_ERROR;
    if (sx_score_inputs(bench_dir, task_id, &gold, &evaluation, &err) != 0)
        snprintf(detail, detail_size, "%s", err.msg);
    else
        status = sx_score_files(gold, pred_csv, evaluation, profile, strict, detail,
                                detail_size);
    sx_evaluation_destroy(&evaluation);
    free(gold);
    return status;
}

/* ---- self-test ----------------------------------------------------------- */

static char *write_temp(const char *text)
{
    char *path = sx_strdup("/tmp/sx-score-test-XXXXXX");
    int fd = mkstemp(path);
    SX_CHECK(fd >= 0);
    FILE *out = fdopen(fd, "w");
    fputs(text, out);
    fclose(out);
    return path;
}

static sx_evaluation_t *evaluation_from(const char *json, sx_error_t *err)
{
    char *path = write_temp(json);
    sx_evaluation_t *ev = sx_evaluation_load(path, err);
    unlink(path);
    free(path);
    return ev;
}

static void test_evaluation_loading_validates(void)
{
    sx_error_t err;
    sx_evaluation_t *ev =
        evaluation_from("{\"condition_cols\": [0, 2], \"ignore_order\": true, "
                        "\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": 3, "
                        "\"mandatory_rows\": 1}}",
                        &err);
    SX_CHECK(ev && ev->condition_count == 2 && ev->condition_cols[1] == 2);
    SX_CHECK(ev->ignore_order && ev->kind == SX_ANSWER_ANY_K_FROM_TIE_SET);
    SX_CHECK(ev->k == 3 && ev->mandatory_rows == 1);
    sx_evaluation_destroy(&ev);
    ev = evaluation_from("{}", &err);
    SX_CHECK(ev && ev->condition_count == 0 && !ev->ignore_order);
    sx_evaluation_destroy(&ev);
    ev = evaluation_from("{\"ignore_order\": false}", &err);
    SX_CHECK(ev && !ev->ignore_order && ev->kind == SX_ANSWER_ORDINARY);
    sx_evaluation_destroy(&ev);
    /* One index alone is upstream's shorthand for a list of one; k alone
     * means no mandatory rows. */
    ev = evaluation_from("{\"condition_cols\": 1, \"answer_policy\": {\"kind\": "
                         "\"any_k_from_tie_set\", \"k\": 2}}",
                         &err);
    SX_CHECK(ev && ev->condition_count == 1 && ev->condition_cols[0] == 1);
    SX_CHECK(ev->kind == SX_ANSWER_ANY_K_FROM_TIE_SET && ev->k == 2 &&
             ev->mandatory_rows == 0);
    sx_evaluation_destroy(&ev);
    ev = evaluation_from("{\"condition_cols\": null, \"answer_policy\": {\"kind\": "
                         "\"any_one_argmax\"}}",
                         &err);
    SX_CHECK(ev && ev->condition_count == 0 && ev->kind == SX_ANSWER_ANY_ONE_ARGMAX);
    sx_evaluation_destroy(&ev);
    static const char *const bad[][2] = {
        {"{\"condition_cols\": [-1]}", "condition_cols[0] is not a column index (>= 0)"},
        {"{\"condition_cols\": [0, \"1\"]}",
         "condition_cols[1] is not a column index (>= 0)"},
        {"{\"condition_cols\": \"0\"}",
         "condition_cols must be a list of column indexes"},
        {"{\"ignore_order\": 1}", "ignore_order"},
        {"{\"extra\": 1}", "extra"},
        {"{\"answer_policy\": \"ordinary\"}",
         "answer_policy must be an object with a string kind"},
        {"{\"answer_policy\": {\"k\": 1}}",
         "answer_policy must be an object with a string kind"},
        {"{\"answer_policy\": {\"kind\": \"ordinary\", \"top\": 1}}",
         "answer_policy: unknown field 'top'"},
        {"{\"answer_policy\": {\"kind\": \"ordinary\", \"k\": 1}}",
         "answer_policy 'ordinary' takes no k or mandatory_rows"},
        {"{\"answer_policy\": {\"kind\": \"any_one_argmax\", \"mandatory_rows\": 0}}",
         "answer_policy 'any_one_argmax' takes no k or mandatory_rows"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": -1}}",
         "answer_policy.k must be an integer >= 0"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\"}}",
         "answer_policy.k must be an integer >= 0"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": \"2\"}}",
         "answer_policy.k must be an integer >= 0"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": 1, "
         "\"mandatory_rows\": -1}}",
         "answer_policy.mandatory_rows must be an integer >= 0"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": 0}}",
         "answer_policy: need 1 <= k and mandatory_rows <= k (k=0, mandatory_rows=0)"},
        {"{\"answer_policy\": {\"kind\": \"any_k_from_tie_set\", \"k\": 1, "
         "\"mandatory_rows\": 2}}",
         "answer_policy: need 1 <= k and mandatory_rows <= k (k=1, mandatory_rows=2)"},
        {"{\"answer_policy\": {\"kind\": \"best\"}}",
         "answer_policy: unknown kind 'best'"},
        {"[1]", ""},
        {"{", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sx_error_clear(&err);
        SX_CHECK(!evaluation_from(bad[i][0], &err));
        if (!strstr(err.msg, bad[i][1]))
            fprintf(stderr, "%s: '%s' lacks '%s'\n", bad[i][0], err.msg, bad[i][1]);
        SX_CHECK(strstr(err.msg, "/tmp/sx-score-test-") != NULL);
        SX_CHECK(strstr(err.msg, bad[i][1]) != NULL);
    }
}

static sx_status_t score_texts(const char *gold_csv, const char *pred_csv,
                               const sx_evaluation_t *ev, int *strict, char *detail,
                               size_t detail_size)
{
    char *gold = write_temp(gold_csv), *pred = write_temp(pred_csv);
    sx_status_t status = sx_score_files(gold, pred, ev, SX_PROFILE_SPIDER2_LITE_2025_11,
                                        strict, detail, detail_size);
    unlink(gold);
    unlink(pred);
    free(gold);
    free(pred);
    return status;
}

/* The strict verdict beside the frozen one, and the note in detail that
 * says why they differ. */
static void test_score_files_strict_beside_frozen(void)
{
    sx_evaluation_t unordered = {.ignore_order = true};
    char detail[512];
    int strict = -1;
    SX_CHECK(score_texts("k,v\n1,x\n2,y\n", "v,k\ny,2\nx,1\n", &unordered, &strict,
                         detail, sizeof detail) == SX_STATUS_MATCH);
    SX_CHECK(strict == 1 && strcmp(detail, "") == 0);
    SX_CHECK(score_texts("k,v\n1,x\n2,y\n", "k,v\n1,y\n2,x\n", &unordered, &strict,
                         detail, sizeof detail) == SX_STATUS_MATCH);
    SX_CHECK(strict == 0 && strcmp(detail, "strict 0: rows do not align") == 0);
    SX_CHECK(score_texts("a,b\n1,1\n2,2\n", "x\n1\n2\n", &unordered, &strict, detail,
                         sizeof detail) == SX_STATUS_MATCH);
    SX_CHECK(
        strict == 0 &&
        strcmp(detail, "strict 0: one prediction column used for two gold columns") == 0);
    SX_CHECK(score_texts("a\n0\n-1.5\n", "a\n-0.001\n-1.5\n", &unordered, &strict, detail,
                         sizeof detail) == SX_STATUS_MISMATCH);
    SX_CHECK(strict == 1 && strcmp(detail, "gold column 0 has no equal column in the "
                                           "prediction; strict 1: a numeric pairing the "
                                           "string sort missed") == 0);
    SX_CHECK(score_texts("a\n1\n", "a\n2\n", &unordered, &strict, detail,
                         sizeof detail) == SX_STATUS_MISMATCH);
    SX_CHECK(strict == 0 && !strstr(detail, "strict"));
    /* Tie policies apply to both: each column fits some allowed gold, the
     * rows fit none. */
    sx_evaluation_t tie = {
        .kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 2, .ignore_order = true};
    const char *tied = "t,p\nA,1\nB,2\nC,3\n";
    SX_CHECK(score_texts(tied, "t,p\nC,3\nA,1\n", &tie, &strict, detail, sizeof detail) ==
             SX_STATUS_MATCH);
    SX_CHECK(strict == 1 && strcmp(detail, "") == 0);
    SX_CHECK(score_texts(tied, "t,p\nC,1\nA,3\n", &tie, &strict, detail, sizeof detail) ==
             SX_STATUS_MATCH);
    SX_CHECK(strict == 0 && strcmp(detail, "strict 0: rows do not align") == 0);
    /* A tiny buffer still gets the frozen part first. */
    char tiny[8];
    SX_CHECK(score_texts("a\n0\n-1.5\n", "a\n-0.001\n-1.5\n", &unordered, &strict, tiny,
                         sizeof tiny) == SX_STATUS_MISMATCH);
    SX_CHECK(strict == 1 && strcmp(tiny, "gold co") == 0);
    /* One with room for part of the strict note cuts it at its end and
     * writes nothing past it. */
    char guarded[64 + 8];
    memset(guarded, '#', sizeof guarded);
    SX_CHECK(score_texts("a\n0\n-1.5\n", "a\n-0.001\n-1.5\n", &unordered, &strict,
                         guarded, 64) == SX_STATUS_MISMATCH);
    SX_CHECK(strict == 1 && strcmp(guarded, "gold column 0 has no equal column in the "
                                            "prediction; strict 1: ") == 0);
    SX_CHECK(memcmp(guarded + 64, "########", 8) == 0);
}

static void test_score_files_statuses(void)
{
    sx_evaluation_t ordinary = {0};
    char *gold = write_temp("a,b\n1,x\n2,y\n");
    char *good = write_temp("b,a\nx,1.001\ny,2\n");
    char *bad = write_temp("a\n1\n3\n");
    char *empty = write_temp("");
    char detail[512];
    int strict = -1;
    sx_profile_t p = SX_PROFILE_SPIDER2_LITE_2025_11;
    SX_CHECK(sx_score_files(gold, good, &ordinary, p, &strict, detail, sizeof detail) ==
             SX_STATUS_MATCH);
    SX_CHECK(strict == 1 && strcmp(detail, "") == 0);
    SX_CHECK(sx_score_files(gold, bad, &ordinary, p, &strict, detail, sizeof detail) ==
             SX_STATUS_MISMATCH);
    SX_CHECK(strstr(detail, "gold column 0"));
    SX_CHECK(sx_score_files(gold, empty, &ordinary, p, &strict, detail, sizeof detail) ==
             SX_STATUS_MISMATCH);
    SX_CHECK(strstr(detail, "cannot read prediction"));
    SX_CHECK(sx_score_files(empty, good, &ordinary, p, &strict, NULL, 0) ==
             SX_STATUS_EVAL_ERROR);
    SX_CHECK(sx_score_files("/nonexistent.csv", good, &ordinary, p, &strict, detail,
                            sizeof detail) == SX_STATUS_EVAL_ERROR);
    long beyond = 7;
    sx_evaluation_t wide = {.condition_cols = &beyond, .condition_count = 1};
    SX_CHECK(sx_score_files(gold, good, &wide, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    /* A broken task stays eval_error even when the prediction is unreadable. */
    SX_CHECK(sx_score_files(gold, empty, &wide, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    sx_evaluation_t three_of_two = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 3};
    SX_CHECK(sx_score_files(gold, empty, &three_of_two, p, &strict, detail,
                            sizeof detail) == SX_STATUS_EVAL_ERROR);
    char *paths[] = {gold, good, bad, empty};
    for (size_t i = 0; i < 4; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    sx_profile_t parsed;
    SX_CHECK(sx_profile_parse("spider2-lite-2025-03", &parsed) == 0 &&
             parsed == SX_PROFILE_SPIDER2_LITE_2025_03);
    SX_CHECK(sx_profile_parse("spider2", &parsed) == -1);
    SX_CHECK(sx_profile_parse(NULL, &parsed) == -1);
    SX_CHECK(strcmp(sx_profile_name(SX_PROFILE_SPIDER2_LITE_2025_11),
                    "spider2-lite-2025-11") == 0);
    SX_CHECK(strcmp(sx_profile_name((sx_profile_t)2), "unknown") == 0);
    sx_evaluation_t *none = NULL;
    sx_evaluation_destroy(&none);
    sx_evaluation_destroy(NULL);
}

/* A tie policy with more gold combinations than SX_TIE_MAX_COMBINATIONS is
 * the task's fault: eval_error, saying how many, and no strict verdict. */
static void test_score_files_too_many_ties(void)
{
    char gold[41 * 4 + 8] = "v\n", pred[11 * 4 + 8] = "v\n";
    for (int i = 0; i < 40; i++)
        snprintf(gold + strlen(gold), sizeof gold - strlen(gold), "%d\n", i);
    for (int i = 0; i < 10; i++)
        snprintf(pred + strlen(pred), sizeof pred - strlen(pred), "%d\n", i);
    sx_evaluation_t tie = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 10};
    char detail[256];
    int strict = -1;
    SX_CHECK(score_texts(gold, pred, &tie, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    SX_CHECK(strict == 0);
    SX_CHECK(strcmp(detail, "tie policy allows more than 100000 gold combinations "
                            "(choose 10 of 40 tied rows)") == 0);
}

void sx_score_test(bool verbose)
{
    (void)verbose;
    test_evaluation_loading_validates();
    test_score_files_statuses();
    test_score_files_strict_beside_frozen();
    test_score_files_too_many_ties();
}
