/* oracle.c: the BATCH oracle (see oracle.h). Everything Flink reads is
 * written here as JSON lines; the WITH clause of each DDL is found with the
 * shared SQL lexer, so strings and comments in the DDL cannot fool it. */
#include "worker/check/oracle.h"

#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "worker/exec/materialize.h"
#include "worker/exec/prepare.h"
#include "worker/sql/sqlcheck.h"
#include "worker/sql/sqllex.h"

#include <czmq.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How often the job's state is asked for while it runs. */
#define POLL_MS 200

/* Token index of the '(' after the top-level WITH, or -1. */
static long find_options(const sx_sqllex_t *lex)
{
    int depth = 0;
    for (size_t i = 0; i < sx_sqllex_count(lex); i++) {
        if (sx_sqllex_is_symbol(lex, i, '('))
            depth++;
        else if (sx_sqllex_is_symbol(lex, i, ')'))
            depth--;
        else if (depth == 0 && sx_sqllex_is_word(lex, i, "WITH") &&
                 sx_sqllex_is_symbol(lex, i + 1, '('))
            return (long)i + 1;
    }
    return -1;
}

/* Token index of the ')' closing the '(' at `open`, or -1. */
static long closing(const sx_sqllex_t *lex, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < sx_sqllex_count(lex); i++) {
        depth += sx_sqllex_is_symbol(lex, i, '(') - sx_sqllex_is_symbol(lex, i, ')');
        if (depth == 0)
            return (long)i;
    }
    return -1;
}

char *sx_oracle_filesystem_ddl(const char *ddl, const char *path, sx_error_t *err)
{
    if (strchr(path, '\'')) {
        sx_error_set(err, "%s: a quote in the work folder's path", path);
        return NULL;
    }
    sx_sqllex_t *lex = sx_sqllex_new(ddl, err);
    if (!lex)
        return NULL;
    long open = find_options(lex);
    long close = open < 0 ? -1 : closing(lex, (size_t)open);
    char *out = NULL;
    if (close < 0) {
        sx_error_set(err, "no WITH (...) options in the DDL");
    } else {
        size_t head = sx_sqllex_token(lex, (size_t)open)->start;
        const char *tail = ddl + sx_sqllex_token(lex, (size_t)close)->start + 1;
        out = sx_format(
            "%.*s('connector'='filesystem','path'='file://%s','format'='json')%s",
            (int)head, ddl, path, tail);
    }
    sx_sqllex_destroy(&lex);
    return out;
}

/* Writes the prepared records of `source` as JSON lines in dir/rows.json. */
static int write_rows(const char *task_id, const sx_source_t *source, const char *dir,
                      sx_error_t *err)
{
    sx_prepare_t *prepared = sx_prepare_new(task_id, source, err);
    if (!prepared)
        return -1;
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    for (size_t i = 0; stream && i < sx_prepare_count(prepared); i++)
        fprintf(stream, "%s\n", sx_prepare_value(prepared, i));
    int rc = stream && fclose(stream) == 0 ? 0 : sx_error_set(err, "out of memory");
    sx_prepare_destroy(&prepared);
    if (rc == 0) {
        char *path = sx_format("%s/rows.json", dir);
        rc = sx_mkdirs(dir, err) == 0 ? sx_file_write_atomic(path, text, size, err) : -1;
        free(path);
    }
    free(text);
    return rc;
}

/* Declares `ddl` over the filesystem folder `dir`. */
static sx_gateway_rc_t create_table(sx_gateway_t *gateway, const char *ddl,
                                    const char *dir, sx_error_t *err)
{
    char *statement = sx_oracle_filesystem_ddl(ddl, dir, err);
    if (!statement)
        return SX_GATEWAY_SQL_ERROR;
    sx_gateway_rc_t rc = sx_gateway_execute(gateway, statement, NULL, err);
    free(statement);
    return rc;
}

/* Waits for the job's end, at most timeout_s; a failed job is a SQL error
 * with its root cause, unless the cluster was at fault. */
static sx_gateway_rc_t wait_job(sx_gateway_t *gateway, const char *job_id, int timeout_s,
                                sx_error_t *err)
{
    for (long waited = 0; waited <= timeout_s * 1000L; waited += POLL_MS) {
        sx_job_state_t state;
        if (sx_gateway_job_state(gateway, job_id, &state, err) != 0)
            return SX_GATEWAY_INFRA_ERROR;
        if (state == SX_JOB_FINISHED)
            return SX_GATEWAY_OK;
        if (state == SX_JOB_FAILED || state == SX_JOB_CANCELED) {
            char cause[1024] = "";
            bool infra = false;
            sx_gateway_job_root_cause(gateway, job_id, cause, sizeof cause, &infra, err);
            sx_error_set(err, "the BATCH job failed: %s", cause);
            return infra ? SX_GATEWAY_INFRA_ERROR : SX_GATEWAY_SQL_ERROR;
        }
        zclock_sleep(POLL_MS);
    }
    sx_gateway_job_cancel(gateway, job_id, NULL);
    sx_error_set(err, "the BATCH job did not finish within %d s", timeout_s);
    return SX_GATEWAY_INFRA_ERROR;
}

/* Folds the JSON lines of every part file in `dir` into the final CSV. */
static int write_csv(const sx_task_t *task, const char *dir, const char *csv_path,
                     sx_error_t *err)
{
    sx_materialize_t *relation = sx_materialize_new(
        SX_CHANGELOG_APPEND, task->output_schema, task->output_column_count);
    DIR *folder = opendir(dir); /* absent when the job wrote no row */
    int rc = 0;
    int64_t offset = 0;
    for (struct dirent *entry; rc == 0 && folder && (entry = readdir(folder));) {
        if (entry->d_name[0] == '.' || entry->d_name[0] == '_')
            continue;
        char *path = sx_format("%s/%s", dir, entry->d_name);
        size_t size = 0, limit = 0; /* Flink's output files: a CSV's limit */
        char *text = NULL;
        if (sx_file_limit(SX_FILE_CSV, &limit, err) == 0)
            text = sx_file_read(path, limit, &size, err); /* err names the file */
        rc = text ? 0 : -1;
        free(path);
        for (char *line = text, *end; rc == 0 && line && *line; line = end + 1) {
            end = strchr(line, '\n');
            if (!end)
                end = line + strlen(line) - 1;
            size_t length = (size_t)(end - line) + (*end != '\n');
            rc = sx_materialize_apply(relation, offset++, NULL, 0, line, length, err);
        }
        free(text);
    }
    if (folder)
        closedir(folder);
    if (rc == 0)
        rc = sx_materialize_finish(relation, err);
    if (rc == 0)
        rc = sx_materialize_write(relation, csv_path, err);
    sx_materialize_destroy(&relation);
    return rc;
}

static sx_gateway_rc_t run_batch(sx_gateway_t *gateway, const sx_task_t *task,
                                 const char *statement, const char *work_dir,
                                 const char *csv_path, sx_error_t *err)
{
    sx_gateway_rc_t rc =
        sx_gateway_execute(gateway, "SET 'execution.runtime-mode' = 'batch'", NULL, err);
    char dir[4096];
    for (size_t i = 0; rc == SX_GATEWAY_OK && i < task->source_count; i++) {
        const sx_source_t *source = &task->sources[i];
        snprintf(dir, sizeof dir, "%s/source-%s", work_dir, source->name);
        rc = write_rows(task->task_id, source, dir, err) == 0
                 ? create_table(gateway, source->ddl, dir, err)
                 : SX_GATEWAY_SQL_ERROR;
    }
    snprintf(dir, sizeof dir, "%s/sink", work_dir);
    if (rc == SX_GATEWAY_OK)
        rc = create_table(gateway, task->sink_ddl, dir, err);
    char job_id[SX_JOB_ID_SIZE] = "";
    if (rc == SX_GATEWAY_OK)
        rc = sx_gateway_execute(gateway, statement, job_id, err);
    if (rc == SX_GATEWAY_OK)
        rc = wait_job(gateway, job_id, task->timeout_s, err);
    if (rc == SX_GATEWAY_OK && write_csv(task, dir, csv_path, err) != 0)
        rc = SX_GATEWAY_INFRA_ERROR;
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

sx_gateway_rc_t sx_oracle_batch(sx_gateway_t *gateway, const sx_task_t *task,
                                const char *sql, const char *work_dir,
                                const char *csv_path, sx_error_t *err)
{
    char *statement = sx_sqlcheck(sql, task->sink_name, err);
    if (!statement)
        return SX_GATEWAY_SQL_ERROR;
    sx_gateway_rc_t rc = SX_GATEWAY_INFRA_ERROR;
    if (sx_mkdirs(work_dir, err) == 0 &&
        sx_gateway_open_session(gateway, "streamex-doctor", err) == 0) {
        rc = run_batch(gateway, task, statement, work_dir, csv_path, err);
        sx_gateway_close_session(gateway, NULL);
    }
    nftw(work_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(statement);
    return rc;
}

/* ---- self-test ---------------------------------------------------------- */

static void test_filesystem_ddl_replaces_only_the_options(void)
{
    static const struct {
        const char *ddl;
        const char *want; /* NULL: an error */
    } cases[] = {
        {"CREATE TABLE s (a BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL "
         "'1' SECOND) WITH ('connector'='kafka','topic'='${topic}')",
         "CREATE TABLE s (a BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL "
         "'1' SECOND) WITH "
         "('connector'='filesystem','path'='file:///w/s','format'='json')"},
        {"create table `r` (k STRING, PRIMARY KEY (k) NOT ENFORCED) with ('a'='(', "
         "'b'=')') -- done",
         "create table `r` (k STRING, PRIMARY KEY (k) NOT ENFORCED) with "
         "('connector'='filesystem','path'='file:///w/s','format'='json') -- done"},
        {"CREATE TABLE s (c STRING COMMENT 'WITH (x)') WITH ('connector'='kafka')",
         "CREATE TABLE s (c STRING COMMENT 'WITH (x)') WITH "
         "('connector'='filesystem','path'='file:///w/s','format'='json')"},
        {"CREATE TABLE s (a INT)", NULL},
        {"CREATE TABLE s (a INT) WITH ('x'='y'", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sx_error_t err;
        sx_error_clear(&err);
        char *got = sx_oracle_filesystem_ddl(cases[i].ddl, "/w/s", &err);
        SX_CHECK(cases[i].want ? got && strcmp(got, cases[i].want) == 0
                               : !got && sx_error_is_set(&err));
        free(got);
    }
    sx_error_t err;
    SX_CHECK(!sx_oracle_filesystem_ddl("CREATE TABLE s (a INT) WITH ()", "/it's", &err));
}

void sx_oracle_test(bool verbose)
{
    (void)verbose;
    test_filesystem_ddl_replaces_only_the_options();
}
