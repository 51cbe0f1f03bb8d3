/* sqlparse.c: the SQL check held against Flink's own parser, through a real
 * SQL Gateway (tests/e2e/sqlparse.sh starts the pair). A session gets a
 * source `bids` and the sink `result` (datagen and blackhole: nothing runs),
 * then every line of the corpus, {"sql", "check", "flink", "why"}, goes:
 *   - to sx_sqlcheck, whose verdict must be `check` ("accept"/"reject");
 *   - for "flink": "parses", the statement the check would submit goes to
 *     Flink as EXPLAIN <statement>: it must parse and validate there, as
 *     exactly one INSERT into the sink (EXPLAIN takes one statement);
 *   - for "fails", the candidate as written goes to Flink as EXPLAIN
 *     <candidate>: Flink must refuse it too (it does not read it as one
 *     statement it would run), which shows the check's reading of comments,
 *     quotes and hints is Flink's;
 *   - "skip": statements Flink would run but the check refuses by policy.
 * Finally an OPTIONS hint is sent to Flink directly, bypassing the check:
 * Flink must refuse it (dynamic table options are off in every session),
 * the second wall behind the check. A discrepancy found is added to the
 * corpus. Exits 0 only when every line held.
 * usage: e2e_sqlparse GATEWAY_URL REST_URL CORPUS */
#include "worker/clients/gateway.h"
#include "worker/sql/sqlcheck.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_tables[] = {
    "CREATE TABLE bids (auction BIGINT, price DOUBLE, bidder STRING) WITH "
    "('connector'='datagen', 'number-of-rows'='10')",
    "CREATE TABLE `result` (auction BIGINT, note STRING) WITH ('connector'='blackhole')",
};

/* EXPLAIN statement in Flink: 0 parsed and validated, 1 refused as SQL
 * (reason in err), -1 the gateway failed. */
static int explain(sx_gateway_t *gw, const char *statement, sx_error_t *err)
{
    char *text = NULL;
    if (asprintf(&text, "EXPLAIN %s", statement) < 0)
        return sx_error_set(err, "out of memory");
    sx_gateway_rc_t rc = sx_gateway_execute(gw, text, NULL, err);
    free(text);
    return rc == SX_GATEWAY_OK ? 0 : rc == SX_GATEWAY_SQL_ERROR ? 1 : -1;
}

/* One corpus line; returns 0 when it held, 1 when not, -1 on infra trouble. */
static int run_case(sx_gateway_t *gw, size_t line, const json_t *item)
{
    const char *sql = json_string_value(json_object_get(item, "sql"));
    const char *check = json_string_value(json_object_get(item, "check"));
    const char *flink = json_string_value(json_object_get(item, "flink"));
    const char *why = json_string_value(json_object_get(item, "why"));
    if (!sql || !check || !flink || !why) {
        printf("FAIL line %zu: needs sql, check, flink and why\n", line);
        return 1;
    }
    sx_error_t err;
    sx_error_clear(&err);
    char *statement = sx_sqlcheck(sql, "result", &err);
    const char *verdict = statement ? "accept" : "reject";
    int rc = 0;
    if (strcmp(verdict, check) != 0) {
        printf("FAIL line %zu (%s): check says %s (%s), corpus says %s\n", line, why,
               verdict, statement ? "accepted" : err.msg, check);
        rc = 1;
    } else if (strcmp(flink, "parses") == 0) {
        int parsed = statement ? explain(gw, statement, &err) : 1;
        if (parsed != 0) {
            printf("%s line %zu (%s): check accepts, Flink refuses: %s\n",
                   parsed < 0 ? "ERROR" : "FAIL", line, why, err.msg);
            rc = parsed < 0 ? -1 : 1;
        }
    } else if (strcmp(flink, "fails") == 0) {
        int parsed = explain(gw, sql, &err);
        if (parsed != 1) {
            printf("%s line %zu (%s): Flink %s what the check rejects\n",
                   parsed < 0 ? "ERROR" : "FAIL", line, why,
                   parsed < 0 ? err.msg : "accepts");
            rc = parsed < 0 ? -1 : 1;
        }
    } else if (strcmp(flink, "skip") != 0) {
        printf("FAIL line %zu: flink must be parses, fails or skip\n", line);
        rc = 1;
    }
    if (rc == 0)
        printf("ok   line %zu: %s, Flink %s (%s)\n", line, verdict, flink, why);
    free(statement);
    return rc;
}

/* The second wall: an OPTIONS hint that got past the check is refused by
 * Flink itself, for dynamic table options being off. */
static int options_refused_by_flink(sx_gateway_t *gw)
{
    sx_error_t err;
    sx_error_clear(&err);
    int parsed = explain(gw,
                         "INSERT INTO `result` SELECT auction, bidder FROM bids "
                         "/*+ OPTIONS('number-of-rows'='1') */",
                         &err);
    if (parsed == 1 && strstr(err.msg, "dynamic-table-options")) {
        printf("ok   an OPTIONS hint reaching Flink is refused: %s\n", err.msg);
        return 0;
    }
    printf("FAIL an OPTIONS hint reaching Flink: %s\n",
           parsed == 0 ? "accepted" : err.msg);
    return parsed < 0 ? -1 : 1;
}

static int run_corpus(sx_gateway_t *gw, const char *corpus, size_t *cases, size_t *failed)
{
    FILE *in = fopen(corpus, "r");
    if (!in) {
        printf("ERROR %s: cannot open\n", corpus);
        return -1;
    }
    char *text = NULL;
    size_t capacity = 0, line = 0;
    int rc = 0;
    while (rc >= 0 && getline(&text, &capacity, in) >= 0) {
        line++;
        json_error_t error;
        json_t *item = json_loads(text, 0, &error);
        int held = item ? run_case(gw, line, item) : 1;
        if (!item)
            printf("FAIL %s:%zu: %s\n", corpus, line, error.text);
        json_decref(item);
        (*cases)++;
        *failed += held != 0;
        rc = held < 0 ? -1 : rc;
    }
    free(text);
    fclose(in);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: e2e_sqlparse GATEWAY_URL REST_URL CORPUS\n");
        return 2;
    }
    sx_error_t err;
    sx_error_clear(&err);
    sx_gateway_t *gw = sx_gateway_new(argv[1], argv[2], 30000, &err);
    if (!gw || sx_gateway_open_session(gw, "e2e-sqlparse", &err) != 0) {
        printf("ERROR %s\n", err.msg);
        sx_gateway_destroy(&gw);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof s_tables / sizeof s_tables[0] && rc == 0; i++)
        if (sx_gateway_execute(gw, s_tables[i], NULL, &err) != SX_GATEWAY_OK) {
            printf("ERROR %s: %s\n", s_tables[i], err.msg);
            rc = -1;
        }
    size_t cases = 0, failed = 0;
    if (rc == 0)
        rc = run_corpus(gw, argv[3], &cases, &failed);
    if (rc == 0) {
        int wall = options_refused_by_flink(gw);
        failed += wall != 0;
        rc = wall < 0 ? -1 : 0;
    }
    printf("%zu corpus statements, %zu failed\n", cases, failed);
    sx_gateway_close_session(gw, NULL);
    sx_gateway_destroy(&gw);
    return rc == 0 && failed == 0 ? 0 : 1;
}
