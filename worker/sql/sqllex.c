/* sqllex.c: the shared SQL lexer (see sqllex.h). One pass over the text
 * records each token's kind and position; nothing is copied until a caller
 * asks for a token's value. Line and column are tracked so every error and
 * every rejection can say where in the candidate or DDL it happened. */
#include "worker/sql/sqllex.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <stdlib.h>
#include <string.h>

struct _sx_sqllex_t {
    char *text;
    sx_sqltoken_t *tokens;
    size_t count;
    size_t capacity;
};

/* Where the scan is. */
typedef struct {
    const char *text;
    size_t pos;
    size_t line;
    size_t column;
    bool in_hint;
} cursor_t;

static char peek(const cursor_t *c, size_t ahead)
{
    /* Never reads past the terminating NUL. */
    for (size_t i = 0; i < ahead; i++)
        if (c->text[c->pos + i] == '\0')
            return '\0';
    return c->text[c->pos + ahead];
}

static void advance(cursor_t *c, size_t n)
{
    for (size_t i = 0; i < n && c->text[c->pos] != '\0'; i++) {
        if (c->text[c->pos] == '\n') {
            c->line++;
            c->column = 1;
        } else {
            c->column++;
        }
        c->pos++;
    }
}

static bool is_word_byte(char ch)
{
    unsigned char u = (unsigned char)ch;
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
           u == '_' || u == '$' || u >= 0x80;
}

/* Calcite's whitespace (Parser.jj: SKIP " " | "\t" | "\n" | "\r" | "\f");
 * a vertical tab is none, Flink refuses it as it refuses any stray byte. */
static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

/* Skips whitespace and comments (not hints). Fails on an unterminated block
 * comment. */
static int skip_blank(cursor_t *c, sx_error_t *err)
{
    for (;;) {
        char ch = peek(c, 0);
        if (is_space(ch)) {
            advance(c, 1);
        } else if ((ch == '-' && peek(c, 1) == '-') || (ch == '/' && peek(c, 1) == '/')) {
            /* Calcite (core/src/main/codegen/templates/Parser.jj, which
             * Flink 1.20's parser is generated from):
             *   <SINGLE_LINE_COMMENT: ("//"|"--")(~["\n","\r"])* ("\n"|"\r"|"\r\n")?>
             * A line comment ends at '\n' or at '\r': what follows a lone
             * '\r' is SQL to Flink, so it is here. */
            while (peek(c, 0) != '\0' && peek(c, 0) != '\n' && peek(c, 0) != '\r')
                advance(c, 1);
        } else if (ch == '/' && peek(c, 1) == '*' && peek(c, 2) != '+') {
            size_t line = c->line, column = c->column;
            advance(c, 2);
            while (peek(c, 0) != '\0' && !(peek(c, 0) == '*' && peek(c, 1) == '/'))
                advance(c, 1);
            if (peek(c, 0) == '\0')
                return sx_error_set(
                    err, "unterminated comment starting at line %zu, column %zu", line,
                    column);
            advance(c, 2);
        } else {
            return 0;
        }
    }
}

/* Scans a quoted token starting at the opening quote. The quote doubled is
 * the only escape (Calcite's QUOTED_STRING and BACK_QUOTED_IDENTIFIER). */
static int scan_quoted(cursor_t *c, char quote, const char *what, sx_error_t *err)
{
    size_t line = c->line, column = c->column;
    advance(c, 1);
    for (;;) {
        char ch = peek(c, 0);
        if (ch == '\0')
            return sx_error_set(err, "unterminated %s starting at line %zu, column %zu",
                                what, line, column);
        if (ch == quote && peek(c, 1) == quote) {
            advance(c, 2);
        } else if (ch == quote) {
            advance(c, 1);
            return 0;
        } else {
            advance(c, 1);
        }
    }
}

/* Scans one token at the cursor (not at a blank) and says what it was. */
static int scan_token(cursor_t *c, sx_sqltoken_kind_t *kind, sx_error_t *err)
{
    char ch = peek(c, 0);
    if (ch == '\'') {
        *kind = SX_SQLTOKEN_STRING;
        return scan_quoted(c, '\'', "string", err);
    }
    if (ch == '`') {
        *kind = SX_SQLTOKEN_QUOTED_ID;
        return scan_quoted(c, '`', "quoted identifier", err);
    }
    if (is_word_byte(ch)) {
        *kind = SX_SQLTOKEN_WORD;
        while (is_word_byte(peek(c, 0)))
            advance(c, 1);
        return 0;
    }
    if (ch == '/' && peek(c, 1) == '*' && peek(c, 2) == '+') {
        *kind = SX_SQLTOKEN_HINT_START;
        c->in_hint = true;
        advance(c, 3);
        return 0;
    }
    if (c->in_hint && ch == '*' && peek(c, 1) == '/') {
        *kind = SX_SQLTOKEN_HINT_END;
        c->in_hint = false;
        advance(c, 2);
        return 0;
    }
    *kind = SX_SQLTOKEN_SYMBOL;
    advance(c, 1);
    return 0;
}

static void push_token(sx_sqllex_t *self, const sx_sqltoken_t *token)
{
    if (self->count == self->capacity) {
        self->capacity = self->capacity ? 2 * self->capacity : 64;
        self->tokens = sx_realloc(self->tokens, self->capacity, sizeof *self->tokens);
    }
    self->tokens[self->count++] = *token;
}

static int tokenize(sx_sqllex_t *self, sx_error_t *err)
{
    cursor_t c = {.text = self->text, .pos = 0, .line = 1, .column = 1, .in_hint = false};
    size_t hint_line = 0, hint_column = 0;
    for (;;) {
        if (skip_blank(&c, err) != 0)
            return -1;
        if (peek(&c, 0) == '\0')
            break;
        sx_sqltoken_t token = {.start = c.pos, .line = c.line, .column = c.column};
        if (scan_token(&c, &token.kind, err) != 0)
            return -1;
        token.length = c.pos - token.start;
        if (token.kind == SX_SQLTOKEN_HINT_START) {
            hint_line = token.line;
            hint_column = token.column;
        }
        push_token(self, &token);
    }
    if (c.in_hint)
        return sx_error_set(err, "unterminated hint starting at line %zu, column %zu",
                            hint_line, hint_column);
    return 0;
}

sx_sqllex_t *sx_sqllex_new(const char *sql, sx_error_t *err)
{
    sx_sqllex_t *self = sx_new(sx_sqllex_t);
    self->text = sx_strdup(sql ? sql : "");
    if (tokenize(self, err) != 0)
        sx_sqllex_destroy(&self);
    return self;
}

void sx_sqllex_destroy(sx_sqllex_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_sqllex_t *self = *self_p;
    free(self->tokens);
    free(self->text);
    free(self);
    *self_p = NULL;
}

size_t sx_sqllex_count(const sx_sqllex_t *self)
{
    return self->count;
}

const sx_sqltoken_t *sx_sqllex_token(const sx_sqllex_t *self, size_t index)
{
    return index < self->count ? &self->tokens[index] : NULL;
}

const char *sx_sqllex_text(const sx_sqllex_t *self)
{
    return self->text;
}

bool sx_sqllex_is_word(const sx_sqllex_t *self, size_t index, const char *word)
{
    const sx_sqltoken_t *token = sx_sqllex_token(self, index);
    return token && token->kind == SX_SQLTOKEN_WORD && strlen(word) == token->length &&
           strncasecmp(self->text + token->start, word, token->length) == 0;
}

bool sx_sqllex_is_symbol(const sx_sqllex_t *self, size_t index, char symbol)
{
    const sx_sqltoken_t *token = sx_sqllex_token(self, index);
    return token && token->kind == SX_SQLTOKEN_SYMBOL &&
           self->text[token->start] == symbol;
}

/* Copies body (between the quotes) undoing doubled quotes. */
static char *unquote(const char *body, size_t length, char quote)
{
    char *out = sx_alloc(length + 1, 1);
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        if (body[i] == quote && i + 1 < length && body[i + 1] == quote)
            out[n++] = body[i++];
        else
            out[n++] = body[i];
    }
    out[n] = '\0';
    return out;
}

char *sx_sqllex_value(const sx_sqllex_t *self, size_t index)
{
    const sx_sqltoken_t *token = sx_sqllex_token(self, index);
    if (!token)
        return NULL;
    const char *start = self->text + token->start;
    switch (token->kind) {
    case SX_SQLTOKEN_WORD:
        return sx_strndup(start, token->length);
    case SX_SQLTOKEN_QUOTED_ID:
        return unquote(start + 1, token->length - 2, '`');
    case SX_SQLTOKEN_STRING:
        return unquote(start + 1, token->length - 2, '\'');
    default:
        return NULL;
    }
}

size_t sx_sqllex_name(const sx_sqllex_t *self, size_t at, size_t end, char *parts[4],
                      size_t *count)
{
    size_t i = at;
    *count = 0;
    while (i < end && *count < 4) {
        sx_sqltoken_kind_t kind = self->tokens[i].kind;
        if (kind != SX_SQLTOKEN_WORD && kind != SX_SQLTOKEN_QUOTED_ID)
            break;
        parts[(*count)++] = sx_sqllex_value(self, i++);
        if (!sx_sqllex_is_symbol(self, i, '.'))
            break;
        i++;
    }
    return i;
}

bool sx_sqllex_names_table(char *const *parts, size_t count, const char *table)
{
    static const char *const qualifiers[] = {"default_catalog", "default_database"};
    if (count == 0 || count > 3 || !parts[count - 1] ||
        strcmp(parts[count - 1], table) != 0)
        return false;
    for (size_t i = 0; i + 1 < count; i++)
        if (!parts[i] || strcmp(parts[i], qualifiers[i + 3 - count]) != 0)
            return false;
    return true;
}

/* Test helpers: the kinds and values of a text's tokens, joined by '|'. */
static void check_values(const char *sql, const char *expected)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_sqllex_t *lex = sx_sqllex_new(sql, &err);
    SX_CHECK(lex);
    char joined[512] = "";
    for (size_t i = 0; i < sx_sqllex_count(lex); i++) {
        char *value = sx_sqllex_value(lex, i);
        const sx_sqltoken_t *token = sx_sqllex_token(lex, i);
        char piece[128];
        if (value)
            snprintf(piece, sizeof piece, "%s%s", i ? "|" : "", value);
        else
            snprintf(piece, sizeof piece, "%s<%.*s>", i ? "|" : "", (int)token->length,
                     sx_sqllex_text(lex) + token->start);
        strncat(joined, piece, sizeof joined - strlen(joined) - 1);
        free(value);
    }
    if (strcmp(joined, expected) != 0)
        fprintf(stderr, "sqllex: %s\n  got      %s\n  expected %s\n", sql, joined,
                expected);
    SX_CHECK(strcmp(joined, expected) == 0);
    sx_sqllex_destroy(&lex);
    SX_CHECK(lex == NULL);
}

static void check_error(const char *sql, const char *expected)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_sqllex_t *lex = sx_sqllex_new(sql, &err);
    SX_CHECK(lex == NULL);
    if (strcmp(err.msg, expected) != 0)
        fprintf(stderr, "sqllex: %s\n  got      %s\n  expected %s\n", sql, err.msg,
                expected);
    SX_CHECK(strcmp(err.msg, expected) == 0);
}

void sx_sqllex_test(bool verbose)
{
    (void)verbose;
    /* Words, symbols, strings with '' escapes, backtick identifiers. */
    check_values("SELECT a,b FROM t;", "SELECT|a|<,>|b|FROM|t|<;>");
    check_values("SELECT 'it''s; here' AS `my``col`", "SELECT|it's; here|AS|my`col");
    /* Comments vanish, wherever the quote characters in them are. */
    check_values("SELECT 1 -- it's ; gone\n, 2 // also ' gone\n/* multi\n ' ; */ x",
                 "SELECT|1|<,>|2|x");
    /* Block comments do not nest: the first star-slash ends it. */
    check_values("a /* /* inner */ b */", "a|b|<*>|</>");
    /* Hints keep their contents as tokens; a star-slash inside a hint string
     * does not close the hint. */
    check_values("SELECT /*+ OPTIONS('k'='*/') */ x",
                 "SELECT|</*+>|OPTIONS|<(>|k|<=>|*/|<)>|<*/>|x");
    /* Flink 1.20's parser has no C-style E'...' strings (its token list has
     * no C_STYLE_ESCAPED_STRING_LITERAL): E is a word, a backslash is an
     * ordinary byte, and '' is the only escape. N'', X'', U&'' and
     * _charset'' are a prefix word (and '&') before a plain string. */
    check_values("E'a\\';b''''", "E|a\\|<;>|b|'");
    check_values("X'0A' U&'d' _latin1'y'", "X|0A|U|<&>|d|_latin1|y");
    /* Line comments end at \n or at a lone \r (Calcite's SINGLE_LINE_COMMENT). */
    check_values("a -- x\rb // y\r\nc --z", "a|b|c");
    check_values("a --x\r/*+ OPTIONS */", "a|</*+>|OPTIONS|<*/>");
    /* A vertical tab is no blank to Calcite. */
    check_values("a\vb", "a|<\v>|b");
    /* A double quote is a symbol to Flink, not a quote. */
    check_values("\"a b\"", "<\">|a|b|<\">");
    /* Unicode stays inside words; $ and _ are word bytes. */
    check_values("SELECT prix_€ FROM $t", "SELECT|prix_€|FROM|$t");
    check_values("", "");
    check_values("  -- only a comment", "");

    check_error("SELECT 'abc", "unterminated string starting at line 1, column 8");
    check_error("SELECT\n  `abc",
                "unterminated quoted identifier starting at line 2, column 3");
    check_error("x /* never closed", "unterminated comment starting at line 1, column 3");
    check_error("SELECT /*+ BROADCAST(t) x",
                "unterminated hint starting at line 1, column 8");
    check_error("E'a\\''", "unterminated string starting at line 1, column 2");

    /* Positions, word and symbol tests. */
    sx_error_t err;
    sx_sqllex_t *lex = sx_sqllex_new("select\n  x;", &err);
    SX_CHECK(lex && sx_sqllex_count(lex) == 3);
    SX_CHECK(sx_sqllex_is_word(lex, 0, "SELECT"));
    SX_CHECK(!sx_sqllex_is_word(lex, 0, "SELEC"));
    SX_CHECK(!sx_sqllex_is_word(lex, 5, "SELECT"));
    SX_CHECK(sx_sqllex_is_symbol(lex, 2, ';'));
    SX_CHECK(!sx_sqllex_is_symbol(lex, 1, ';'));
    SX_CHECK(sx_sqllex_token(lex, 1)->line == 2 && sx_sqllex_token(lex, 1)->column == 3);
    SX_CHECK(sx_sqllex_token(lex, 3) == NULL);
    sx_sqllex_destroy(&lex);
    sx_sqllex_destroy(&lex);
}
