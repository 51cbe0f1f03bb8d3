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
    if (verbose)
        printf("OK\n");
}
