/* fuzz_sql.c: the SQL lexer and the candidate check (worker/sql/sqllex.c,
 * worker/sql/sqlcheck.c) over any text. The lexer tokenizes or refuses with a
 * message; its tokens lie inside the text, in order, without overlap, and
 * every value can be taken. The check accepts or rejects with a reason; an
 * accepted candidate gives the statement Flink gets, and that statement is
 * accepted too, unchanged (checking is idempotent). */
#include "worker/sql/sqlcheck.h"
#include "worker/sql/sqllex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_tokens(const char *sql)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_sqllex_t *lex = sx_sqllex_new(sql, &err);
    if (!lex) {
        if (!sx_error_is_set(&err))
            abort();
        return;
    }
    size_t length = strlen(sql), end = 0;
    for (size_t i = 0; i < sx_sqllex_count(lex); i++) {
        const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
        if (token->start < end || token->length == 0 ||
            token->start + token->length > length)
            abort();
        end = token->start + token->length;
        free(sx_sqllex_value(lex, i));
    }
    if (sx_sqllex_token(lex, sx_sqllex_count(lex)) != NULL)
        abort();
    sx_sqllex_destroy(&lex);
}

static void check_candidate(const char *sql)
{
    sx_error_t err;
    sx_error_clear(&err);
    char *statement = sx_sqlcheck(sql, "result", &err);
    if (!statement) {
        if (strncmp(err.msg, "rejected: ", 10) != 0)
            abort();
        return;
    }
    char *again = sx_sqlcheck(statement, "result", &err);
    if (!again || strcmp(again, statement) != 0) {
        fprintf(stderr, "accepted:\n%s\nbecame:\n%s\nwhich %s\n", sql, statement,
                again ? "became something else" : err.msg);
        abort();
    }
    free(again);
    free(statement);
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    char *sql = malloc(size + 1);
    if (!sql)
        return 0;
    memcpy(sql, data, size);
    sql[size] = '\0';
    check_tokens(sql);
    check_candidate(sql);
    free(sql);
    return 0;
}
