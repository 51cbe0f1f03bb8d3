/* scratch.c: the tmpfs folder of the fuzz targets (see scratch.h). */
#include "scratch.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char s_dir[256];

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_dir(void)
{
    nftw(s_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *scratch_dir(void)
{
    if (s_dir[0])
        return s_dir;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(s_dir, sizeof s_dir, "%s/sxfuzz-%d", base ? base : "/tmp", (int)getpid());
    if (mkdir(s_dir, 0700) != 0) {
        perror(s_dir);
        abort();
    }
    atexit(remove_dir);
    return s_dir;
}

char *scratch_path(const char *relative)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", scratch_dir(), relative) < 0)
        abort();
    return path;
}

/* mkdir -p of the folders above path's last component. */
static void make_parents(char *path)
{
    for (char *slash = strchr(path + strlen(scratch_dir()) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
}

void scratch_write(const char *relative, const void *data, size_t size)
{
    char *path = scratch_path(relative);
    make_parents(path);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(data, 1, size, out) != size || fclose(out) != 0) {
        perror(path);
        abort();
    }
    free(path);
}
