/* logfile.c: a test's log caught in a file (see logfile.h). */
#include "tests/kit/logfile.h"

#include "common/selftest.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void sx_logfile_start(sx_logfile_t *self, const char *path, sx_log_level_t level)
{
    snprintf(self->path, sizeof self->path, "%s", path);
    fflush(stderr);
    self->saved_stderr = dup(STDERR_FILENO);
    int file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    SX_CHECK(self->saved_stderr >= 0 && file >= 0);
    SX_CHECK(dup2(file, STDERR_FILENO) == STDERR_FILENO && close(file) == 0);
    self->saved_level = sx_log_level();
    sx_log_set_level(level);
}

void sx_logfile_stop(sx_logfile_t *self)
{
    sx_log_set_level(self->saved_level);
    fflush(stderr);
    SX_CHECK(dup2(self->saved_stderr, STDERR_FILENO) == STDERR_FILENO);
    close(self->saved_stderr);
}

char *sx_logfile_messages(const sx_logfile_t *self)
{
    FILE *log = fopen(self->path, "r");
    SX_CHECK(log);
    char *text = NULL, line[2048];
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    while (fgets(line, sizeof line, log)) {
        const char *message = strstr(line, "] ");
        fputs(message ? message + 2 : line, out);
    }
    fclose(out);
    fclose(log);
    return text;
}
