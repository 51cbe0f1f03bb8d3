/* testbench.c: the throw-away benchmark folder of the self-tests (see testbench.h). */
#include "tests/kit/testbench.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_text(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, text, strlen(text), NULL) == 0);
}

char *sx_testbench_make(size_t tasks, const char *const *markers)
{
    char templ[] = "/tmp/sx-testbench-XXXXXX";
    SX_CHECK(mkdtemp(templ));
    char *dir = sx_strdup(templ);
    char *ids = sx_alloc(tasks + 1, 8);
    char *preds = sx_alloc(tasks + 1, 256);
    for (size_t i = 0; i < tasks; i++) {
        char id[32], rel[128], text[512];
        snprintf(id, sizeof id, "t%03zu", i + 1);
        strcat(ids, id);
        strcat(ids, "\n");
        snprintf(rel, sizeof rel, "tasks/%s/task.json", id);
        snprintf(text, sizeof text, "{\"task_id\": \"%s\", \"timeout_s\": 1}\n", id);
        write_text(dir, rel, text);
        snprintf(rel, sizeof rel, "tasks/%s/sources/s.csv", id);
        write_text(dir, rel, "a,b\n1,2\n");
        snprintf(rel, sizeof rel, "gold/%s.csv", id);
        snprintf(text, sizeof text, "x\n%zu\n", i + 1);
        write_text(dir, rel, text);
        snprintf(rel, sizeof rel, "evaluation/%s.json", id);
        write_text(dir, rel, "{}\n");
        const char *marker = markers && markers[i] ? markers[i] : "";
        if (strcmp(marker, "-") == 0)
            continue;
        snprintf(text, sizeof text, "{\"task_id\": \"%s\", \"sql\": \"SELECT %zu %s\"}\n",
                 id, i + 1, marker);
        strcat(preds, text);
    }
    write_text(dir, "task_ids.txt", ids);
    write_text(dir, "preds.jsonl", preds);
    free(ids);
    free(preds);
    return dir;
}

void sx_testbench_remove(char **dir_p)
{
    if (!*dir_p)
        return;
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", *dir_p);
    SX_CHECK(system(cmd) == 0);
    free(*dir_p);
    *dir_p = NULL;
}

long sx_testbench_count_lines(const char *path)
{
    size_t size = 0;
    char *data = sx_file_read(path, (size_t)1 << 30, &size, NULL);
    if (!data)
        return -1;
    long lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    free(data);
    return lines;
}
