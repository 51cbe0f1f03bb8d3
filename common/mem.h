/* mem.h: streamex's one policy for running out of memory. Every heap
 * allocation goes through these functions, which never return NULL: on
 * failure they print what could not be allocated and where, and abort, as
 * CZMQ's zmalloc and Redis's zmalloc do. A process out of memory cannot
 * report a verdict it can trust, and the coordinator's journal (fsynced per
 * result) keeps everything settled before the abort, so a crash loses
 * nothing that `--resume` cannot redo. Callers therefore never check the
 * result. */
#ifndef SX_MEM_H
#define SX_MEM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Zeroed memory for count items of size bytes; the product is checked for
 * overflow. */
#define sx_alloc(count, size) sx_mem_alloc((count), (size), __FILE__, __LINE__)
/* Resizes ptr (may be NULL) to count items of size bytes, not zeroed. */
#define sx_realloc(ptr, count, size)                                                     \
    sx_mem_realloc((ptr), (count), (size), __FILE__, __LINE__)
/* A heap copy of a NUL-terminated string. */
#define sx_strdup(text) sx_mem_strdup((text), __FILE__, __LINE__)
/* A heap copy of the first length bytes of text, NUL-terminated. */
#define sx_strndup(text, length) sx_mem_strndup((text), (length), __FILE__, __LINE__)
/* A heap copy of text, or NULL when text is NULL (an optional field). */
#define sx_strdup_or_null(text) sx_mem_strdup_or_null((text), __FILE__, __LINE__)
/* One zeroed object of a type: `sx_job_t *job = sx_new(sx_job_t);` */
#define sx_new(type) ((type *)sx_alloc(1, sizeof(type)))
/* printf into a new heap string: `char *sx_format(const char *fmt, ...)`;
 * sx_vformat(fmt, ap) takes a va_list. Freed with free(). */
#define sx_format(...) sx_mem_format(__FILE__, __LINE__, __VA_ARGS__)
#define sx_vformat(fmt, ap) sx_mem_vformat(__FILE__, __LINE__, (fmt), (ap))

void *sx_mem_alloc(size_t count, size_t size, const char *file, int line);
void *sx_mem_realloc(void *ptr, size_t count, size_t size, const char *file, int line);
char *sx_mem_strdup(const char *text, const char *file, int line);
char *sx_mem_strndup(const char *text, size_t length, const char *file, int line);
char *sx_mem_strdup_or_null(const char *text, const char *file, int line);
char *sx_mem_format(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *sx_mem_vformat(const char *file, int line, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

void sx_mem_test(bool verbose);

#endif
