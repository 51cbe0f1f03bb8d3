/* mem.c: the aborting allocator of mem.h. The one place that decides what
 * happens when memory runs out. */
#include "common/mem.h"

#include "common/selftest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t count, size_t size, const char *file, int line)
{
    fprintf(stderr, "streamex: out of memory: %zu x %zu bytes at %s:%d\n", count, size,
            file, line);
    abort();
}

static size_t checked_bytes(size_t count, size_t size, const char *file, int line)
{
    if (size != 0 && count > SIZE_MAX / size)
        out_of_memory(count, size, file, line);
    return count * size;
}

void *sx_mem_alloc(size_t count, size_t size, const char *file, int line)
{
    checked_bytes(count, size, file, line);
    /* calloc(0, ...) may return NULL: ask for one byte so NULL means failure. */
    void *ptr = calloc(count ? count : 1, size ? size : 1);
    if (!ptr)
        out_of_memory(count, size, file, line);
    return ptr;
}

void *sx_mem_realloc(void *ptr, size_t count, size_t size, const char *file, int line)
{
    size_t bytes = checked_bytes(count, size, file, line);
    void *grown = realloc(ptr, bytes ? bytes : 1);
    if (!grown)
        out_of_memory(count, size, file, line);
    return grown;
}

char *sx_mem_strndup(const char *text, size_t length, const char *file, int line)
{
    char *copy = sx_mem_alloc(length + 1, 1, file, line);
    memcpy(copy, text, length);
    return copy;
}

char *sx_mem_strdup(const char *text, const char *file, int line)
{
    return sx_mem_strndup(text, strlen(text), file, line);
}

char *sx_mem_strdup_or_null(const char *text, const char *file, int line)
{
    return text ? sx_mem_strdup(text, file, line) : NULL;
}

char *sx_mem_vformat(const char *file, int line, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int length = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    /* Only an unencodable argument or a result past INT_MAX fails here: a
     * format the program wrote itself, as fatal as a failed allocation. */
    if (length < 0) {
        fprintf(stderr, "streamex: cannot format \"%s\" at %s:%d\n", fmt, file, line);
        abort();
    }
    char *text = sx_mem_alloc((size_t)length + 1, 1, file, line);
    vsnprintf(text, (size_t)length + 1, fmt, ap);
    return text;
}

char *sx_mem_format(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = sx_mem_vformat(file, line, fmt, ap);
    va_end(ap);
    return text;
}

/* For the self-test: sx_vformat reached through a va_list, as a variadic
 * wrapper such as sx_problems_add reaches it. */
__attribute__((format(printf, 1, 2))) static char *format_via_va_list(const char *fmt,
                                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = sx_vformat(fmt, ap);
    va_end(ap);
    return text;
}

void sx_mem_test(bool verbose)
{
    if (verbose)
        printf(" * sx_mem: ");
    int *zeros = sx_alloc(4, sizeof(int));
    SX_CHECK(zeros[0] == 0 && zeros[3] == 0);
    zeros = sx_realloc(zeros, 1000, sizeof(int));
    zeros[999] = 7;
    SX_CHECK(zeros[0] == 0 && zeros[999] == 7);
    free(zeros);
    void *empty = sx_alloc(0, 8);
    SX_CHECK(empty != NULL);
    free(empty);
    char *copy = sx_strndup("abcdef", 3);
    SX_CHECK(strcmp(copy, "abc") == 0);
    free(copy);
    copy = sx_strdup("streamex");
    SX_CHECK(strcmp(copy, "streamex") == 0);
    free(copy);
    SX_CHECK(sx_strdup_or_null(NULL) == NULL);
    copy = sx_strdup_or_null("x");
    SX_CHECK(strcmp(copy, "x") == 0);
    free(copy);
    copy = sx_format("%s/%d:%.*s", "pairs", 7, 2, "abc");
    SX_CHECK(strcmp(copy, "pairs/7:ab") == 0);
    free(copy);
    copy = sx_format("%s", "");
    SX_CHECK(copy[0] == '\0');
    free(copy);
    char long_text[5000];
    memset(long_text, 'y', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    copy = format_via_va_list("<%s>", long_text);
    SX_CHECK(strlen(copy) == sizeof long_text + 1 && copy[0] == '<' && copy[1] == 'y');
    free(copy);
    if (verbose)
        printf("OK\n");
}
