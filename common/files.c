/* files.c: whole-file reads, atomic durable writes and mkdir -p (see files.h). */
#include "common/files.h"

#include "common/selftest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *sx_file_read(const char *path, size_t max_bytes, size_t *size_p, sx_error_t *err)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fileno(in), &st) != 0 || (size_t)st.st_size > max_bytes) {
        fclose(in);
        return sx_error_set(err, "%s: larger than %zu bytes", path, max_bytes), NULL;
    }
    size_t size = (size_t)st.st_size;
    char *data = malloc(size + 1);
    size_t got = data ? fread(data, 1, size, in) : 0;
    fclose(in);
    if (!data || got != size) {
        free(data);
        return sx_error_set(err, "%s: cannot read", path), NULL;
    }
    data[size] = '\0';
    *size_p = size;
    return data;
}

static int fsync_dir_of(const char *path)
{
    char *dir = strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int fd = open(slash ? (*dir ? dir : "/") : ".", O_RDONLY | O_DIRECTORY);
    free(dir);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int sx_file_write_atomic(const char *path, const void *data, size_t size, sx_error_t *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return sx_error_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t wrote = write(fd, p, left);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0) {
            int saved = errno;
            close(fd);
            unlink(tmp);
            return sx_error_set(err, "%s: write failed: %s", tmp, strerror(saved));
        }
        p += wrote;
        left -= (size_t)wrote;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        unlink(tmp);
        return sx_error_set(err, "%s: fsync failed: %s", tmp, strerror(errno));
    }
    if (rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        return sx_error_set(err, "%s: cannot rename into place: %s", path,
                            strerror(saved));
    }
    fsync_dir_of(path);
    return 0;
}

int sx_mkdirs(const char *path, sx_error_t *err)
{
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", path);
    for (char *p = buffer + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
            return sx_error_set(err, "%s: cannot create folder: %s", buffer,
                                strerror(errno));
        *p = '/';
    }
    if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
        return sx_error_set(err, "%s: cannot create folder: %s", buffer, strerror(errno));
    return 0;
}

int sx_mkdirs_for(const char *path, sx_error_t *err)
{
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", path);
    char *slash = strrchr(buffer, '/');
    if (!slash || slash == buffer)
        return 0;
    *slash = '\0';
    return sx_mkdirs(buffer, err);
}

bool sx_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void sx_files_test(bool verbose)
{
    (void)verbose;
    char dir[] = "/tmp/sx-files-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/a/b/c.txt", dir);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, "hello", 5, NULL) == 0);
    SX_CHECK(sx_file_exists(path));
    size_t size = 0;
    char *data = sx_file_read(path, 100, &size, NULL);
    SX_CHECK(data && size == 5 && strcmp(data, "hello") == 0);
    free(data);
    sx_error_t err;
    SX_CHECK(sx_file_read(path, 4, &size, &err) == NULL && strstr(err.msg, "larger"));
    SX_CHECK(sx_file_write_atomic(path, "", 0, NULL) == 0);
    data = sx_file_read(path, 100, &size, NULL);
    SX_CHECK(data && size == 0);
    free(data);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
