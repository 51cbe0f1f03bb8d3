/* fuzz_changelog.c: changelog decoding (worker/exec/materialize.c). The first
 * byte picks the sink kind (upsert, debezium-json, append json), the rest is
 * one output-topic record a line, "KEY<TAB>VALUE" or just "VALUE" (no key);
 * a KEY or VALUE of exactly "-" is absent (a NULL value is a tombstone).
 * Every record is applied or refused with a message naming its offset, and
 * the relation is then written as the final CSV. */
#include "worker/exec/materialize.h"

#include "scratch.h"

#include <stdlib.h>
#include <string.h>

static const sx_field_t s_schema[] = {
    {"id", "BIGINT"}, {"name", "STRING"}, {"v", "DOUBLE"}};

/* One part of a record: NULL when absent ("-"). */
static const char *part(const char *text, size_t length, size_t *length_p)
{
    *length_p = length;
    return length == 1 && text[0] == '-' ? NULL : text;
}

static void apply_line(sx_materialize_t *relation, int64_t offset, const char *line,
                       size_t length)
{
    const char *tab = memchr(line, '\t', length);
    size_t key_length = 0, value_length = 0;
    const char *key = tab ? part(line, (size_t)(tab - line), &key_length) : NULL;
    const char *value_text = tab ? tab + 1 : line;
    const char *value =
        part(value_text, length - (size_t)(value_text - line), &value_length);
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_materialize_apply(relation, offset, key, key_length, value, value_length,
                             &err) != 0 &&
        strncmp(err.msg, "offset ", 7) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    if (size == 0)
        return 0;
    static const sx_changelog_t kinds[] = {SX_CHANGELOG_UPSERT, SX_CHANGELOG_DEBEZIUM,
                                           SX_CHANGELOG_APPEND};
    sx_materialize_t *relation =
        sx_materialize_new(kinds[(unsigned char)data[0] % 3], s_schema, 3);
    if (!relation)
        abort();
    int64_t offset = 0;
    for (const char *line = data + 1, *end = data + size; line < end; offset++) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        size_t length = newline ? (size_t)(newline - line) : (size_t)(end - line);
        apply_line(relation, offset, line, length);
        line += length + 1;
    }
    static char *s_path;
    if (!s_path)
        s_path = scratch_path("final.csv");
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_materialize_finish(relation, &err) != 0 && strncmp(err.msg, "offset ", 7) != 0)
        abort();
    if (sx_materialize_write(relation, s_path, &err) != 0)
        abort();
    sx_materialize_destroy(&relation);
    return 0;
}
