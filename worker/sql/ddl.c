/* ddl.c: the registered DDL made ready for one run (see ddl.h). Both steps
 * work on tokens of the shared SQL lexer and rewrite the text by splicing
 * replacements at token positions, so everything else in the DDL (comments,
 * layout, computed columns, watermarks) reaches Flink exactly as written. */
#include "worker/sql/ddl.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "worker/sql/sqllex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One splice: replace `length` bytes at `start` with `text`. */
typedef struct {
    size_t start;
    size_t length;
    char *text;
} edit_t;

typedef struct {
    edit_t *items;
    size_t count;
} edits_t;

/* Keeps the edit; -1 when text is NULL (its open_memstream ran out of
 * memory). */
static int edits_add(edits_t *edits, size_t start, size_t length, char *text)
{
    if (!text)
        return -1;
    edits->items = sx_realloc(edits->items, edits->count + 1, sizeof *edits->items);
    edits->items[edits->count++] = (edit_t){start, length, text};
    return 0;
}

static void edits_clear(edits_t *edits)
{
    for (size_t i = 0; i < edits->count; i++)
        free(edits->items[i].text);
    free(edits->items);
    *edits = (edits_t){NULL, 0};
}

static int compare_edits(const void *a, const void *b)
{
    size_t x = ((const edit_t *)a)->start, y = ((const edit_t *)b)->start;
    return x < y ? -1 : x > y;
}

/* The text with every edit applied (edits never overlap). */
static char *apply_edits(const char *text, edits_t *edits)
{
    if (edits->count > 1)
        qsort(edits->items, edits->count, sizeof *edits->items, compare_edits);
    char *out = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&out, &size);
    if (!stream)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < edits->count; i++) {
        fwrite(text + at, 1, edits->items[i].start - at, stream);
        fputs(edits->items[i].text, stream);
        at = edits->items[i].start + edits->items[i].length;
    }
    fputs(text + at, stream);
    if (fclose(stream) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Appends `value` to a string literal's body, escaped for that literal:
 * quotes doubled (the only escape Flink's strings have). */
static void put_escaped(FILE *stream, const char *value)
{
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            fputc(*p, stream);
        fputc(*p, stream);
    }
}

/* The literal token with its placeholders filled, or NULL with err. */
static char *fill_literal(const char *literal, size_t length, const sx_sqltoken_t *token,
                          const char *topic, const char *bootstrap, sx_error_t *err)
{
    char *out = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&out, &size);
    if (!stream) {
        sx_error_set(err, "out of memory while filling DDL");
        return NULL;
    }
    int rc = 0;
    for (size_t i = 0; i < length && rc == 0;) {
        if (literal[i] != '$' || i + 1 >= length || literal[i + 1] != '{') {
            fputc(literal[i++], stream);
            continue;
        }
        const char *close = memchr(literal + i, '}', length - i);
        int name_length = close ? (int)(close - literal - i - 2) : 0;
        const char *name = literal + i + 2;
        if (!close)
            rc = sx_error_set(
                err, "unclosed placeholder in the string at line %zu, column %zu",
                token->line, token->column);
        else if (name_length == 5 && strncmp(name, "topic", 5) == 0)
            put_escaped(stream, topic);
        else if (name_length == 9 && strncmp(name, "bootstrap", 9) == 0)
            put_escaped(stream, bootstrap);
        else
            rc = sx_error_set(
                err,
                "unknown placeholder ${%.*s} in the string at line %zu, column "
                "%zu (only ${topic} and ${bootstrap} are filled)",
                name_length, name, token->line, token->column);
        i = close ? (size_t)(close - literal) + 1 : length;
    }
    if (fclose(stream) != 0 && rc == 0)
        rc = sx_error_set(err, "out of memory while filling DDL");
    if (rc != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* A placeholder outside any string literal lexes as a word ending in '$'
 * right before a '{': Flink could not parse what we would make of it. */
static bool is_bare_placeholder(const sx_sqllex_t *lex, size_t index)
{
    const sx_sqltoken_t *token = sx_sqllex_token(lex, index);
    const sx_sqltoken_t *next = sx_sqllex_token(lex, index + 1);
    const char *text = sx_sqllex_text(lex);
    return token->kind == SX_SQLTOKEN_WORD &&
           text[token->start + token->length - 1] == '$' && next &&
           next->start == token->start + token->length &&
           sx_sqllex_is_symbol(lex, index + 1, '{');
}

char *sx_ddl_fill(const char *ddl, const char *topic, const char *bootstrap,
                  sx_error_t *err)
{
    sx_sqllex_t *lex = sx_sqllex_new(ddl, err);
    if (!lex)
        return NULL;
    const char *text = sx_sqllex_text(lex);
    edits_t edits = {NULL, 0};
    int rc = 0;
    for (size_t i = 0; i < sx_sqllex_count(lex) && rc == 0; i++) {
        const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
        if (is_bare_placeholder(lex, i)) {
            rc = sx_error_set(
                err, "placeholder outside a string literal at line %zu, column %zu",
                token->line, token->column);
        } else if (token->kind == SX_SQLTOKEN_STRING &&
                   memmem(text + token->start, token->length, "${", 2)) {
            char *filled = fill_literal(text + token->start, token->length, token, topic,
                                        bootstrap, err);
            if (!filled)
                rc = -1;
            else
                edits_add(&edits, token->start, token->length, filled);
        }
    }
    char *result = NULL;
    if (rc == 0 && !(result = apply_edits(text, &edits)))
        sx_error_set(err, "out of memory while filling DDL");
    edits_clear(&edits);
    sx_sqllex_destroy(&lex);
    return result;
}

/* One 'key'='value' of a WITH (...) list: token indexes. */
typedef struct {
    size_t key;
    size_t value;
} option_t;

/* The options of the table's WITH (...) list, and the index of its ')'. */
typedef struct {
    option_t *items;
    size_t count;
    size_t close;
} options_t;

/* Index of the first WITH followed by '(' outside any parentheses. */
static int find_with(const sx_sqllex_t *lex, size_t *open, sx_error_t *err)
{
    int depth = 0;
    for (size_t i = 0; i < sx_sqllex_count(lex); i++) {
        if (sx_sqllex_is_symbol(lex, i, '('))
            depth++;
        else if (sx_sqllex_is_symbol(lex, i, ')'))
            depth--;
        else if (depth == 0 && sx_sqllex_is_word(lex, i, "WITH") &&
                 sx_sqllex_is_symbol(lex, i + 1, '(')) {
            *open = i + 1;
            return 0;
        }
    }
    return sx_error_set(err, "no WITH (...) options list in the source DDL");
}

static bool is_string(const sx_sqllex_t *lex, size_t index)
{
    const sx_sqltoken_t *token = sx_sqllex_token(lex, index);
    return token && token->kind == SX_SQLTOKEN_STRING;
}

/* Reads 'key'='value' pairs separated by commas up to the closing ')'. */
static int parse_options(const sx_sqllex_t *lex, options_t *options, sx_error_t *err)
{
    size_t i = 0;
    if (find_with(lex, &i, err) != 0)
        return -1;
    i++;
    while (!sx_sqllex_is_symbol(lex, i, ')')) {
        if (!is_string(lex, i) || !sx_sqllex_is_symbol(lex, i + 1, '=') ||
            !is_string(lex, i + 2)) {
            const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
            if (!token)
                return sx_error_set(err, "WITH (...) options list never closed");
            return sx_error_set(err,
                                "expected 'key'='value' in the WITH list at line %zu, "
                                "column %zu",
                                token->line, token->column);
        }
        options->items =
            sx_realloc(options->items, options->count + 1, sizeof *options->items);
        options->items[options->count++] = (option_t){i, i + 2};
        i += 3;
        if (sx_sqllex_is_symbol(lex, i, ','))
            i++;
        else if (!sx_sqllex_is_symbol(lex, i, ')') && sx_sqllex_token(lex, i))
            return sx_error_set(
                err, "expected ',' or ')' in the WITH list at line %zu, column %zu",
                sx_sqllex_token(lex, i)->line, sx_sqllex_token(lex, i)->column);
    }
    options->close = i;
    return 0;
}

static bool key_is(const sx_sqllex_t *lex, const option_t *option, const char *key)
{
    char *value = sx_sqllex_value(lex, option->key);
    bool same = value && strcmp(value, key) == 0;
    free(value);
    return same;
}

static char *quoted_literal(const char *value)
{
    char *out = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&out, &size);
    if (!stream)
        return NULL;
    fputc('\'', stream);
    put_escaped(stream, value);
    fputc('\'', stream);
    if (fclose(stream) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Sets key to value: every existing occurrence's value is replaced, or the
 * pair is added before the list's ')'. */
static int enforce_option(const sx_sqllex_t *lex, const options_t *options,
                          const char *key, const char *value, edits_t *edits)
{
    bool found = false;
    for (size_t i = 0; i < options->count; i++) {
        if (!key_is(lex, &options->items[i], key))
            continue;
        const sx_sqltoken_t *token = sx_sqllex_token(lex, options->items[i].value);
        if (edits_add(edits, token->start, token->length, quoted_literal(value)) != 0)
            return -1;
        found = true;
    }
    if (found)
        return 0;
    char *pair = sx_format("%s'%s'='%s'", options->count ? ", " : "", key, value);
    return edits_add(edits, sx_sqllex_token(lex, options->close)->start, 0, pair);
}

/* The value of the 'connector' option, or NULL. */
static char *connector_of(const sx_sqllex_t *lex, const options_t *options)
{
    for (size_t i = 0; i < options->count; i++)
        if (key_is(lex, &options->items[i], "connector"))
            return sx_sqllex_value(lex, options->items[i].value);
    return NULL;
}

/* Adds the edits that bound a source to the rows present at job start. */
static int bound_source(const sx_sqllex_t *lex, const options_t *options, edits_t *edits,
                        sx_error_t *err)
{
    char *connector = connector_of(lex, options);
    int rc = 0;
    if (!connector)
        rc = sx_error_set(err, "the source DDL has no 'connector' option");
    else if (strcmp(connector, "kafka") != 0)
        rc = sx_error_set(err,
                          "source connector '%s' cannot read the replayed rows (only "
                          "'kafka' can: the worker writes keyless JSON records)",
                          connector);
    else if (enforce_option(lex, options, "scan.startup.mode", "earliest-offset",
                            edits) != 0 ||
             enforce_option(lex, options, "scan.bounded.mode", "latest-offset", edits) !=
                 0)
        rc = sx_error_set(err, "out of memory while editing DDL");
    free(connector);
    return rc;
}

char *sx_ddl_source(const char *ddl, const char *topic, const char *bootstrap,
                    sx_error_t *err)
{
    char *filled = sx_ddl_fill(ddl, topic, bootstrap, err);
    if (!filled)
        return NULL;
    sx_sqllex_t *lex = sx_sqllex_new(filled, err);
    free(filled);
    if (!lex)
        return NULL;
    options_t options = {NULL, 0, 0};
    edits_t edits = {NULL, 0};
    char *result = NULL;
    if (parse_options(lex, &options, err) == 0 &&
        bound_source(lex, &options, &edits, err) == 0 &&
        !(result = apply_edits(sx_sqllex_text(lex), &edits)))
        sx_error_set(err, "out of memory while editing DDL");
    edits_clear(&edits);
    free(options.items);
    sx_sqllex_destroy(&lex);
    return result;
}

/* The statements of a lexed DDL: how many, and the token span of the first. */
static size_t count_statements(const sx_sqllex_t *lex, size_t *first, size_t *end)
{
    size_t statements = 0, start = 0, count = sx_sqllex_count(lex);
    for (size_t i = 0; i <= count; i++) {
        if (i < count && !sx_sqllex_is_symbol(lex, i, ';'))
            continue;
        if (i > start && statements++ == 0) {
            *first = start;
            *end = i;
        }
        start = i + 1;
    }
    return statements;
}

/* A top-level AS after the table name: CREATE TABLE ... AS SELECT. Column
 * definitions (computed columns, watermarks) are inside parentheses. */
static bool has_top_level_as(const sx_sqllex_t *lex, size_t from, size_t end)
{
    int depth = 0;
    for (size_t i = from; i < end; i++) {
        if (sx_sqllex_is_symbol(lex, i, '('))
            depth++;
        else if (sx_sqllex_is_symbol(lex, i, ')'))
            depth--;
        else if (depth == 0 && sx_sqllex_is_word(lex, i, "AS"))
            return true;
    }
    return false;
}

static int check_create_table(const sx_sqllex_t *lex, size_t first, size_t end,
                              const char *name, sx_error_t *err)
{
    size_t i = first;
    bool create = sx_sqllex_is_word(lex, i++, "CREATE");
    if (create && sx_sqllex_is_word(lex, i, "TEMPORARY"))
        i++;
    if (!create || !sx_sqllex_is_word(lex, i++, "TABLE")) {
        const sx_sqltoken_t *token = sx_sqllex_token(lex, first);
        return sx_error_set(err,
                            "is not a CREATE TABLE statement (it starts with '%.*s' at "
                            "line %zu, column %zu)",
                            (int)(token->length < 40 ? token->length : 40),
                            sx_sqllex_text(lex) + token->start, token->line,
                            token->column);
    }
    if (sx_sqllex_is_word(lex, i, "IF") && sx_sqllex_is_word(lex, i + 1, "NOT") &&
        sx_sqllex_is_word(lex, i + 2, "EXISTS"))
        i += 3;
    char *parts[4] = {NULL};
    size_t count = 0;
    size_t after = sx_sqllex_name(lex, i, end, parts, &count);
    bool named = sx_sqllex_names_table(parts, count, name);
    for (size_t p = 0; p < count; p++)
        free(parts[p]);
    if (!named) {
        const sx_sqltoken_t *token = sx_sqllex_token(lex, i < end ? i : end - 1);
        const sx_sqltoken_t *last = sx_sqllex_token(lex, after > i ? after - 1 : i);
        int length = after > i ? (int)(last->start + last->length - token->start) : 0;
        return sx_error_set(err,
                            "creates table '%.*s' at line %zu, column %zu, but the table "
                            "is declared as '%s' (they must be the same)",
                            length < 80 ? length : 80, sx_sqllex_text(lex) + token->start,
                            token->line, token->column, name);
    }
    if (has_top_level_as(lex, after, end))
        return sx_error_set(err, "is CREATE TABLE ... AS (a table here is only declared, "
                                 "never filled by a query of its own)");
    return 0;
}

int sx_ddl_check_table(const char *ddl, const char *name, sx_error_t *err)
{
    sx_sqllex_t *lex = sx_sqllex_new(ddl, err);
    if (!lex)
        return -1;
    size_t first = 0, end = 0;
    size_t statements = count_statements(lex, &first, &end);
    int rc = 0;
    if (statements == 0)
        rc = sx_error_set(err, "is empty");
    else if (statements > 1)
        rc = sx_error_set(err,
                          "holds %zu statements (only its CREATE TABLE may be sent to "
                          "Flink)",
                          statements);
    else
        rc = check_create_table(lex, first, end, name, err);
    sx_sqllex_destroy(&lex);
    return rc;
}

static void check_table(const char *ddl, const char *name, const char *message)
{
    sx_error_t err;
    sx_error_clear(&err);
    int rc = sx_ddl_check_table(ddl, name, &err);
    const char *got = rc == 0 ? "(accepted)" : err.msg;
    const char *want = message ? message : "(accepted)";
    if (strcmp(got, want) != 0)
        fprintf(stderr, "ddl table: %s\n  got      %s\n  expected %s\n", ddl, got, want);
    SX_CHECK(strcmp(got, want) == 0);
}

static void test_table_checks(void)
{
    /* Accepted: the declared name, quoted, qualified, with IF NOT EXISTS,
     * computed columns and a watermark (AS inside parentheses). */
    check_table("CREATE TABLE bids (a INT) WITH ('connector'='kafka');", "bids", NULL);
    check_table(
        "-- the table\ncreate temporary table if not exists `bids` (a INT, b AS a "
        "+ 1, WATERMARK FOR t AS t) WITH ()",
        "bids", NULL);
    check_table(
        "CREATE TABLE default_catalog.default_database.`result` (a INT) ;  -- end",
        "result", NULL);
    /* Refused. */
    check_table("CREATE TABLE bid (a INT)", "bids",
                "creates table 'bid' at line 1, column 14, but the table is declared as "
                "'bids' (they must be the same)");
    check_table("CREATE TABLE Bids (a INT)", "bids",
                "creates table 'Bids' at line 1, column 14, but the table is declared as "
                "'bids' (they must be the same)");
    check_table("CREATE TABLE other_db.bids (a INT)", "bids",
                "creates table 'other_db.bids' at line 1, column 14, but the table is "
                "declared as 'bids' (they must be the same)");
    check_table("CREATE TABLE bids (a INT); DROP TABLE x", "bids",
                "holds 2 statements (only its CREATE TABLE may be sent to Flink)");
    check_table("CREATE TABLE bids (a INT) --x\r; DROP TABLE x", "bids",
                "holds 2 statements (only its CREATE TABLE may be sent to Flink)");
    check_table("CREATE VIEW bids AS SELECT 1", "bids",
                "is not a CREATE TABLE statement (it starts with 'CREATE' at line 1, "
                "column 1)");
    check_table("SET 'a'='b'", "bids",
                "is not a CREATE TABLE statement (it starts with 'SET' at line 1, column "
                "1)");
    check_table(
        "CREATE TABLE bids WITH ('connector'='kafka') AS SELECT * FROM t", "bids",
        "is CREATE TABLE ... AS (a table here is only declared, never filled by a "
        "query of its own)");
    check_table(" ; -- nothing", "bids", "is empty");
    check_table(
        "CREATE TABLE", "bids",
        "creates table '' at line 1, column 8, but the table is declared as 'bids' "
        "(they must be the same)");
}

/* Test helpers: a call's result must be exactly `expected` (NULL expects
 * an error whose message is `message`). */
static void check_result(const char *what, char *got, const char *expected,
                         const sx_error_t *err, const char *message)
{
    const char *shown = got ? got : err->msg;
    const char *wanted = expected ? expected : message;
    if ((got != NULL) != (expected != NULL) || strcmp(shown, wanted) != 0)
        fprintf(stderr, "ddl: %s\n  got      %s\n  expected %s\n", what, shown, wanted);
    SX_CHECK((got != NULL) == (expected != NULL));
    SX_CHECK(strcmp(shown, wanted) == 0);
    free(got);
}

static void check_fill(const char *ddl, const char *expected, const char *message)
{
    sx_error_t err;
    sx_error_clear(&err);
    check_result(ddl, sx_ddl_fill(ddl, "sx-run1-t1-a1-bids", "127.0.0.1:9092", &err),
                 expected, &err, message);
}

static void check_source(const char *ddl, const char *expected, const char *message)
{
    sx_error_t err;
    sx_error_clear(&err);
    check_result(ddl, sx_ddl_source(ddl, "t", "b:1", &err), expected, &err, message);
}

/* Random DDL made of the bytes that matter here: each gets a result or an
 * error message, never a crash. */
static void test_random_ddl_never_crashes(void)
{
    static const char alphabet[] = "'`-/*+;() \n\\E${}topicbootstrapWITHconnectorkafka=,";
    unsigned state = 777;
    char ddl[96];
    for (int round = 0; round < 20000; round++) {
        size_t length = (size_t)(round % (int)sizeof ddl);
        sx_selftest_random_text(ddl, length, alphabet, &state);
        ddl[length] = '\0';
        sx_error_t err;
        sx_error_clear(&err);
        char *source = sx_ddl_source(ddl, "t", "b", &err);
        SX_CHECK(source || sx_error_is_set(&err));
        free(source);
    }
}

void sx_ddl_test(bool verbose)
{
    test_random_ddl_never_crashes();
    test_table_checks();
    (void)verbose;
    /* Placeholders are filled inside strings, wherever they are in them. */
    check_fill("CREATE TABLE s (a INT) WITH ('topic'='${topic}', "
               "'properties.bootstrap.servers'='${bootstrap}')",
               "CREATE TABLE s (a INT) WITH ('topic'='sx-run1-t1-a1-bids', "
               "'properties.bootstrap.servers'='127.0.0.1:9092')",
               NULL);
    check_fill(
        "WITH ('x'='pre-${topic}-${topic}', 'y'=E'${bootstrap}')",
        "WITH ('x'='pre-sx-run1-t1-a1-bids-sx-run1-t1-a1-bids', 'y'=E'127.0.0.1:9092')",
        NULL);
    /* Comments are left alone, placeholders in them included. */
    check_fill("-- uses ${whatever}\nWITH ('t'='${topic}') /* ${x} */",
               "-- uses ${whatever}\nWITH ('t'='sx-run1-t1-a1-bids') /* ${x} */", NULL);
    check_fill("WITH ('t'='plain')", "WITH ('t'='plain')", NULL);
    check_fill("WITH ('t'='${topics}')", NULL,
               "unknown placeholder ${topics} in the string at line 1, column 11 (only "
               "${topic} and ${bootstrap} are filled)");
    check_fill("WITH (\n 't'='${topic')", NULL,
               "unclosed placeholder in the string at line 2, column 6");
    check_fill("WITH ('t'=${topic})", NULL,
               "placeholder outside a string literal at line 1, column 11");
    check_fill("WITH ('t'='${topic}", NULL,
               "unterminated string starting at line 1, column 11");

    /* A value that needs escaping stays one literal. */
    sx_error_t err;
    char *odd =
        sx_ddl_fill("WITH ('t'='${topic}', 'e'=E'${topic}')", "it's\\", "b", &err);
    SX_CHECK(odd && strcmp(odd, "WITH ('t'='it''s\\', 'e'=E'it''s\\')") == 0);
    free(odd);

    /* Sources: the task's registered DDL already bounded stays the same. */
    check_source(
        "CREATE TABLE bids (auction BIGINT, bid_time TIMESTAMP(3), WATERMARK FOR "
        "bid_time AS bid_time - INTERVAL '1' SECOND) WITH ('connector'='kafka',"
        "'topic'='${topic}','properties.bootstrap.servers'='${bootstrap}',"
        "'format'='json','scan.startup.mode'='earliest-offset',"
        "'scan.bounded.mode'='latest-offset')",
        "CREATE TABLE bids (auction BIGINT, bid_time TIMESTAMP(3), WATERMARK FOR "
        "bid_time AS bid_time - INTERVAL '1' SECOND) WITH ('connector'='kafka',"
        "'topic'='t','properties.bootstrap.servers'='b:1',"
        "'format'='json','scan.startup.mode'='earliest-offset',"
        "'scan.bounded.mode'='latest-offset')",
        NULL);
    /* Other modes are replaced; missing options are added before ')'. */
    check_source(
        "CREATE TABLE s (a INT) WITH ('connector' = 'kafka', 'scan.startup.mode' = "
        "'group-offsets', 'x'='a,b)') -- end",
        "CREATE TABLE s (a INT) WITH ('connector' = 'kafka', 'scan.startup.mode' = "
        "'earliest-offset', 'x'='a,b)', 'scan.bounded.mode'='latest-offset') -- end",
        NULL);
    check_source("CREATE TABLE s (a INT, PRIMARY KEY (a) NOT ENFORCED) WITH "
                 "('connector'='upsert-kafka', 'scan.bounded.mode'='unbounded')",
                 NULL,
                 "source connector 'upsert-kafka' cannot read the replayed rows (only "
                 "'kafka' can: the worker writes keyless JSON records)");
    /* A WITH inside the column list (a backticked column) is not the list. */
    check_source("CREATE TABLE s (`with` INT, w AS CAST(`with` AS STRING)) WITH "
                 "('connector'='kafka')",
                 "CREATE TABLE s (`with` INT, w AS CAST(`with` AS STRING)) WITH "
                 "('connector'='kafka', 'scan.startup.mode'='earliest-offset', "
                 "'scan.bounded.mode'='latest-offset')",
                 NULL);
    check_source("CREATE TABLE s (a INT) WITH ('connector'='filesystem')", NULL,
                 "source connector 'filesystem' cannot read the replayed rows (only "
                 "'kafka' can: the worker writes keyless JSON records)");
    check_source("CREATE TABLE s (a INT) WITH ('format'='json')", NULL,
                 "the source DDL has no 'connector' option");
    check_source("CREATE TABLE s (a INT)", NULL,
                 "no WITH (...) options list in the source DDL");
    check_source("CREATE TABLE s (a INT) WITH ('connector'='kafka' 'x'='y')", NULL,
                 "expected ',' or ')' in the WITH list at line 1, column 50");
    check_source("CREATE TABLE s (a INT) WITH ('connector'=kafka)", NULL,
                 "expected 'key'='value' in the WITH list at line 1, column 30");
    check_source("CREATE TABLE s (a INT) WITH ('connector'='kafka',", NULL,
                 "WITH (...) options list never closed");
}
