/* fuzz_task.c: task.json loading (common/bench/task.c). Each input is written as
 * BENCH/tasks/t/task.json in a tmpfs bench whose task folder holds the
 * header of every source CSV the test benches use: sources/NAME.csv for
 * tests/data, sample/NAME.csv for the sample bench (whose seeds say so), so
 * inputs made from their task.json files reach the source and header
 * checks. A task loads, or there is at least one problem, never both. */
#include "common/bench/task.h"

#include "scratch.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Puts the first line of one CSV at tasks/t/FOLDER/NAME. */
static void copy_header(const char *path, const char *folder)
{
    char relative[512];
    snprintf(relative, sizeof relative, "tasks/t/%s/%s", folder, strrchr(path, '/') + 1);
    FILE *in = fopen(path, "rb");
    if (!in)
        abort();
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length = getline(&line, &capacity, in);
    scratch_write(relative, line, length > 0 ? (size_t)length : 0);
    free(line);
    fclose(in);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const struct {
        const char *pattern, *folder;
    } sources[] = {
        {SX_SOURCE_DIR "/tests/data/*/tasks/*/sources/*.csv", "sources"},
        {SX_SOURCE_DIR "/examples/sample-bench/tasks/*/sources/*.csv", "sample"},
    };
    for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++) {
        glob_t found;
        if (glob(sources[s].pattern, 0, NULL, &found) != 0)
            abort();
        for (size_t i = 0; i < found.gl_pathc; i++)
            copy_header(found.gl_pathv[i], sources[s].folder);
        globfree(&found);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    scratch_write("tasks/t/task.json", data, size);
    sx_problems_t *problems = sx_problems_new();
    sx_task_t *task = sx_task_check(scratch_dir(), "t", problems);
    if ((task != NULL) == (sx_problems_count(problems) > 0))
        abort();
    sx_task_destroy(&task);
    sx_problems_destroy(&problems);
    return 0;
}
