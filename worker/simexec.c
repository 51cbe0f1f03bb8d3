/* simexec.c: the simulated executor (see simexec.h). */
#include "worker/simexec.h"

#include "common/csv.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"

#include "common/log.h"

#include <czmq.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _sx_simexec_t {
    int delay_ms;
    char engine[80]; /* "simulated", or "simulated-NAME" (engine=NAME) */
    zlist_t *broken; /* task IDs that fail with infra_error (infra_error=ID);
                        read-only once made, walked without its cursor */
    atomic_int in_flight, most_at_once;
    atomic_int runs;
};

static int compare_ids(void *a, void *b)
{
    return strcmp(a, b);
}

sx_simexec_t *sx_simexec_new(const char *spec, sx_error_t *err)
{
    sx_simexec_t *self = sx_alloc(1, sizeof *self);
    self->delay_ms = 10;
    snprintf(self->engine, sizeof self->engine, "simulated");
    self->broken = zlist_new();
    zlist_autofree(self->broken);
    zlist_comparefn(self->broken, compare_ids);
    char *copy = sx_strdup(spec ? spec : "");
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        if (strncmp(item, "delay_ms=", 9) == 0) {
            long value = strtol(item + 9, &end, 10);
            if (*end == '\0' && end != item + 9 && value >= 0 && value <= 600000) {
                self->delay_ms = (int)value;
                continue;
            }
        }
        if (strncmp(item, "infra_error=", 12) == 0 && item[12]) {
            zlist_append(self->broken, item + 12);
            continue;
        }
        /* One word, as HELLO's runtime begins with it. The prefix first: an
         * item shorter than "engine=" has nothing past its seventh byte. */
        bool engine = strncmp(item, "engine=", 7) == 0;
        size_t name = engine ? strlen(item + 7) : 0;
        if (engine && name > 0 && name <= 64 &&
            strspn(item + 7, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789._/-") == name) {
            snprintf(self->engine, sizeof self->engine, "simulated-%s", item + 7);
            continue;
        }
        sx_error_set(err,
                     "--simulate '%s': unknown or bad item '%s' (expected delay_ms=N, "
                     "infra_error=ID or engine=NAME)",
                     spec, item);
        free(copy);
        sx_simexec_destroy(&self);
        return NULL;
    }
    free(copy);
    return self;
}

const char *sx_simexec_engine(const sx_simexec_t *self)
{
    return self->engine;
}

void sx_simexec_destroy(sx_simexec_t **self_p)
{
    sx_simexec_t *self = *self_p;
    if (!self)
        return;
    if (atomic_load(&self->runs) > 0)
        sx_info("simulated executor: %d task(s), at most %d at once",
                atomic_load(&self->runs), atomic_load(&self->most_at_once));
    zlist_destroy(&self->broken);
    free(self);
    *self_p = NULL;
}

/* zlist_exists leaves the list's cursor alone (zlist_first/next move it),
 * so several slots may ask at once. */
static bool is_broken(sx_simexec_t *self, const char *task_id)
{
    return zlist_exists(self->broken, (void *)task_id);
}

/* One more task in hand: the most at once is raised if this is a new high. */
static void count_in(sx_simexec_t *self)
{
    atomic_fetch_add(&self->runs, 1);
    int now = atomic_fetch_add(&self->in_flight, 1) + 1;
    int most = atomic_load(&self->most_at_once);
    while (now > most && !atomic_compare_exchange_weak(&self->most_at_once, &most, now))
        ;
}

int sx_simexec_most_at_once(const sx_simexec_t *self)
{
    return atomic_load(&self->most_at_once);
}

/* The status a marker asks for on this attempt. */
static sx_status_t wanted_status(const char *sql, int attempt)
{
    const char *marker = strstr(sql, "/*sim:");
    if (!marker)
        return SX_STATUS_MATCH;
    char name[64];
    if (sscanf(marker + 6, "%63[a-z_]", name) != 1)
        return SX_STATUS_MATCH;
    if (strcmp(name, "flaky") == 0)
        return attempt == 1 ? SX_STATUS_INFRA_ERROR : SX_STATUS_MATCH;
    sx_status_t status;
    return sx_status_parse(name, &status) == 0 ? status : SX_STATUS_MATCH;
}

/* The changelog of an append sink that wrote the CSV `data`: one insert per
 * data row (blank lines are none). */
static sx_changelog_counts_t appended(const char *data, size_t size)
{
    sx_changelog_counts_t counts = {.known = true};
    sx_csv_table_t *table = sx_csv_parse("simulated.csv", data, size, 0, NULL);
    for (size_t i = 1; table && i < table->count; i++)
        counts.rows += table->records[i].count > 0;
    sx_csv_table_destroy(&table);
    counts.records[SX_CHANGE_INSERT] = counts.rows;
    return counts;
}

void sx_simexec_run(void *ctx, const sx_exec_request_t *request, sx_result_t *result,
                    sx_timings_t *timings)
{
    sx_simexec_t *self = ctx;
    memset(timings, 0, sizeof *timings);
    if (!request->sql) {
        sx_result_init(result, request->task_id, SX_STATUS_MISSING_PREDICTION,
                       "no prediction", NULL);
        return;
    }
    bool slow = strstr(request->sql, "/*sim:slow*/") != NULL;
    count_in(self);
    zclock_sleep(self->delay_ms * (slow ? 10 : 1));
    atomic_fetch_sub(&self->in_flight, 1);
    timings->run = self->delay_ms / 1000.0;
    if (is_broken(self, request->task_id)) {
        sx_result_init(result, request->task_id, SX_STATUS_INFRA_ERROR,
                       "simulated infrastructure failure (infra_error=ID)", NULL);
        return;
    }
    sx_status_t status = wanted_status(request->sql, request->attempt);
    char gold[PATH_MAX];
    snprintf(gold, sizeof gold, "%s/gold/%s.csv", request->bench_dir, request->task_id);
    size_t size = 0;
    sx_error_t err;
    char *data = sx_file_read(gold, (size_t)1 << 30, &size, &err);
    if (data && strstr(request->sql, "/*sim:unstable*/")) {
        /* Another relation on every run: gold and one row of its own. */
        char *more = sx_format("%.*s%s%d\n", (int)size, data,
                               size && data[size - 1] != '\n' ? "\n" : "", rand());
        free(data);
        data = more;
        size = strlen(more);
    }
    bool wrote = data && sx_mkdirs_for(request->csv_path, &err) == 0 &&
                 sx_file_write_atomic(request->csv_path, data, size, &err) == 0;
    sx_changelog_counts_t changelog =
        wrote ? appended(data, size) : (sx_changelog_counts_t){0};
    free(data);
    if (!wrote) {
        sx_result_init(result, request->task_id, SX_STATUS_INFRA_ERROR, err.msg, NULL);
        return;
    }
    bool has_csv = status == SX_STATUS_MATCH || status == SX_STATUS_MISMATCH;
    sx_result_init(result, request->task_id, status, has_csv ? "" : "simulated failure",
                   has_csv ? request->csv_path : NULL);
    result->strict = status == SX_STATUS_MATCH; /* simulated: strict agrees */
    if (has_csv)
        result->changelog = changelog;
}

void sx_simexec_score(void *ctx, const sx_exec_request_t *request, sx_result_t *result)
{
    (void)ctx;
    bool mismatch = request->sql && strstr(request->sql, "/*sim:mismatch*/");
    sx_result_init(result, request->task_id,
                   mismatch ? SX_STATUS_MISMATCH : SX_STATUS_MATCH, "",
                   request->csv_path);
    result->strict = !mismatch;
}

void sx_simexec_test(bool verbose)
{
    (void)verbose;
    sx_error_t err;
    SX_CHECK(sx_simexec_new("delay_ms=x", &err) == NULL && strstr(err.msg, "delay_ms=x"));
    SX_CHECK(sx_simexec_new("color=red", &err) == NULL);
    /* An item shorter than "engine=" (ASan saw a read past it). */
    SX_CHECK(sx_simexec_new("fast", &err) == NULL && strstr(err.msg, "'fast'"));
    sx_simexec_t *sim = sx_simexec_new("delay_ms=0", NULL);
    SX_CHECK(sim);
    SX_CHECK(wanted_status("SELECT 1", 1) == SX_STATUS_MATCH);
    SX_CHECK(wanted_status("SELECT 1 /*sim:timeout*/", 1) == SX_STATUS_TIMEOUT);
    SX_CHECK(wanted_status("SELECT 1 /*sim:flaky*/", 1) == SX_STATUS_INFRA_ERROR);
    SX_CHECK(wanted_status("SELECT 1 /*sim:flaky*/", 2) == SX_STATUS_MATCH);
    char dir[] = "/tmp/sx-simexec-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[PATH_MAX], csv[PATH_MAX];
    snprintf(path, sizeof path, "%s/gold/t1.csv", dir);
    snprintf(csv, sizeof csv, "%s/out/t1.csv", dir);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0 &&
             sx_file_write_atomic(path, "a\n1\n", 4, NULL) == 0);
    sx_exec_request_t request = {dir, "t1", "SELECT a FROM s", 1, csv, NULL, 0};
    sx_result_t result;
    sx_timings_t timings;
    sx_simexec_run(sim, &request, &result, &timings);
    SX_CHECK(result.status == SX_STATUS_MATCH && result.csv && sx_file_exists(csv));
    /* gold's one row, inserted */
    SX_CHECK(result.changelog.known && result.changelog.rows == 1 &&
             result.changelog.records[SX_CHANGE_INSERT] == 1 &&
             result.changelog.records[SX_CHANGE_DELETE] == 0);
    sx_result_clear(&result);
    sx_simexec_score(sim, &request, &result); /* a cached CSV, scored again */
    SX_CHECK(result.status == SX_STATUS_MATCH && result.strict == 1 &&
             strcmp(result.csv, csv) == 0 && !result.changelog.known);
    sx_result_clear(&result);
    request.sql = "SELECT a FROM s /*sim:mismatch*/";
    sx_simexec_score(sim, &request, &result);
    SX_CHECK(result.status == SX_STATUS_MISMATCH && result.strict == 0);
    sx_result_clear(&result);
    request.sql = "SELECT a FROM s /*sim:timeout*/"; /* no final CSV, no changelog */
    sx_simexec_run(sim, &request, &result, &timings);
    SX_CHECK(result.status == SX_STATUS_TIMEOUT && !result.csv &&
             !result.changelog.known);
    sx_result_clear(&result);
    request.sql = "SELECT a FROM s";
    request.task_id = "t2"; /* no gold: the simulated run cannot produce a CSV */
    sx_simexec_run(sim, &request, &result, &timings);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR);
    sx_result_clear(&result);
    sx_simexec_destroy(&sim);
    /* An injected infrastructure failure: t1 fails whatever its SQL says. */
    sim = sx_simexec_new("delay_ms=0,infra_error=t1", NULL);
    SX_CHECK(sim);
    request.task_id = "t1";
    sx_simexec_run(sim, &request, &result, &timings);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR && !result.csv);
    sx_result_clear(&result);
    sx_simexec_destroy(&sim);
    SX_CHECK(sx_simexec_new("infra_error=", &err) == NULL);
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
