/* problems.c: the list of every problem a validation found (see problems.h). */
#include "common/bench/problems.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _sx_problems_t {
    char **messages; /* the first SX_PROBLEMS_KEPT problems */
    size_t kept;
    size_t capacity;
    size_t count; /* all problems, kept or not */
};

sx_problems_t *sx_problems_new(void)
{
    return sx_new(sx_problems_t);
}

void sx_problems_destroy(sx_problems_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_problems_t *self = *self_p;
    for (size_t i = 0; i < self->kept; i++)
        free(self->messages[i]);
    free(self->messages);
    free(self);
    *self_p = NULL;
}

/* Makes room for one more message. */
static void reserve_one(sx_problems_t *self)
{
    if (self->kept < self->capacity)
        return;
    self->capacity = self->capacity ? 2 * self->capacity : 16;
    self->messages = sx_realloc(self->messages, self->capacity, sizeof *self->messages);
}

void sx_problems_add(sx_problems_t *self, const char *fmt, ...)
{
    self->count++;
    if (self->kept >= SX_PROBLEMS_KEPT)
        return;
    reserve_one(self);
    va_list ap;
    va_start(ap, fmt);
    self->messages[self->kept++] = sx_vformat(fmt, ap);
    va_end(ap);
}

size_t sx_problems_count(const sx_problems_t *self)
{
    return self->count;
}

size_t sx_problems_kept(const sx_problems_t *self)
{
    return self->kept;
}

const char *sx_problems_get(const sx_problems_t *self, size_t index)
{
    return index < self->kept ? self->messages[index] : NULL;
}

int sx_problems_to_error(const sx_problems_t *self, size_t index, sx_error_t *err)
{
    const char *message = sx_problems_get(self, index);
    return sx_error_set(err, "%s", message ? message : "out of memory");
}

void sx_problems_test(bool verbose)
{
    (void)verbose;
    sx_problems_t *problems = sx_problems_new();
    SX_CHECK(problems);
    SX_CHECK(sx_problems_count(problems) == 0);
    SX_CHECK(sx_problems_get(problems, 0) == NULL);
    sx_problems_add(problems, "%s:%d: empty line", "task_ids.txt", 3);
    sx_problems_add(problems, "task %s: bad", "t1");
    SX_CHECK(sx_problems_count(problems) == 2);
    SX_CHECK(strcmp(sx_problems_get(problems, 0), "task_ids.txt:3: empty line") == 0);
    SX_CHECK(strcmp(sx_problems_get(problems, 1), "task t1: bad") == 0);

    sx_error_t err;
    SX_CHECK(sx_problems_to_error(problems, 1, &err) == -1);
    SX_CHECK(strcmp(err.msg, "task t1: bad") == 0);

    /* Past the cap problems are still counted but no longer kept. */
    for (size_t i = 0; i < SX_PROBLEMS_KEPT + 5; i++)
        sx_problems_add(problems, "problem %zu", i);
    SX_CHECK(sx_problems_count(problems) == SX_PROBLEMS_KEPT + 7);
    SX_CHECK(sx_problems_kept(problems) == SX_PROBLEMS_KEPT);
    SX_CHECK(strcmp(sx_problems_get(problems, SX_PROBLEMS_KEPT - 1), "problem 997") == 0);

    sx_problems_destroy(&problems);
    SX_CHECK(problems == NULL);
    sx_problems_destroy(&problems);
}
