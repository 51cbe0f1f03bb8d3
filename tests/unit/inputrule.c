/* tests/unit/inputrule.c: the input rule of common/files.h (a regular file, inside
 * the folder it belongs to once links are resolved, within a size limit) at
 * its edges, through the boundary check itself and through every caller:
 * task files (task.json, sources, any other file), task_ids.txt, gold and
 * evaluation as a worker scores them, the predictions file and a
 * submission's CSV (no folder), the check before a file is shipped to a
 * worker, the list of a task's files that is shipped and fingerprinted, the
 * report's question and gold preview, and the worker's result cache. Each
 * case is a small change to a copy of tests/data/mini-bench, undone after,
 * and the exact outcome it must get.
 *
 * The edges: a link into a sibling folder whose name starts with the
 * folder's own (gold -> gold2/, tasks/join_max -> tasks/join_maxb/, BENCH ->
 * BENCH2/); ".." components that leave and come back; a chain of links that
 * ends outside, or passes outside and ends inside; an absolute link that
 * ends inside; a link to the folder itself or to a folder holding it (a
 * loop: accepted, and never walked twice, so the shipped list and the
 * fingerprint hold each file once); a folder that is itself a link
 * (accepted: the folder, resolved, is the root); a name with a newline
 * (refused: it could not be shipped) or a leading dash (accepted); and a
 * file replaced by a link after a first good read: the check at read time is
 * what counts. */
#include "common/files.h"
#include "common/mem.h"
#include "common/bench/predictions.h"
#include "common/bench/problems.h"
#include "common/report/model.h"
#include "common/ex/score.h"
#include "common/selftest.h"
#include "common/status.h"
#include "common/bench/task.h"
#include "worker/resultcache.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_top[PATH_MAX];       /* {T}: the temporary folder, links resolved */
static char s_bench[PATH_MAX + 8]; /* {B}: {T}/b, the copy of the mini bench */
static sx_bench_t *s_opened;       /* {B} opened before any case changes it */
static char s_fingerprint[41];     /* {B}'s fingerprint before any case */

/* The bytes every file outside the bench holds: no case may read them. */
#define SECRET "SECRET43"
#define OUT " (links must stay inside the folder)"
#define UNSAFE                                                                           \
    ": not a safe file name (1-128 characters of [A-Za-z0-9_.-]), so it cannot be "      \
    "shipped to workers"

/* pattern with every {B} and {T} replaced (heap). */
static char *fill(const char *pattern)
{
    size_t size = strlen(pattern) + 1;
    for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{'))
        size += PATH_MAX;
    char *out = sx_alloc(size, 1);
    size_t used = 0;
    for (const char *p = pattern; *p;) {
        const char *value = strncmp(p, "{B}", 3) == 0   ? s_bench
                            : strncmp(p, "{T}", 3) == 0 ? s_top
                                                        : NULL;
        if (value) {
            used += (size_t)snprintf(out + used, size - used, "%s", value);
            p += 3;
        } else {
            out[used++] = *p++;
        }
    }
    out[used] = '\0';
    return out;
}

/* Runs a shell command in {B}, {B} and {T} filled in. */
static void in_bench(const char *pattern)
{
    char *command = fill(pattern);
    char *line = sx_format("cd '%s' && %s", s_bench, command);
    int rc = system(line);
    if (rc != 0)
        fprintf(stderr, "inputrule: failed (%d): %s\n", rc, line);
    SX_CHECK(rc == 0);
    free(line);
    free(command);
}

/* Every problem, one a line, or "ok" when there is none (heap). */
static char *problems_text(sx_problems_t *problems)
{
    if (sx_problems_count(problems) == 0)
        return sx_strdup("ok");
    char *text = sx_strdup(sx_problems_get(problems, 0));
    for (size_t i = 1; i < sx_problems_count(problems); i++) {
        char *longer = sx_format("%s\n%s", text, sx_problems_get(problems, i));
        free(text);
        text = longer;
    }
    return text;
}

/* ---- the callers ---------------------------------------------------------- */

typedef enum {
    BOUNDARY,  /* sx_path_check_inside("ROOT|PATH" of arg) */
    TASK,      /* sx_task_check of join_max: its problems */
    LIST,      /* sx_bench_open(arg): task_ids.txt */
    SCORE,     /* sx_score_task of join_max, the candidate a copy of gold: what a
                  worker scores, reading task_ids.txt, gold and evaluation */
    PREDS,     /* sx_predictions_check(arg): no folder */
    CANDIDATE, /* sx_score_files with arg as the candidate CSV: no folder */
    SHIP,      /* sx_bench_file_check(arg): before a file goes to a worker */
    LISTING,   /* sx_bench_task_files of join_max, and whether the
                  fingerprint changed */
    QUESTION,  /* sx_report_question of join_max */
    PREVIEW,   /* sx_report_preview_read of gold/join_max.csv, gold/ its root */
} caller_t;

/* What join_max's files are without any change. */
#define LISTED                                                                           \
    "tasks/join_max/sources/auctions.csv;tasks/join_max/sources/bids.csv;"               \
    "tasks/join_max/task.json;gold/join_max.csv;evaluation/join_max.json;"
#define QUESTION_TEXT                                                                    \
    "For every auction, the highest bid price together with the auction's seller."

static void list_one(const char *rel, void *arg)
{
    FILE *out = arg;
    fprintf(out, "%s;", rel);
}

static char *listing(void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    SX_CHECK(out);
    sx_bench_task_files(s_opened, "join_max", list_one, out);
    char fingerprint[41];
    sx_bench_fingerprint(s_opened, fingerprint);
    if (strcmp(fingerprint, s_fingerprint) != 0)
        fprintf(out, " +fingerprint");
    fclose(out);
    return text;
}

static char *score_outcome(sx_status_t status, const char *detail)
{
    return detail[0] ? sx_format("%s: %s", sx_status_name(status), detail)
                     : sx_strdup(sx_status_name(status));
}

static char *preview_outcome(void)
{
    char *gold = sx_format("%s/gold/join_max.csv", s_bench);
    char *folder = sx_file_folder(gold);
    sx_report_preview_t preview;
    sx_report_preview_read(folder, gold, &preview);
    char *text = preview.table ? sx_format("%zu records", preview.table->count)
                               : sx_strdup(preview.error);
    sx_report_preview_clear(&preview);
    free(folder);
    free(gold);
    return text;
}

/* What `caller` makes of arg ({B} and {T} filled in) now (heap). */
static char *outcome(caller_t caller, const char *arg)
{
    char *filled = fill(arg ? arg : "");
    char detail[SX_ERROR_MAX] = "";
    sx_error_t err;
    sx_error_clear(&err);
    char *text = NULL;
    int strict = 0;
    switch (caller) {
    case BOUNDARY: {
        char *bar = strchr(filled, '|');
        SX_CHECK(bar);
        *bar = '\0';
        text =
            sx_strdup(sx_path_check_inside(filled, bar + 1, &err) == 0 ? "ok" : err.msg);
        break;
    }
    case TASK: {
        sx_problems_t *problems = sx_problems_new();
        sx_task_t *task = sx_task_check(s_bench, "join_max", problems);
        SX_CHECK((task != NULL) == (sx_problems_count(problems) == 0));
        text = problems_text(problems);
        sx_task_destroy(&task);
        sx_problems_destroy(&problems);
        break;
    }
    case LIST: {
        sx_bench_t *bench = sx_bench_open(filled, &err);
        text = sx_strdup(bench ? "ok" : err.msg);
        sx_bench_destroy(&bench);
        break;
    }
    case SCORE: {
        char *pred = fill("{T}/pred.csv");
        sx_status_t status =
            sx_score_task(s_bench, "join_max", pred, SX_PROFILE_SPIDER2_LITE_2025_11,
                          &strict, detail, sizeof detail);
        text = score_outcome(status, detail);
        free(pred);
        break;
    }
    case PREDS: {
        sx_problems_t *problems = sx_problems_new();
        sx_predictions_t *predictions = sx_predictions_check(filled, s_opened, problems);
        text = problems_text(problems);
        sx_predictions_destroy(&predictions);
        sx_problems_destroy(&problems);
        break;
    }
    case CANDIDATE: {
        char *gold = fill("{B}/gold/join_max.csv");
        char *spec = fill("{B}/evaluation/join_max.json");
        sx_evaluation_t *evaluation = sx_evaluation_load(spec, &err);
        SX_CHECK(evaluation);
        sx_status_t status =
            sx_score_files(gold, filled, evaluation, SX_PROFILE_SPIDER2_LITE_2025_11,
                           &strict, detail, sizeof detail);
        text = score_outcome(status, detail);
        sx_evaluation_destroy(&evaluation);
        free(spec);
        free(gold);
        break;
    }
    case SHIP:
        text =
            sx_strdup(sx_bench_file_check(s_opened, filled, &err) == 0 ? "ok" : err.msg);
        break;
    case LISTING:
        text = listing();
        break;
    case QUESTION: {
        sx_report_t report = {.bench = s_opened};
        char *question = sx_report_question(&report, "join_max");
        text = question ? question : sx_strdup("(none)");
        break;
    }
    case PREVIEW:
        text = preview_outcome();
        break;
    }
    free(filled);
    return text;
}

/* ---- the cases ------------------------------------------------------------ */

typedef struct {
    const char *setup; /* shell, in {B} */
    const char *undo;  /* shell, in {B} */
    caller_t caller;
    const char *arg;    /* what the caller is given */
    const char *before; /* the outcome before setup, or NULL: not asked */
    const char *want;   /* the outcome after it */
} edge_t;

#define GOLD "gold/join_max.csv"
#define KEEP_GOLD "mv " GOLD " gold/j.real && "
#define BACK_GOLD "rm -f " GOLD " && mv gold/j.real " GOLD
#define JM "{B}/tasks/join_max"
#define KEEP_BIDS "mv tasks/join_max/sources/bids.csv {T}/bids.keep && "
#define BACK_BIDS                                                                        \
    "rm -f tasks/join_max/sources/bids.csv && mv {T}/bids.keep "                         \
    "tasks/join_max/sources/bids.csv"
#define KEEP_JSON "cp tasks/join_max/task.json {T}/task.keep && "
#define BACK_JSON                                                                        \
    "rm -f tasks/join_max/task.json && mv {T}/task.keep tasks/join_max/task.json"
#define KEEP_IDS "mv task_ids.txt {T}/ids.keep && "
#define BACK_IDS "rm -f task_ids.txt && mv {T}/ids.keep task_ids.txt"
#define GOLD_ERROR "eval_error: cannot read gold: {B}/" GOLD
#define GOLD_SIBLING "ln -s ../gold2/join_max.csv " GOLD

static const edge_t s_edges[] = {
    /* The boundary check: a sibling sharing the prefix, the folder itself,
     * a root with a trailing slash, ".." in the path, the root "/", paths
     * that do not resolve. */
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold2/join_max.csv", NULL,
     "{B}/gold2/join_max.csv: a link to {B}/gold2/join_max.csv, outside {B}/gold" OUT},
    {"true", "true", BOUNDARY, "{B}/gold/|{B}/gold2/join_max.csv", NULL,
     "{B}/gold2/join_max.csv: a link to {B}/gold2/join_max.csv, outside {B}/gold/" OUT},
    {"true", "true", BOUNDARY, "{B}/tasks/join_max|{B}/tasks/join_maxb/notes.txt", NULL,
     "{B}/tasks/join_maxb/notes.txt: a link to {B}/tasks/join_maxb/notes.txt, outside " JM
         OUT},
    {"true", "true", BOUNDARY, "{B}|{T}/b2/task_ids.txt", NULL,
     "{T}/b2/task_ids.txt: a link to {T}/b2/task_ids.txt, outside {B}" OUT},
    {"true", "true", BOUNDARY, "{B}/gold|{B}", NULL,
     "{B}: a link to {B}, outside {B}/gold" OUT},
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold", NULL, "ok"},
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold/join_max.csv", NULL, "ok"},
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold/../gold/join_max.csv", NULL, "ok"},
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold/../gold2/join_max.csv", NULL,
     "{B}/gold/../gold2/join_max.csv: a link to {B}/gold2/join_max.csv, outside "
     "{B}/gold" OUT},
    {"true", "true", BOUNDARY, "/|{B}/gold/join_max.csv", NULL, "ok"},
    {"true", "true", BOUNDARY, "{B}/gold|{B}/gold/none.csv", NULL,
     "{B}/gold/none.csv: cannot resolve: No such file or directory"},
    {"true", "true", BOUNDARY, "{B}/none|{B}/gold/join_max.csv", NULL,
     "{B}/none: cannot resolve: No such file or directory"},

    /* A task's files: any other file, a source, task.json and a linked
     * folder leading into the sibling tasks/join_maxb/. */
    {"ln -s ../join_maxb/notes.txt tasks/join_max/notes.txt",
     "rm tasks/join_max/notes.txt", TASK, NULL, "ok",
     "task join_max: " JM
     "/notes.txt: a link to {B}/tasks/join_maxb/notes.txt, outside " JM OUT},
    {KEEP_BIDS "ln -s ../../join_maxb/bids.csv tasks/join_max/sources/bids.csv",
     BACK_BIDS, TASK, NULL, "ok",
     "task join_max: sources[0].file: " JM
     "/sources/bids.csv: a link to {B}/tasks/join_maxb/bids.csv, outside " JM OUT},
    {KEEP_JSON "rm tasks/join_max/task.json && ln -s ../join_maxb/task.json "
               "tasks/join_max/task.json",
     BACK_JSON, TASK, NULL, NULL,
     "task join_max: " JM
     "/task.json: a link to {B}/tasks/join_maxb/task.json, outside " JM OUT},
    {"ln -s ../join_maxb tasks/join_max/more", "rm tasks/join_max/more", TASK, NULL, NULL,
     "task join_max: " JM "/more: a link to {B}/tasks/join_maxb, outside " JM OUT},
    /* ".." in a source's file is refused as written; in a link it counts
     * where it ends. */
    {KEEP_JSON "sed -i 's#\"sources/bids.csv\"#\"sources/../sources/bids.csv\"#' "
               "tasks/join_max/task.json",
     BACK_JSON, TASK, NULL, NULL,
     "task join_max: sources[0].file: 'sources/../sources/bids.csv' leaves the task "
     "folder "
     "(..)"},
    {"ln -s ../join_max/sources/bids.csv tasks/join_max/alias.csv",
     "rm tasks/join_max/alias.csv", TASK, NULL, NULL, "ok"},
    {"ln -s ../../tasks/join_max/sources tasks/join_max/data", "rm tasks/join_max/data",
     TASK, NULL, NULL, "ok"},
    /* Chains: ending outside (named by where it ends), passing outside and
     * ending inside, and an absolute link ending inside. */
    {"ln -s {T}/outside/secret.csv {T}/hops/t2 && ln -s {T}/hops/t2 gold/hop.csv && "
     "ln -s ../../gold/hop.csv tasks/join_max/chain.txt",
     "rm {T}/hops/t2 gold/hop.csv tasks/join_max/chain.txt", TASK, NULL, NULL,
     "task join_max: " JM
     "/chain.txt: a link to {T}/outside/secret.csv, outside " JM OUT},
    {"ln -s {B}/tasks/join_max/sources/bids.csv {T}/hops/t3 && "
     "ln -s {T}/hops/t3 tasks/join_max/round.csv",
     "rm {T}/hops/t3 tasks/join_max/round.csv", TASK, NULL, NULL, "ok"},
    {"ln -s {B}/tasks/join_max/sources/bids.csv tasks/join_max/abs.csv",
     "rm tasks/join_max/abs.csv", TASK, NULL, NULL, "ok"},
    /* Loops inside the task folder are accepted; a link to the folder
     * holding the task folder leads outside it. */
    {"ln -s . tasks/join_max/loop && ln -s .. tasks/join_max/sources/back",
     "rm tasks/join_max/loop tasks/join_max/sources/back", TASK, NULL, NULL, "ok"},
    {"ln -s .. tasks/join_max/up", "rm tasks/join_max/up", TASK, NULL, NULL,
     "task join_max: " JM "/up: a link to {B}/tasks, outside " JM OUT},
    /* The task folder itself a link, inside the bench or out of it. */
    {"mv tasks/join_max shelf && ln -s ../shelf tasks/join_max",
     "rm tasks/join_max && mv shelf tasks/join_max", TASK, NULL, NULL, "ok"},
    {"mv tasks/join_max {T}/shelf && ln -s {T}/shelf tasks/join_max",
     "rm tasks/join_max && mv {T}/shelf tasks/join_max", TASK, NULL, NULL, "ok"},
    /* Names: a leading dash is a name like another; a newline, a space or
     * a name of 129 bytes cannot be shipped to a worker. */
    {"echo x >tasks/join_max/-x.txt", "rm tasks/join_max/-x.txt", TASK, NULL, NULL, "ok"},
    {"touch \"$(printf 'tasks/join_max/a\\nb.txt')\"", "rm tasks/join_max/a?b.txt", TASK,
     NULL, "ok", "task join_max: " JM "/a\\x0ab.txt" UNSAFE},
    {KEEP_JSON
     "mv tasks/join_max/sources/bids.csv 'tasks/join_max/sources/bids 1.csv' && "
     "sed -i 's#sources/bids.csv#sources/bids 1.csv#' tasks/join_max/task.json",
     BACK_JSON
     " && mv 'tasks/join_max/sources/bids 1.csv' tasks/join_max/sources/bids.csv",
     TASK, NULL, NULL, "task join_max: " JM "/sources/bids 1.csv" UNSAFE},
    {"mkdir 'tasks/join_max/my notes' && echo x >'tasks/join_max/my notes/n.txt'",
     "rm -r 'tasks/join_max/my notes'", TASK, NULL, NULL,
     "task join_max: " JM "/my notes" UNSAFE},
    {"touch tasks/join_max/$(printf 'n%.0s' $(seq 129))",
     "rm tasks/join_max/$(printf 'n%.0s' $(seq 129))", TASK, NULL, NULL,
     "task join_max: " JM
     "/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn..." UNSAFE},

    /* task_ids.txt: into the sibling bench {T}/b2, given as {B} or through
     * "..", a ".." that comes back, the bench a link, a link to the bench. */
    {KEEP_IDS "ln -s ../b2/task_ids.txt task_ids.txt", BACK_IDS, LIST, "{B}", "ok",
     "{B}/task_ids.txt: a link to {T}/b2/task_ids.txt, outside {B}" OUT},
    {KEEP_IDS "ln -s ../b2/task_ids.txt task_ids.txt", BACK_IDS, LIST, "{B}/../b", NULL,
     "{B}/../b/task_ids.txt: a link to {T}/b2/task_ids.txt, outside {B}/../b" OUT},
    {"mv task_ids.txt ids.real && ln -s tasks/../ids.real task_ids.txt",
     "rm task_ids.txt && mv ids.real task_ids.txt", LIST, "{B}", NULL, "ok"},
    {"ln -s b {T}/bench-link", "rm {T}/bench-link", LIST, "{T}/bench-link", NULL, "ok"},
    {KEEP_IDS "ln -s . task_ids.txt", BACK_IDS, LIST, "{B}", NULL,
     "{B}/task_ids.txt: a folder, not a regular file"},

    /* Gold and evaluation as a worker scores them (a copy of gold as the
     * candidate: a match whenever gold is read from where it should be). */
    {"true", "true", SCORE, NULL, NULL, "match"},
    {KEEP_GOLD GOLD_SIBLING, BACK_GOLD, SCORE, NULL, "match",
     GOLD_ERROR ": a link to {B}/gold2/join_max.csv, outside {B}/gold" OUT},
    {KEEP_GOLD "ln -s ../gold/j.real " GOLD, BACK_GOLD, SCORE, NULL, NULL, "match"},
    {KEEP_GOLD "ln -s ../../b/gold/j.real " GOLD, BACK_GOLD, SCORE, NULL, NULL, "match"},
    {KEEP_GOLD
     "ln -s {T}/outside/secret.csv {T}/hops/g2 && ln -s {T}/hops/g2 gold/hop.csv "
     "&& ln -s hop.csv " GOLD,
     BACK_GOLD " && rm {T}/hops/g2 gold/hop.csv", SCORE, NULL, NULL,
     GOLD_ERROR ": a link to {T}/outside/secret.csv, outside {B}/gold" OUT},
    {KEEP_GOLD "ln -s {B}/gold/j.real {T}/hops/g3 && ln -s {T}/hops/g3 " GOLD,
     BACK_GOLD " && rm {T}/hops/g3", SCORE, NULL, NULL, "match"},
    {KEEP_GOLD "ln -s {B}/gold/j.real " GOLD, BACK_GOLD, SCORE, NULL, NULL, "match"},
    {KEEP_GOLD "ln -s . " GOLD, BACK_GOLD, SCORE, NULL, NULL,
     GOLD_ERROR ": a folder, not a regular file"},
    {KEEP_GOLD "ln -s .. " GOLD, BACK_GOLD, SCORE, NULL, NULL,
     GOLD_ERROR ": a link to {B}, outside {B}/gold" OUT},
    {"mv gold gold_real && ln -s gold_real gold", "rm gold && mv gold_real gold", SCORE,
     NULL, NULL, "match"},
    {"mv gold {T}/gold_away && ln -s {T}/gold_away gold",
     "rm gold && mv {T}/gold_away gold", SCORE, NULL, NULL, "match"},
    /* gold/ a link to gold_real/, whose file leads into gold_real2/. */
    {"mv gold gold_real && ln -s gold_real gold && mkdir gold_real2 && "
     "cp gold2/join_max.csv gold_real2/ && mv gold_real/join_max.csv {T}/gold.keep && "
     "ln -s ../gold_real2/join_max.csv gold_real/join_max.csv",
     "rm gold gold_real/join_max.csv && rm -r gold_real2 && mv gold_real gold && "
     "mv {T}/gold.keep " GOLD,
     SCORE, NULL, NULL,
     GOLD_ERROR ": a link to {B}/gold_real2/join_max.csv, outside {B}/gold" OUT},
    {"mv evaluation/join_max.json {T}/eval.keep && "
     "ln -s ../evaluation2/join_max.json evaluation/join_max.json",
     "rm evaluation/join_max.json && mv {T}/eval.keep evaluation/join_max.json", SCORE,
     NULL, "match",
     "eval_error: {B}/evaluation/join_max.json: a link to {B}/evaluation2/join_max.json, "
     "outside {B}/evaluation" OUT},
    {"mv evaluation/join_max.json evaluation/e.real && "
     "ln -s {B}/evaluation/e.real evaluation/join_max.json",
     "rm evaluation/join_max.json && mv evaluation/e.real evaluation/join_max.json",
     SCORE, NULL, NULL, "match"},
    {KEEP_IDS "ln -s ../b2/task_ids.txt task_ids.txt", BACK_IDS, SCORE, NULL, NULL,
     "eval_error: {B}/task_ids.txt: a link to {T}/b2/task_ids.txt, outside {B}" OUT},

    /* Files named by the user have no folder: a link may lead anywhere,
     * but never to a FIFO. */
    {"ln -s {B}/predictions.jsonl {T}/hops/preds.jsonl", "rm {T}/hops/preds.jsonl", PREDS,
     "{T}/hops/preds.jsonl", NULL, "ok"},
    {"cp predictions.jsonl {T}/hops/-preds.jsonl", "rm {T}/hops/-preds.jsonl", PREDS,
     "{T}/hops/-preds.jsonl", NULL, "ok"},
    {"ln -s {T}/hops/pipe {T}/hops/p1 && ln -s {T}/hops/p1 {T}/hops/pipe.jsonl",
     "rm {T}/hops/p1 {T}/hops/pipe.jsonl", PREDS, "{T}/hops/pipe.jsonl", NULL,
     "{T}/hops/pipe.jsonl: a FIFO, not a regular file"},
    {"ln -s {T}/pred.csv {T}/hops/cand.csv", "rm {T}/hops/cand.csv", CANDIDATE,
     "{T}/hops/cand.csv", NULL, "match"},
    {"ln -s {T}/hops/pipe {T}/hops/cand.csv", "rm {T}/hops/cand.csv", CANDIDATE,
     "{T}/hops/cand.csv", NULL,
     "mismatch: cannot read prediction: {T}/hops/cand.csv: a FIFO, not a regular file"},

    /* Before a file is shipped: each against its own folder (BENCH/ for
     * task_ids.txt). */
    {"ln -s ../join_maxb/notes.txt tasks/join_max/notes.txt",
     "rm tasks/join_max/notes.txt", SHIP, "tasks/join_max/notes.txt", NULL,
     JM "/notes.txt: a link to {B}/tasks/join_maxb/notes.txt, outside " JM OUT},
    {KEEP_GOLD GOLD_SIBLING, BACK_GOLD, SHIP, GOLD, "ok",
     "{B}/" GOLD ": a link to {B}/gold2/join_max.csv, outside {B}/gold" OUT},
    {"mv evaluation/join_max.json {T}/eval.keep && "
     "ln -s ../evaluation2/join_max.json evaluation/join_max.json",
     "rm evaluation/join_max.json && mv {T}/eval.keep evaluation/join_max.json", SHIP,
     "evaluation/join_max.json", NULL,
     "{B}/evaluation/join_max.json: a link to {B}/evaluation2/join_max.json, outside "
     "{B}/evaluation" OUT},
    {KEEP_IDS "ln -s ../b2/task_ids.txt task_ids.txt", BACK_IDS, SHIP, "task_ids.txt",
     "ok", "{B}/task_ids.txt: a link to {T}/b2/task_ids.txt, outside {B}/" OUT},
    {KEEP_BIDS "cp {T}/bids.keep tasks/join_max/b.real && "
               "ln -s ../../join_max/b.real tasks/join_max/sources/bids.csv",
     BACK_BIDS " && rm tasks/join_max/b.real", SHIP, "tasks/join_max/sources/bids.csv",
     NULL, "ok"},

    /* What is shipped and fingerprinted: each file once, never a loop,
     * never a folder outside the task's. */
    {"true", "true", LISTING, NULL, NULL, LISTED},
    {"ln -s . tasks/join_max/loop && ln -s .. tasks/join_max/sources/back",
     "rm tasks/join_max/loop tasks/join_max/sources/back", LISTING, NULL, NULL, LISTED},
    {"ln -s .. tasks/join_max/up", "rm tasks/join_max/up", LISTING, NULL, NULL, LISTED},
    {"ln -s ../join_maxb tasks/join_max/more", "rm tasks/join_max/more", LISTING, NULL,
     NULL, LISTED},
    {"ln -s {T}/outside tasks/join_max/away", "rm tasks/join_max/away", LISTING, NULL,
     NULL, LISTED},
    {"mv tasks/join_max shelf && ln -s ../shelf tasks/join_max",
     "rm tasks/join_max && mv shelf tasks/join_max", LISTING, NULL, NULL, LISTED},
    {"touch \"$(printf 'tasks/join_max/a\\nb.txt')\"", "rm tasks/join_max/a?b.txt",
     LISTING, NULL, NULL, LISTED},
    {"echo x >tasks/join_max/-x.txt", "rm tasks/join_max/-x.txt", LISTING, NULL, NULL,
     "tasks/join_max/-x.txt;" LISTED " +fingerprint"},
    {"ln -s sources tasks/join_max/data", "rm tasks/join_max/data", LISTING, NULL, NULL,
     "tasks/join_max/data/auctions.csv;tasks/join_max/data/bids.csv;" LISTED
     " +fingerprint"},

    /* The report's question and gold preview. */
    {"true", "true", QUESTION, NULL, NULL, QUESTION_TEXT},
    {KEEP_JSON "rm tasks/join_max/task.json && ln -s ../join_maxb/task.json "
               "tasks/join_max/task.json",
     BACK_JSON, QUESTION, NULL, QUESTION_TEXT, "(none)"},
    {KEEP_JSON "rm tasks/join_max/task.json && mkfifo tasks/join_max/task.json",
     BACK_JSON, QUESTION, NULL, NULL, "(none)"},
    {"true", "true", PREVIEW, NULL, NULL, "3 records"},
    {KEEP_GOLD GOLD_SIBLING, BACK_GOLD, PREVIEW, NULL, "3 records",
     "{B}/" GOLD ": a link to {B}/gold2/join_max.csv, outside {B}/gold" OUT},
    {KEEP_GOLD "ln -s {T}/hops/pipe " GOLD, BACK_GOLD, PREVIEW, NULL, NULL,
     "{B}/" GOLD ": a link to {T}/hops/pipe, outside {B}/gold" OUT},
};

static bool expect(size_t i, const char *when, char *got, const char *pattern,
                   bool verbose)
{
    char *want = fill(pattern);
    bool same = strcmp(got, want) == 0;
    if (verbose || !same)
        fprintf(stderr, "edge %zu (%s): got  '%s'\n%*swant '%s'\n", i, when, got,
                (int)(strlen(when) + 12), "", want);
    free(want);
    free(got);
    return same;
}

static size_t test_edges(bool verbose)
{
    size_t failed = 0;
    size_t count = sizeof s_edges / sizeof s_edges[0];
    for (size_t i = 0; i < count; i++) {
        const edge_t *e = &s_edges[i];
        if (e->before &&
            !expect(i, "before", outcome(e->caller, e->arg), e->before, verbose))
            failed++;
        in_bench(e->setup);
        char *got = outcome(e->caller, e->arg);
        in_bench(e->undo);
        if (!expect(i, e->setup, got, e->want, verbose))
            failed++;
        /* Every case is undone: the bench reads as it did. */
        char *listed = listing();
        SX_CHECK(strcmp(listed, LISTED) == 0);
        free(listed);
    }
    return failed;
}

/* ---- the worker's result cache ------------------------------------------- */

/* A task's key digests its own files, never those of a task whose ID
 * starts with its own; an entry is a regular file: a link to a file out of
 * the cache or a FIFO is a miss, removed, its target untouched. */
static void test_result_cache(void)
{
    char *dir = fill("{T}/cache");
    sx_resultcache_t *cache = sx_resultcache_open(dir, "test runtime", NULL);
    SX_CHECK(cache);
    sx_msg_file_t own = {"tasks/join_max/task.json", "aa", 1};
    sx_msg_file_t both[] = {own, {"tasks/join_maxb/task.json", "bb", 1}};
    char key[41], other[41];
    sx_resultcache_key(cache, "join_max", 0, "SELECT 1", &own, 1, key);
    sx_resultcache_key(cache, "join_max", 0, "SELECT 1", both, 2, other);
    SX_CHECK(strcmp(key, other) == 0);
    sx_resultcache_key(cache, "join_maxb", 0, "SELECT 1", both, 2, other);
    SX_CHECK(strcmp(key, other) != 0);

    char *csv = fill("{T}/cache-out.csv");
    char *entry = sx_format("%s/v2/%.2s/%s", dir, key, key);
    SX_CHECK(sx_mkdirs_for(entry, NULL) == 0);
    const char *kinds[] = {"link", "fifo"};
    for (size_t i = 0; i < 2; i++) {
        char *target = fill(i == 0 ? "{T}/outside/secret.csv" : "{T}/hops/pipe");
        SX_CHECK(symlink(target, entry) == 0);
        sx_error_t err;
        sx_changelog_counts_t changelog;
        int rc = sx_resultcache_get(cache, key, csv, &changelog, &err);
        struct stat st;
        if (rc != 0)
            fprintf(stderr, "result cache, %s entry: %d\n", kinds[i], rc);
        SX_CHECK(rc == 0 && lstat(entry, &st) != 0 && access(csv, F_OK) != 0);
        SX_CHECK(stat(target, &st) == 0); /* the link went, not its target */
        free(target);
    }
    sx_resultcache_destroy(&cache);
    free(entry);
    free(csv);
    free(dir);
}

/* ---- the fixture ---------------------------------------------------------- */

static void make_fixture(void)
{
    const char *source_dir = getenv("SX_SOURCE_DIR");
    if (!source_dir)
        source_dir = SX_SOURCE_DIR;
    char temp[] = "/tmp/sx-test-inputrule-XXXXXX";
    SX_CHECK(mkdtemp(temp));
    SX_CHECK(realpath(temp, s_top));
    snprintf(s_bench, sizeof s_bench, "%s/b", s_top);
    char *copy = sx_format("cp -R '%s/tests/data/mini-bench' '%s'", source_dir, s_bench);
    SX_CHECK(system(copy) == 0);
    free(copy);
    /* Outside the bench, and beside each folder a sibling whose name
     * starts with the folder's: every file there holds SECRET. */
    in_bench(
        "mkdir {T}/outside {T}/hops {T}/b2 gold2 evaluation2 tasks/join_maxb && "
        "mkfifo {T}/hops/pipe && "
        "printf 'auction,seller,max_price\\n1," SECRET
        ",12.0\\n' >{T}/outside/secret.csv "
        "&& echo join_max >{T}/b2/task_ids.txt && "
        "cp {T}/outside/secret.csv gold2/join_max.csv && "
        "echo '{\"ignore_order\": false, \"answer_policy\": {\"kind\": \"ordinary\"}}' "
        ">evaluation2/join_max.json && echo " SECRET " >tasks/join_maxb/notes.txt && "
        "cp tasks/join_max/sources/bids.csv tasks/join_maxb/bids.csv && "
        "sed 's#\"question\": \"[^\"]*\"#\"question\": \"" SECRET "\"#' "
        "tasks/join_max/task.json >tasks/join_maxb/task.json && "
        "cp " GOLD " {T}/pred.csv");
    sx_error_t err;
    s_opened = sx_bench_open(s_bench, &err);
    SX_CHECK(s_opened);
    sx_bench_fingerprint(s_opened, s_fingerprint);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    make_fixture();
    size_t failed = test_edges(verbose);
    test_result_cache();
    sx_bench_destroy(&s_opened);
    char *remove = sx_format("rm -rf '%s'", s_top);
    SX_CHECK(system(remove) == 0);
    free(remove);
    size_t count = sizeof s_edges / sizeof s_edges[0];
    if (failed) {
        fprintf(stderr, "test_inputrule: %zu of %zu edges failed\n", failed, count);
        return 1;
    }
    printf("test_inputrule: OK (%zu edges, result cache)\n", count);
    return 0;
}
