/* hazards.c: known Flink streaming hazards in a task's inputs (see
 * hazards.h). The watermark is read with the shared SQL lexer, so comments
 * and strings in the DDL cannot fool it; event times come from the prepared
 * records, already sorted for replay, so ties are neighbours. */
#include "worker/check/hazards.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "worker/sql/sqllex.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* True when token i is the identifier `column` (plain or `quoted`). */
static bool is_column(const sx_sqllex_t *lex, size_t i, const char *column)
{
    const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
    if (!token ||
        (token->kind != SX_SQLTOKEN_WORD && token->kind != SX_SQLTOKEN_QUOTED_ID))
        return false;
    char *name = sx_sqllex_value(lex, i);
    bool same = name && strcasecmp(name, column) == 0;
    free(name);
    return same;
}

/* True when token i ends the watermark expression: ',' or ')' at depth 0. */
static bool ends_expression(const sx_sqllex_t *lex, size_t i)
{
    return !sx_sqllex_token(lex, i) || sx_sqllex_is_symbol(lex, i, ',') ||
           sx_sqllex_is_symbol(lex, i, ')');
}

/* True when tokens from i are "- INTERVAL '0...' UNIT" up to the end of the
 * expression: a zero interval (every digit of the string is 0). */
static bool is_zero_interval(const sx_sqllex_t *lex, size_t i)
{
    if (!sx_sqllex_is_symbol(lex, i, '-') || !sx_sqllex_is_word(lex, i + 1, "INTERVAL"))
        return false;
    const sx_sqltoken_t *amount = sx_sqllex_token(lex, i + 2);
    if (!amount || amount->kind != SX_SQLTOKEN_STRING)
        return false;
    char *text = sx_sqllex_value(lex, i + 2);
    bool zero = text && text[strspn(text, "0.: ")] == '\0';
    free(text);
    return zero && sx_sqllex_token(lex, i + 3) && ends_expression(lex, i + 4);
}

bool sx_hazards_zero_delay(const char *ddl)
{
    sx_error_t err;
    sx_sqllex_t *lex = sx_sqllex_new(ddl, &err);
    bool zero = false;
    for (size_t i = 0; lex && i < sx_sqllex_count(lex) && !zero; i++) {
        if (!sx_sqllex_is_word(lex, i, "WATERMARK") ||
            !sx_sqllex_is_word(lex, i + 1, "FOR") || !sx_sqllex_is_word(lex, i + 3, "AS"))
            continue;
        char *column = sx_sqllex_value(lex, i + 2);
        zero = column && is_column(lex, i + 4, column) &&
               (ends_expression(lex, i + 5) || is_zero_interval(lex, i + 5));
        free(column);
    }
    sx_sqllex_destroy(&lex);
    return zero;
}

void sx_hazards_source(const char *task_id, const sx_source_t *source,
                       const sx_prepare_t *prepared, sx_problems_t *warnings)
{
    if (source->kind != SX_SOURCE_LIVE || !source->event_time)
        return;
    size_t count = sx_prepare_count(prepared), before_1970 = 0, ties = 0;
    for (size_t i = 0; i < count; i++) {
        before_1970 += sx_prepare_timestamp(prepared, i) < 0;
        ties += i > 0 && sx_prepare_timestamp(prepared, i) ==
                             sx_prepare_timestamp(prepared, i - 1);
    }
    if (before_1970 > 0)
        sx_problems_add(warnings,
                        "task %s: source %s: %zu of %zu event times are before 1970: "
                        "Flink streaming drops interval-join matches of such rows and "
                        "may lose their windows, so the result can differ from run to "
                        "run and from batch",
                        task_id, source->name, before_1970, count);
    if (ties > 0 && sx_hazards_zero_delay(source->ddl))
        sx_problems_add(warnings,
                        "task %s: source %s: the watermark has zero delay and %zu rows "
                        "share their event time (%s) with an earlier row: rows equal to "
                        "the watermark count as late, so the result depends on timing "
                        "(give the watermark a delay)",
                        task_id, source->name, ties, source->event_time);
}

/* ---- the engine hazards of a query ------------------------------------- */

static const struct {
    sx_engine_hazard_t flag;
    const char *text;
} s_engine_hazards[SX_ENGINE_HAZARDS] = {
    {SX_HAZARD_QUALIFY, "QUALIFY: Flink 2.x accepts it, Flink 1.20 refuses it (a parse "
                        "error), so the verdict depends on the engine"},
    {SX_HAZARD_UNBOUNDED_OVER,
     "an OVER aggregation over an unbounded frame: Flink 2.x computes it with another "
     "operator by default (table.exec.unbounded-over.version 2) and accepts an ORDER BY "
     "that is not the time attribute, which Flink 1.20 refuses, so the result or the "
     "verdict can depend on the engine"},
    {SX_HAZARD_TOP1_RANK,
     "a Top-1 ordered by something other than one time attribute: over an append-only "
     "input Flink 2.2.1 takes it for insert-only and never retracts a replaced row, "
     "where Flink 1.20 does, so the final relation can depend on the engine"},
};

sx_engine_hazard_t sx_hazards_engine_flag(int i)
{
    return s_engine_hazards[i].flag;
}

const char *sx_hazards_engine_text(int i)
{
    return s_engine_hazards[i].text;
}

/* The token that closes the bracket opened at `open` (the last one when it
 * is never closed). */
static size_t closing(const sx_sqllex_t *lex, size_t open)
{
    size_t depth = 0, i = open;
    for (; i < sx_sqllex_count(lex); i++) {
        depth += sx_sqllex_is_symbol(lex, i, '(');
        if (sx_sqllex_is_symbol(lex, i, ')') && --depth == 0)
            return i;
    }
    return i;
}

/* The bracket that opens the one closed at `close`, or SIZE_MAX. */
static size_t opening(const sx_sqllex_t *lex, size_t close)
{
    size_t depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
        depth += sx_sqllex_is_symbol(lex, i, ')');
        if (sx_sqllex_is_symbol(lex, i, '(') && --depth == 0)
            return i;
    }
    return SIZE_MAX;
}

/* Whether the window spec in tokens (from, to) has an unbounded frame: says
 * UNBOUNDED PRECEDING, or orders without ROWS or RANGE. */
static bool unbounded_spec(const sx_sqllex_t *lex, size_t from, size_t to)
{
    bool ordered = false, framed = false;
    for (size_t i = from + 1; i < to; i++) {
        if (sx_sqllex_is_word(lex, i, "UNBOUNDED") &&
            sx_sqllex_is_word(lex, i + 1, "PRECEDING"))
            return true;
        ordered |= sx_sqllex_is_word(lex, i, "ORDER");
        framed |= sx_sqllex_is_word(lex, i, "ROWS") || sx_sqllex_is_word(lex, i, "RANGE");
    }
    return ordered && !framed;
}

/* The opening bracket of the spec of the window named at token `name`
 * (`WINDOW name AS (...)`, or `, name AS (...)` after it), or SIZE_MAX. */
static size_t named_spec(const sx_sqllex_t *lex, size_t name)
{
    char *wanted = sx_sqllex_value(lex, name);
    size_t found = SIZE_MAX;
    for (size_t i = 1; wanted && i + 2 < sx_sqllex_count(lex) && found == SIZE_MAX; i++)
        if (i != name && is_column(lex, i, wanted) &&
            sx_sqllex_is_word(lex, i + 1, "AS") && sx_sqllex_is_symbol(lex, i + 2, '(') &&
            (sx_sqllex_is_word(lex, i - 1, "WINDOW") ||
             sx_sqllex_is_symbol(lex, i - 1, ',')))
            found = i + 2;
    free(wanted);
    return found;
}

/* Whether the OVER at token i aggregates over an unbounded frame. */
static bool unbounded_over(const sx_sqllex_t *lex, size_t i)
{
    static const char *const ranking[] = {"ROW_NUMBER", "RANK", "DENSE_RANK"};
    size_t call =
        i > 0 && sx_sqllex_is_symbol(lex, i - 1, ')') ? opening(lex, i - 1) : SIZE_MAX;
    for (size_t r = 0; call != SIZE_MAX && call > 0 && r < 3; r++)
        if (sx_sqllex_is_word(lex, call - 1, ranking[r]))
            return false;
    size_t open = sx_sqllex_is_symbol(lex, i + 1, '(') ? i + 1 : named_spec(lex, i + 1);
    return open != SIZE_MAX && unbounded_spec(lex, open, closing(lex, open));
}

/* Whether the ORDER BY items in tokens [from, to) are one time attribute of
 * the task (a live source's event time), ASC or DESC: a deduplication. */
static bool orders_by_time(const sx_sqllex_t *lex, size_t from, size_t to,
                           const sx_task_t *task)
{
    char *parts[4] = {0};
    size_t count = 0;
    size_t next = sx_sqllex_name(lex, from, to, parts, &count);
    if (next < to &&
        (sx_sqllex_is_word(lex, next, "ASC") || sx_sqllex_is_word(lex, next, "DESC")))
        next++;
    bool time = false;
    for (size_t s = 0; count && next == to && task && s < task->source_count; s++)
        time |= task->sources[s].event_time &&
                strcasecmp(task->sources[s].event_time, parts[count - 1]) == 0;
    for (size_t p = 0; p < count; p++)
        free(parts[p]);
    return time;
}

/* Whether tokens from i say "= 1", "<= 1" or "< 2": a Top-1's filter. */
static bool keeps_first(const sx_sqllex_t *lex, size_t i)
{
    return (sx_sqllex_is_symbol(lex, i, '=') && sx_sqllex_is_word(lex, i + 1, "1")) ||
           (sx_sqllex_is_symbol(lex, i, '<') && sx_sqllex_is_symbol(lex, i + 1, '=') &&
            sx_sqllex_is_word(lex, i + 2, "1")) ||
           (sx_sqllex_is_symbol(lex, i, '<') && sx_sqllex_is_word(lex, i + 1, "2"));
}

/* Whether the ROW_NUMBER at token i is a Top-1 Rank (SX_HAZARD_TOP1_RANK):
 * kept where it is 1, compared in place (QUALIFY) or by its alias, and not
 * ordered by one time attribute. */
static bool top1_rank(const sx_sqllex_t *lex, size_t i, const sx_task_t *task)
{
    if (!sx_sqllex_is_symbol(lex, i + 1, '(') || !sx_sqllex_is_symbol(lex, i + 2, ')') ||
        !sx_sqllex_is_word(lex, i + 3, "OVER") || !sx_sqllex_is_symbol(lex, i + 4, '('))
        return false;
    size_t close = closing(lex, i + 4), order = SIZE_MAX;
    for (size_t j = i + 5; j + 1 < close && order == SIZE_MAX; j++)
        if (sx_sqllex_is_word(lex, j, "ORDER") && sx_sqllex_is_word(lex, j + 1, "BY"))
            order = j + 2;
    if (order == SIZE_MAX || orders_by_time(lex, order, close, task))
        return false;
    if (keeps_first(lex, close + 1))
        return true;
    size_t alias = close + 1 + sx_sqllex_is_word(lex, close + 1, "AS");
    char *name = sx_sqllex_value(lex, alias);
    bool kept = false;
    for (size_t j = alias + 1; name && j < sx_sqllex_count(lex) && !kept; j++)
        kept = is_column(lex, j, name) && keeps_first(lex, j + 1);
    free(name);
    return kept;
}

unsigned sx_hazards_engine(const char *sql, const sx_task_t *task)
{
    sx_error_t err;
    sx_sqllex_t *lex = sx_sqllex_new(sql, &err);
    unsigned found = 0;
    for (size_t i = 0; lex && i < sx_sqllex_count(lex); i++) {
        if (sx_sqllex_is_word(lex, i, "QUALIFY"))
            found |= SX_HAZARD_QUALIFY;
        if (sx_sqllex_is_word(lex, i, "OVER") && unbounded_over(lex, i))
            found |= SX_HAZARD_UNBOUNDED_OVER;
        if (sx_sqllex_is_word(lex, i, "ROW_NUMBER") && top1_rank(lex, i, task))
            found |= SX_HAZARD_TOP1_RANK;
    }
    sx_sqllex_destroy(&lex);
    return found;
}

/* ---- self-test ---------------------------------------------------------- */

static void test_zero_delay_is_read_from_the_ddl(void)
{
    static const struct {
        const char *ddl;
        bool zero;
    } cases[] = {
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ()", true},
        {"CREATE TABLE s (`ts` TIMESTAMP(3), watermark for `TS` as ts, x INT)", true},
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '0' SECOND)",
         true},
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '0.000' "
         "SECOND)",
         true},
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)",
         false},
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '0.5' "
         "SECOND)",
         false},
        {"CREATE TABLE s (ts TIMESTAMP(3), other TIMESTAMP(3), WATERMARK FOR ts AS "
         "other)",
         false},
        /* On a computed column, as with epoch_ms event times. */
        {"CREATE TABLE s (t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3), WATERMARK FOR ts AS "
         "ts)",
         true},
        {"CREATE TABLE s (ts TIMESTAMP(3)) COMMENT 'WATERMARK FOR ts AS ts'", false},
        {"CREATE TABLE s (ts TIMESTAMP(3) /* WATERMARK FOR ts AS ts */)", false},
        {"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts", true},
        {"CREATE TABLE s ('unterminated", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        SX_CHECK(sx_hazards_zero_delay(cases[i].ddl) == cases[i].zero);
}

/* Writes rows to a CSV and prepares it as a live source named s. */
static sx_prepare_t *prepare_rows(const char *dir, const char *rows, const char *ddl,
                                  sx_source_t *source, sx_column_t *columns)
{
    char path[256];
    snprintf(path, sizeof path, "%s/s.csv", dir);
    FILE *out = fopen(path, "w");
    SX_CHECK(out && fputs(rows, out) >= 0 && fclose(out) == 0);
    *source = (sx_source_t){.name = "s",
                            .kind = SX_SOURCE_LIVE,
                            .file = "s.csv",
                            .path = sx_strdup(path),
                            .columns = columns,
                            .column_count = 1,
                            .event_time = "ts",
                            .ddl = (char *)ddl};
    sx_error_t err;
    sx_prepare_t *prepared = sx_prepare_new("t1", source, &err);
    SX_CHECK(prepared);
    return prepared;
}

static void test_warnings_name_task_and_source(void)
{
    char dir[] = "/tmp/sx_hazards_XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_column_t columns[] = {{.name = "ts",
                              .from = "ts",
                              .time_from = SX_TIME_EPOCH_S,
                              .time_to = SX_TIME_TO_SQL}};
    static const struct {
        const char *rows;
        const char *ddl;
        const char *warning; /* a piece of the one warning, or NULL for none */
    } cases[] = {
        {"ts\n10\n10\n20\n", "CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts)",
         "task t1: source s: the watermark has zero delay and 1 rows share their event "
         "time (ts)"},
        {"ts\n10\n11\n", "CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts)",
         NULL},
        {"ts\n10\n10\n",
         "CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)",
         NULL},
        {"ts\n-5\n10\n-1.5\n",
         "CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)",
         "task t1: source s: 2 of 3 event times are before 1970"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sx_source_t source;
        sx_prepare_t *prepared =
            prepare_rows(dir, cases[i].rows, cases[i].ddl, &source, columns);
        sx_problems_t *warnings = sx_problems_new();
        sx_hazards_source("t1", &source, prepared, warnings);
        SX_CHECK(sx_problems_count(warnings) == (cases[i].warning ? 1u : 0u));
        if (cases[i].warning)
            SX_CHECK(strstr(sx_problems_get(warnings, 0), cases[i].warning) != NULL);
        source.kind = SX_SOURCE_STATIC; /* static sources are never replayed */
        sx_hazards_source("t1", &source, prepared, warnings);
        SX_CHECK(sx_problems_count(warnings) == (cases[i].warning ? 1u : 0u));
        sx_problems_destroy(&warnings);
        sx_prepare_destroy(&prepared);
        unlink(source.path);
        free(source.path);
    }
    rmdir(dir);
}

static void test_engine_hazards_are_read_from_the_sql(void)
{
    static const struct {
        const char *sql;
        unsigned hazards;
    } cases[] = {
        {"INSERT INTO s SELECT k, v FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY k "
         "ORDER BY ts DESC) = 1",
         SX_HAZARD_QUALIFY | SX_HAZARD_TOP1_RANK}, /* ts: no task says it is time */
        {"insert into s select * from t qualify rank() over (order by v) <= 3",
         SX_HAZARD_QUALIFY},
        {"INSERT INTO s SELECT 'QUALIFY' FROM t /* QUALIFY */ -- QUALIFY", 0},
        {"INSERT INTO s SELECT `qualify` FROM t", 0},
        /* Dedup and Top-N rank; they are not OVER aggregations. */
        {"INSERT INTO s SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER "
         "BY ts) AS rn FROM t) WHERE rn = 2",
         0},
        {"INSERT INTO s SELECT *, DENSE_RANK() OVER (ORDER BY v DESC) FROM t", 0},
        /* Unbounded frames, said or by default, by name or inline. */
        {"INSERT INTO s SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN "
         "UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
         SX_HAZARD_UNBOUNDED_OVER},
        {"INSERT INTO s SELECT k, COUNT(*) OVER (PARTITION BY k ORDER BY ts) FROM t",
         SX_HAZARD_UNBOUNDED_OVER},
        {"INSERT INTO s SELECT id, SUM(v) OVER w AS s FROM ev WINDOW w AS (PARTITION BY "
         "k "
         "ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
         SX_HAZARD_UNBOUNDED_OVER},
        {"INSERT INTO s SELECT SUM(v) OVER w FROM ev WINDOW x AS (ORDER BY ts ROWS "
         "BETWEEN "
         "1 PRECEDING AND CURRENT ROW), w AS (ORDER BY ts)",
         SX_HAZARD_UNBOUNDED_OVER},
        /* Bounded frames are computed alike. */
        {"INSERT INTO s SELECT id, SUM(v) OVER w FROM ev WINDOW w AS (PARTITION BY k "
         "ORDER "
         "BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
         0},
        {"INSERT INTO s SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN "
         "INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) FROM t",
         0},
        {"INSERT INTO s SELECT SUM(v) OVER (PARTITION BY k) FROM t", 0},
        {"INSERT INTO s SELECT SUM(v) OVER w FROM t", 0}, /* no such window */
        {"INSERT INTO s SELECT SUM(v) OVER (ORDER BY ts", SX_HAZARD_UNBOUNDED_OVER},
        {"OVER", 0},
        {"INSERT INTO s SELECT 'unterminated", 0},
        {"INSERT INTO s SELECT SUM(v) OVER (ORDER BY v) FROM t QUALIFY SUM(v) OVER "
         "(ORDER "
         "BY v) > 1",
         SX_HAZARD_QUALIFY | SX_HAZARD_UNBOUNDED_OVER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned got = sx_hazards_engine(cases[i].sql, NULL);
        if (got != cases[i].hazards)
            fprintf(stderr, "%s: hazards %u, expected %u\n", cases[i].sql, got,
                    cases[i].hazards);
        SX_CHECK(got == cases[i].hazards);
    }
    for (int i = 0; i < SX_ENGINE_HAZARDS; i++)
        SX_CHECK(sx_hazards_engine_flag(i) == 1u << i &&
                 strlen(sx_hazards_engine_text(i)));
}

/* A Top-1 is a hazard unless it orders by one time attribute (the task's
 * live sources' event times): then it is a deduplication. */
static void test_top1_rank_is_told_from_a_deduplication(void)
{
    sx_source_t sources[] = {{.name = "ev", .kind = SX_SOURCE_LIVE, .event_time = "ts"},
                             {.name = "dim", .kind = SX_SOURCE_STATIC}};
    sx_task_t task = {.task_id = "t1", .sources = sources, .source_count = 2};
    static const struct {
        const char *sql;
        bool hazard;
    } cases[] = {
        /* The differential's top_n shape with n = 1 (2.2.1 plans it insert-only). */
        {"SELECT k, id, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER "
         "BY v DESC, id) AS rn FROM ev) WHERE rn <= 1",
         true},
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY qty DESC) "
         "rn FROM ev) WHERE rn = 1",
         true},
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v) AS rn FROM ev) WHERE "
         "rn < 2",
         true},
        {"SELECT k, v FROM ev QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) = 1",
         true},
        /* Deduplications: one time attribute, either way, qualified or not. */
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) "
         "AS rn FROM ev) WHERE rn = 1",
         false},
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY e.`TS`) "
         "AS rn FROM ev e) WHERE rn <= 1",
         false},
        /* Not a Top-1. */
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) "
         "AS rn FROM ev) WHERE rn <= 2",
         false},
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) "
         "AS rn FROM ev) WHERE rn = 10",
         false},
        {"SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM ev", false},
        {"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k) AS rn FROM ev) "
         "WHERE rn = 1",
         false},
        {"SELECT ROW_NUMBER FROM ev WHERE x = 1", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned got = sx_hazards_engine(cases[i].sql, &task) & SX_HAZARD_TOP1_RANK;
        if ((got != 0) != cases[i].hazard)
            fprintf(stderr, "%s: Top-1 hazard %u\n", cases[i].sql, got);
        SX_CHECK((got != 0) == cases[i].hazard);
    }
    /* Without the task no ORDER BY is known to be a time attribute. */
    SX_CHECK(sx_hazards_engine(cases[4].sql, NULL) == SX_HAZARD_TOP1_RANK);
}

void sx_hazards_test(bool verbose)
{
    (void)verbose;
    test_engine_hazards_are_read_from_the_sql();
    test_top1_rank_is_told_from_a_deduplication();
    test_zero_delay_is_read_from_the_ddl();
    test_warnings_name_task_and_source();
}
