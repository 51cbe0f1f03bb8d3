/* sqlcheck.c: the candidate check of docs/predictions.md (see sqlcheck.h). The
 * candidate is lexed once with the shared lexer; statements are split on ';'
 * tokens, so separators inside strings, identifiers and comments never
 * count. The single statement left is classified by its first tokens, and
 * every hint in it is searched for OPTIONS(...). */
#include "worker/sql/sqlcheck.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "worker/sql/sqllex.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A statement: tokens [first, end) of the lexed candidate. */
typedef struct {
    size_t first;
    size_t end;
} span_t;

/* Finds the one non-empty statement; rejects none or several. */
static int single_statement(const sx_sqllex_t *lex, span_t *statement, sx_error_t *err)
{
    size_t statements = 0, first = 0;
    size_t count = sx_sqllex_count(lex);
    for (size_t i = 0; i <= count; i++) {
        if (i < count && !sx_sqllex_is_symbol(lex, i, ';'))
            continue;
        if (i > first) {
            statements++;
            *statement = (span_t){first, i};
        }
        first = i + 1;
    }
    if (statements == 0)
        return sx_error_set(err, "rejected: empty SQL");
    if (statements > 1)
        return sx_error_set(err, "rejected: %zu statements", statements);
    return 0;
}

/* True when token i names a hint OPTIONS: Calcite reads a hint name as an
 * identifier, so `OPTIONS` in backquotes is the same hint, and hint names
 * are matched ignoring case. */
static bool is_options_name(const sx_sqllex_t *lex, size_t i)
{
    sx_sqltoken_kind_t kind = sx_sqllex_token(lex, i)->kind;
    if (kind != SX_SQLTOKEN_WORD && kind != SX_SQLTOKEN_QUOTED_ID)
        return false;
    char *name = sx_sqllex_value(lex, i);
    bool options = name && strcasecmp(name, "OPTIONS") == 0;
    free(name);
    return options;
}

/* Rejects any OPTIONS hint: dynamic table options would let a candidate
 * change the registered tables (docs/predictions.md). A hint is a list of
 * NAME [(...)] items; only names (outside the parentheses) count. */
static int check_hints(const sx_sqllex_t *lex, span_t statement, sx_error_t *err)
{
    bool in_hint = false;
    int depth = 0;
    for (size_t i = statement.first; i < statement.end; i++) {
        sx_sqltoken_kind_t kind = sx_sqllex_token(lex, i)->kind;
        if (kind == SX_SQLTOKEN_HINT_START || kind == SX_SQLTOKEN_HINT_END) {
            in_hint = kind == SX_SQLTOKEN_HINT_START;
            depth = 0;
        } else if (in_hint && sx_sqllex_is_symbol(lex, i, '(')) {
            depth++;
        } else if (in_hint && sx_sqllex_is_symbol(lex, i, ')')) {
            depth--;
        } else if (in_hint && depth == 0 && is_options_name(lex, i)) {
            const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
            return sx_error_set(err,
                                "rejected: table option hint OPTIONS(...) at line %zu, "
                                "column %zu",
                                token->line, token->column);
        }
    }
    return 0;
}

/* The statement's text, from its first token to the end of its last (so a
 * trailing comment or ';' is left out). */
static char *statement_text(const sx_sqllex_t *lex, span_t statement)
{
    const sx_sqltoken_t *first = sx_sqllex_token(lex, statement.first);
    const sx_sqltoken_t *last = sx_sqllex_token(lex, statement.end - 1);
    return sx_strndup(sx_sqllex_text(lex) + first->start,
                      last->start + last->length - first->start);
}

/* Appends the token's text in upper case to `out` (size bytes in all),
 * after a space when out is not empty; cut to fit. */
static void append_upper(const sx_sqllex_t *lex, size_t index, char *out, size_t size)
{
    const sx_sqltoken_t *token = sx_sqllex_token(lex, index);
    size_t used = strlen(out);
    if (used > 0 && used + 1 < size)
        out[used++] = ' ';
    for (size_t i = 0; i < token->length && used + 1 < size; i++)
        out[used++] = (char)toupper((unsigned char)sx_sqllex_text(lex)[token->start + i]);
    out[used] = '\0';
}

static bool is_any_word(const sx_sqllex_t *lex, size_t index, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (sx_sqllex_is_word(lex, index, words[i]))
            return true;
    return false;
}

/* Names a statement that is not a query or an INSERT by its leading words:
 * "SET", "CREATE TEMPORARY FUNCTION", "ADD JAR", "BEGIN STATEMENT SET". */
static int reject_statement(const sx_sqllex_t *lex, span_t statement, sx_error_t *err)
{
    static const char *const compound[] = {"CREATE",  "DROP", "ALTER",  "ADD",
                                           "REMOVE",  "LOAD", "UNLOAD", "BEGIN",
                                           "EXECUTE", NULL};
    static const char *const followers[] = {
        "TEMPORARY", "SYSTEM", "OR",           "REPLACE", "IF",       "NOT",    "EXISTS",
        "TABLE",     "VIEW",   "FUNCTION",     "CATALOG", "DATABASE", "MODULE", "JAR",
        "STATEMENT", "SET",    "MATERIALIZED", "INSERT",  "PLAN",     NULL};
    const sx_sqltoken_t *token = sx_sqllex_token(lex, statement.first);
    if (token->kind != SX_SQLTOKEN_WORD)
        return sx_error_set(
            err, "rejected: statement starts with %.*s at line %zu, column %zu",
            (int)(token->length < 40 ? token->length : 40),
            sx_sqllex_text(lex) + token->start, token->line, token->column);
    char described[160] = "";
    append_upper(lex, statement.first, described, sizeof described);
    if (is_any_word(lex, statement.first, compound)) {
        for (size_t i = statement.first + 1;
             i < statement.end && i < statement.first + 5 &&
             is_any_word(lex, i, followers);
             i++)
            append_upper(lex, i, described, sizeof described);
    }
    return sx_error_set(err, "rejected: %s statement", described);
}

/* Checks the target of "INSERT INTO <target> <body>": tokens from `at`. */
static int check_insert_target(const sx_sqllex_t *lex, span_t statement, size_t at,
                               const char *sink, sx_error_t *err)
{
    char *parts[4] = {NULL};
    size_t count = 0;
    size_t i = sx_sqllex_name(lex, at, statement.end, parts, &count);
    bool is_sink = sx_sqllex_names_table(parts, count, sink);
    for (size_t p = 0; p < count; p++)
        free(parts[p]);
    if (count == 0)
        return sx_error_set(err, "rejected: INSERT INTO without a table name");
    const sx_sqltoken_t *first = sx_sqllex_token(lex, at);
    const sx_sqltoken_t *last = sx_sqllex_token(lex, i - 1);
    int length = (int)(last->start + last->length - first->start);
    if (!is_sink)
        return sx_error_set(err, "rejected: INSERT INTO %.*s (sink is %s)", length,
                            sx_sqllex_text(lex) + first->start, sink);
    if (i >= statement.end)
        return sx_error_set(err, "rejected: INSERT INTO %s without a query", sink);
    return 0;
}

static bool starts_query(const sx_sqllex_t *lex, span_t statement)
{
    size_t i = statement.first;
    while (i < statement.end && sx_sqllex_is_symbol(lex, i, '('))
        i++;
    return sx_sqllex_is_word(lex, i, "SELECT") || sx_sqllex_is_word(lex, i, "WITH");
}

/* `name` with backticks doubled: keeps the sink name exact (case, reserved
 * words, odd characters). */
static char *quote_identifier(const char *name)
{
    char *quoted = sx_alloc(2 * strlen(name) + 3, 1);
    char *out = quoted;
    *out++ = '`';
    for (const char *p = name; *p; p++) {
        if (*p == '`')
            *out++ = '`';
        *out++ = *p;
    }
    *out++ = '`';
    *out = '\0';
    return quoted;
}

/* Builds the statement Flink runs for an accepted candidate. */
static char *classify(const sx_sqllex_t *lex, span_t statement, const char *sink,
                      sx_error_t *err)
{
    size_t first = statement.first;
    if (starts_query(lex, statement)) {
        char *query = statement_text(lex, statement);
        char *quoted = quote_identifier(sink);
        char *insert = sx_format("INSERT INTO %s\n%s", quoted, query);
        free(query);
        free(quoted);
        return insert;
    }
    if (!sx_sqllex_is_word(lex, first, "INSERT")) {
        reject_statement(lex, statement, err);
        return NULL;
    }
    if (sx_sqllex_is_word(lex, first + 1, "OVERWRITE")) {
        sx_error_set(err, "rejected: INSERT OVERWRITE statement");
        return NULL;
    }
    if (!sx_sqllex_is_word(lex, first + 1, "INTO")) {
        sx_error_set(err, "rejected: INSERT without INTO");
        return NULL;
    }
    if (check_insert_target(lex, statement, first + 2, sink, err) != 0)
        return NULL;
    return statement_text(lex, statement);
}

char *sx_sqlcheck(const char *sql, const char *sink_name, sx_error_t *err)
{
    sx_sqllex_t *lex = sx_sqllex_new(sql, err);
    if (!lex) {
        sx_error_prefix(err, "rejected");
        return NULL;
    }
    span_t statement = {0, 0};
    char *result = NULL;
    if (single_statement(lex, &statement, err) == 0 &&
        check_hints(lex, statement, err) == 0)
        result = classify(lex, statement, sink_name, err);
    sx_sqllex_destroy(&lex);
    return result;
}

/* ---- self-test ---------------------------------------------------------- */

/* One case of the table below: a candidate and its exact verdict. */
typedef struct {
    const char *sql;
    const char *expected; /* the submitted statement, or the rejection */
    bool accepted;
} check_case_t;

static void check_case(const check_case_t *c)
{
    sx_error_t err;
    sx_error_clear(&err);
    char *statement = sx_sqlcheck(c->sql, "result", &err);
    const char *got = statement ? statement : err.msg;
    if ((statement != NULL) != c->accepted || strcmp(got, c->expected) != 0)
        fprintf(stderr, "sqlcheck: [%s]\n  got      %s [%s]\n  expected %s [%s]\n",
                c->sql, statement ? "accepted" : "rejected", got,
                c->accepted ? "accepted" : "rejected", c->expected);
    SX_CHECK((statement != NULL) == c->accepted);
    SX_CHECK(strcmp(got, c->expected) == 0);
    free(statement);
}

/* Random candidates made of the bytes that matter to the lexer and the
 * check: each gets a statement or a "rejected: " reason, never a crash. */
static void test_random_candidates_always_get_a_verdict(void)
{
    static const char alphabet[] =
        "'`\"-/*+;() \n\\E$SELECTWITHINSERTINTOresultOPTIONS.,=";
    unsigned state = 12345;
    char sql[64];
    for (int round = 0; round < 20000; round++) {
        size_t length = (size_t)(round % (int)sizeof sql);
        sx_selftest_random_text(sql, length, alphabet, &state);
        sql[length] = '\0';
        sx_error_t err;
        sx_error_clear(&err);
        char *statement = sx_sqlcheck(sql, "result", &err);
        SX_CHECK(statement ? strlen(statement) > 0
                           : strncmp(err.msg, "rejected: ", 10) == 0);
        free(statement);
    }
}

void sx_sqlcheck_test(bool verbose)
{
    test_random_candidates_always_get_a_verdict();
    (void)verbose;
    static const check_case_t cases[] = {
        /* Queries run as INSERT INTO the sink; trailing ';' and comments go. */
        {"SELECT a FROM t", "INSERT INTO `result`\nSELECT a FROM t", true},
        {"  select a from t ;  -- done\n", "INSERT INTO `result`\nselect a from t", true},
        {"WITH x AS (SELECT 1 AS a) SELECT a FROM x;",
         "INSERT INTO `result`\nWITH x AS (SELECT 1 AS a) SELECT a FROM x", true},
        {"((SELECT 1) UNION ALL (SELECT 2))",
         "INSERT INTO `result`\n((SELECT 1) UNION ALL (SELECT 2))", true},
        {"-- lead\nSELECT 1 /* keep */ + 1",
         "INSERT INTO `result`\nSELECT 1 /* keep */ + 1", true},
        /* ';' and keywords inside strings, identifiers and comments. */
        {"SELECT 'a;b', 'SET x' FROM t",
         "INSERT INTO `result`\nSELECT 'a;b', 'SET x' FROM t", true},
        {"SELECT `we;ird` FROM t", "INSERT INTO `result`\nSELECT `we;ird` FROM t", true},
        {"SELECT 1 /* ; DROP TABLE t */ + 1",
         "INSERT INTO `result`\nSELECT 1 /* ; DROP TABLE t */ + 1", true},
        {"SELECT 1 -- ; DROP TABLE t", "INSERT INTO `result`\nSELECT 1", true},
        {"SELECT 'it''s;' ;", "INSERT INTO `result`\nSELECT 'it''s;'", true},
        /* Flink has no E'...' strings: a backslash escapes nothing, so the
         * quote after it ends the string and what follows is SQL. */
        {"SELECT E'\\';SET' FROM t",
         "rejected: unterminated string starting at line 1, column 16", false},
        {"SELECT E'\\' AS x, ';' AS y",
         "INSERT INTO `result`\nSELECT E'\\' AS x, ';' AS y", true},
        {"SELECT '日本;語' AS `名前`", "INSERT INTO `result`\nSELECT '日本;語' AS `名前`",
         true},
        /* Hints other than OPTIONS are accepted. */
        {"SELECT /*+ BROADCAST(d) */ * FROM f JOIN d ON f.k = d.k",
         "INSERT INTO `result`\nSELECT /*+ BROADCAST(d) */ * FROM f JOIN d ON f.k = d.k",
         true},
        /* INSERT INTO the sink, with quoting, qualification, a column list. */
        {"INSERT INTO result SELECT 1;", "INSERT INTO result SELECT 1", true},
        {"insert into `result` (a) SELECT 1", "insert into `result` (a) SELECT 1", true},
        {"INSERT INTO default_catalog.default_database.result SELECT 1",
         "INSERT INTO default_catalog.default_database.result SELECT 1", true},
        {"INSERT INTO default_database.`result` VALUES (1)",
         "INSERT INTO default_database.`result` VALUES (1)", true},

        /* Rejections. */
        {"", "rejected: empty SQL", false},
        {" ; -- nothing\n;", "rejected: empty SQL", false},
        {"SELECT 1; SELECT 2", "rejected: 2 statements", false},
        {"SELECT 1 /* ok */; -- \n DROP TABLE t;", "rejected: 2 statements", false},
        {"SET 'table.exec.x' = 'y'; SELECT 1", "rejected: 2 statements", false},
        /* Flink quotes with backticks only: a ';' between double quotes
         * separates statements, as it does for Flink's parser. */
        {"SELECT \"a;b\" FROM t", "rejected: 2 statements", false},
        {"SET 'table.dynamic-table-options.enabled' = 'true'", "rejected: SET statement",
         false},
        {"reset", "rejected: RESET statement", false},
        {"CREATE TABLE t (a INT)", "rejected: CREATE TABLE statement", false},
        {"CREATE TEMPORARY SYSTEM FUNCTION f AS 'x.Y'",
         "rejected: CREATE TEMPORARY SYSTEM FUNCTION statement", false},
        {"create function f as 'x.Y'", "rejected: CREATE FUNCTION statement", false},
        /* at most four words follow the first */
        {"CREATE OR REPLACE TEMPORARY SYSTEM FUNCTION f AS 'x.Y'",
         "rejected: CREATE OR REPLACE TEMPORARY SYSTEM statement", false},
        {"DROP TABLE result", "rejected: DROP TABLE statement", false},
        {"ALTER TABLE t SET ('x'='y')", "rejected: ALTER TABLE statement", false},
        {"ADD JAR '/tmp/x.jar'", "rejected: ADD JAR statement", false},
        {"LOAD MODULE hive", "rejected: LOAD MODULE statement", false},
        {"USE CATALOG c", "rejected: USE statement", false},
        {"EXPLAIN SELECT 1", "rejected: EXPLAIN statement", false},
        {"EXECUTE STATEMENT SET BEGIN INSERT INTO result SELECT 1; END",
         "rejected: 2 statements", false},
        {"EXECUTE INSERT INTO result SELECT 1", "rejected: EXECUTE INSERT statement",
         false},
        {"BEGIN STATEMENT SET", "rejected: BEGIN STATEMENT SET statement", false},
        {"CALL sys.x()", "rejected: CALL statement", false},
        {"VALUES (1)", "rejected: VALUES statement", false},
        {"'SELECT 1'", "rejected: statement starts with 'SELECT 1' at line 1, column 1",
         false},
        /* the token is shown whole up to 40 bytes, then cut */
        {"'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' x",
         "rejected: statement starts with 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' at "
         "line 1, column 1",
         false},
        {"'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'",
         "rejected: statement starts with 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy at "
         "line 1, column 1",
         false},
        {"INSERT OVERWRITE result SELECT 1", "rejected: INSERT OVERWRITE statement",
         false},
        {"INSERT INTO other SELECT 1", "rejected: INSERT INTO other (sink is result)",
         false},
        {"INSERT INTO RESULT SELECT 1", "rejected: INSERT INTO RESULT (sink is result)",
         false},
        {"INSERT INTO `Result` SELECT 1",
         "rejected: INSERT INTO `Result` (sink is result)", false},
        {"INSERT INTO db.result SELECT 1",
         "rejected: INSERT INTO db.result (sink is result)", false},
        {"INSERT INTO result", "rejected: INSERT INTO result without a query", false},
        {"INSERT INTO (SELECT 1)", "rejected: INSERT INTO without a table name", false},
        {"INSERT result SELECT 1", "rejected: INSERT without INTO", false},
        {"SELECT * FROM t /*+ OPTIONS('scan.startup.mode'='latest-offset') */",
         "rejected: table option hint OPTIONS(...) at line 1, column 21", false},
        {"INSERT INTO result /*+ options('x'='y') */ SELECT 1",
         "rejected: table option hint OPTIONS(...) at line 1, column 24", false},
        {"SELECT 1 FROM t /*+ `OPTIONS`('k'='v') */",
         "rejected: table option hint OPTIONS(...) at line 1, column 21", false},
        {"SELECT 1 FROM t /*+ `Options`('k'='v') */",
         "rejected: table option hint OPTIONS(...) at line 1, column 21", false},
        {"SELECT * FROM t /*+ BROADCAST(a), OPTIONS('k'='v') */",
         "rejected: table option hint OPTIONS(...) at line 1, column 35", false},
        {"SELECT * FROM f JOIN d /*+ BROADCAST(OPTIONS) */ ON f.k = d.k",
         "INSERT INTO `result`\nSELECT * FROM f JOIN d /*+ BROADCAST(OPTIONS) */ ON f.k "
         "= d.k",
         true},
        /* Line comments end at \r too (Calcite): what follows is SQL. */
        {"SELECT 1 FROM t --x\r/*+ OPTIONS('k'='v') */",
         "rejected: table option hint OPTIONS(...) at line 1, column 25", false},
        {"SELECT 1 --x\r; DROP TABLE bids", "rejected: 2 statements", false},
        {"SELECT 1 //x\r\n, 2", "INSERT INTO `result`\nSELECT 1 //x\r\n, 2", true},
        {"SELECT 'unterminated",
         "rejected: unterminated string starting at line 1, column 8", false},
        {"SELECT 1 /* open",
         "rejected: unterminated comment starting at line 1, column 10", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);

    /* A sink name needing quotes is escaped in the generated INSERT. */
    sx_error_t err;
    char *statement = sx_sqlcheck("SELECT 1", "we`ird", &err);
    SX_CHECK(statement && strcmp(statement, "INSERT INTO `we``ird`\nSELECT 1") == 0);
    free(statement);
    /* A huge leading word is cut in the message, never overflows it. */
    char huge[400];
    memset(huge, 'x', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    SX_CHECK(sx_sqlcheck(huge, "result", &err) == NULL);
    SX_CHECK(strncmp(err.msg, "rejected: XXXX", 14) == 0 && strlen(err.msg) < 200);
    SX_CHECK(sx_sqlcheck(NULL, "result", &err) == NULL);
    SX_CHECK(strcmp(err.msg, "rejected: empty SQL") == 0);
}
