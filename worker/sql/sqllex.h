/* sqllex.h: the one SQL lexer of streamex, shared by the candidate check
 * (sqlcheck) and the DDL templating (ddl). It splits Flink SQL text into
 * tokens the way Flink's parser (Calcite, backtick quoting) does, so that
 * strings and comments can never be mistaken for keywords or separators:
 *   - '...' strings with '' escapes, the only escape (a prefix such as N,
 *     X, U& or _charset is its own token before the string and changes
 *     nothing here; Flink 1.20 has no C-style E'...' strings, so E is one
 *     of those prefixes and a backslash escapes nothing);
 *   - `...` quoted identifiers with `` escapes. A double quote is an ordinary
 *     symbol to Flink, and so it is here;
 *   - -- and // line comments (ending at \n or at \r, as Calcite's do) and
 *     non-nesting block comments are dropped;
 *   - a hint is lexed like Calcite does: slash-star-plus opens it
 *     (HINT_START), its contents are ordinary tokens, and the next
 *     star-slash closes it (HINT_END);
 *   - words are runs of letters, digits, '_', '$' and bytes >= 0x80 (UTF-8),
 *     so unicode names stay whole; any other byte is a one-byte SYMBOL,
 *     ';' included. */
#ifndef SX_SQLLEX_H
#define SX_SQLLEX_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SX_SQLTOKEN_WORD,       /* keyword, unquoted identifier or number */
    SX_SQLTOKEN_QUOTED_ID,  /* `name` */
    SX_SQLTOKEN_STRING,     /* 'text' */
    SX_SQLTOKEN_HINT_START, /* slash-star-plus, opening a hint */
    SX_SQLTOKEN_HINT_END,   /* star-slash, closing it */
    SX_SQLTOKEN_SYMBOL,     /* one byte of punctuation: ( ) , ; = . and others */
} sx_sqltoken_kind_t;

typedef struct {
    sx_sqltoken_kind_t kind;
    size_t start;  /* byte offset of the first byte in the text */
    size_t length; /* bytes, quotes included */
    size_t line;   /* 1-based line of the first byte */
    size_t column; /* 1-based byte column of the first byte */
} sx_sqltoken_t;

typedef struct _sx_sqllex_t sx_sqllex_t;

/* Tokenizes the whole text. An unterminated string, quoted identifier,
 * block comment or hint is an error naming its line and column. */
sx_sqllex_t *sx_sqllex_new(const char *sql, sx_error_t *err);
void sx_sqllex_destroy(sx_sqllex_t **self_p);

size_t sx_sqllex_count(const sx_sqllex_t *self);
/* The index-th token, or NULL past the end. */
const sx_sqltoken_t *sx_sqllex_token(const sx_sqllex_t *self, size_t index);
/* The text the tokens point into. */
const char *sx_sqllex_text(const sx_sqllex_t *self);

/* True when token `index` exists and is a WORD equal to `word`, ignoring
 * ASCII case. */
bool sx_sqllex_is_word(const sx_sqllex_t *self, size_t index, const char *word);
/* True when token `index` exists and is the SYMBOL `symbol`. */
bool sx_sqllex_is_symbol(const sx_sqllex_t *self, size_t index, char symbol);
/* The name or value a WORD, QUOTED_ID or STRING token stands for, as a heap
 * string: quotes removed and escapes undone; a WORD as written. NULL for
 * other kinds or a bad index. */
char *sx_sqllex_value(const sx_sqllex_t *self, size_t index);

/* Reads a possibly qualified name from token `at` (before token `end`): up
 * to four WORD or QUOTED_ID parts joined by '.', their values (heap) in
 * parts, their number in *count. Returns the index of the token after it. */
size_t sx_sqllex_name(const sx_sqllex_t *self, size_t at, size_t end, char *parts[4],
                      size_t *count);
/* True when a name read by sx_sqllex_name says `table` of the session's
 * default catalog and database: table, default_database.table or
 * default_catalog.default_database.table, matched exactly (Flink's
 * identifiers are case-sensitive). */
bool sx_sqllex_names_table(char *const *parts, size_t count, const char *table);

void sx_sqllex_test(bool verbose);

#endif
