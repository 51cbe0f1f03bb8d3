/* files.h: the small file operations that result files, the journal, the
 * spool and file transfer rely on to never leave a half-written file behind: whole-file
 * reads with a size cap, atomic writes (temporary name, fsync, rename, fsync of the
 * folder) and creating a folder with its parents. */
#ifndef SX_FILES_H
#define SX_FILES_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

/* Reads a whole file (NUL-terminated for convenience; *size_p excludes it).
 * A file over max_bytes is an error. */
char *sx_file_read(const char *path, size_t max_bytes, size_t *size_p, sx_error_t *err);
/* Writes bytes to path atomically and durably. */
int sx_file_write_atomic(const char *path, const void *data, size_t size,
                         sx_error_t *err);
/* mkdir -p */
int sx_mkdirs(const char *path, sx_error_t *err);
/* mkdir -p of the folder holding path */
int sx_mkdirs_for(const char *path, sx_error_t *err);
bool sx_file_exists(const char *path);

void sx_files_test(bool verbose);

#endif
