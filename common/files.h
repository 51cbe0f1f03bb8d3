/* files.h: the one place streamex reads and checks files, and the small file
 * operations that result files, the journal, the spool and file transfer rely
 * on to never leave a half-written file behind: atomic writes (temporary
 * name, fsync, rename, fsync of the folder) and creating a folder with its
 * parents.
 *
 * The input rule, for every file read from a bench, a predictions or
 * submission file, or a worker's cache (sx_file_load / sx_file_check):
 * - a regular file only: a FIFO, a device (/dev/zero), a socket or a folder
 *   is refused before it is opened for reading, so nothing blocks or grows
 *   without end;
 * - inside the folder it belongs to after resolving every link (a task's
 *   files in BENCH/tasks/ID, task_ids.txt, gold/ and evaluation/ in BENCH):
 *   a link that leads outside is an error naming the link and its target;
 *   files named by the user (a predictions file, a candidate CSV) have no
 *   such folder;
 * - at most the size limit of its kind (SX_FILE_*), generous by default and
 *   overridable by the environment variable SX_MAX_<KIND>_BYTES (a number
 *   with an optional K, M, G or T suffix, powers of 1024), checked before
 *   and while reading. */
#ifndef SX_FILES_H
#define SX_FILES_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The kinds of input files, each with its own size limit. */
typedef enum {
    SX_FILE_LIST = 0, /* task_ids.txt: SX_MAX_LIST_BYTES, default 64M */
    SX_FILE_JSON,     /* task.json, evaluation/ID.json: SX_MAX_JSON_BYTES, 64M */
    SX_FILE_CSV,      /* source, gold, candidate CSVs: SX_MAX_CSV_BYTES, 4G */
    SX_FILE_JSONL,    /* predictions, submissions: SX_MAX_JSONL_BYTES, 1G */
    SX_FILE_EXTRA,    /* any other file of a task folder: SX_MAX_EXTRA_BYTES, 64M */
    SX_FILE_KIND_COUNT
} sx_file_kind_t;

/* The text `--help` shows about the limits. */
#define SX_FILE_LIMITS_HELP                                                              \
    "Input files must be regular files, inside their folder once links are\n"            \
    "resolved, and within a size limit; raise a limit with its variable:\n"              \
    "  SX_MAX_CSV_BYTES=4G (CSVs)  SX_MAX_JSONL_BYTES=1G (predictions, submissions)\n"   \
    "  SX_MAX_JSON_BYTES=64M (task.json, evaluation)  SX_MAX_LIST_BYTES=64M\n"           \
    "  (task_ids.txt)  SX_MAX_EXTRA_BYTES=64M (other files of a task folder)\n"

/* The kind of a bench file by its name: .csv, .json, task_ids.txt, or any
 * other (SX_FILE_EXTRA). */
sx_file_kind_t sx_file_kind_of(const char *name);

/* The limit of a kind (the environment's when set); err says when the
 * variable's value is not a size. */
int sx_file_limit(sx_file_kind_t kind, size_t *limit_p, sx_error_t *err);

/* Every SX_MAX_*_BYTES set in the environment is a size; err names the
 * first one that is not. Commands call it first: a bad value is bad usage. */
int sx_file_limits_check(sx_error_t *err);

/* Checks path under the input rule without reading it. root is the folder
 * it belongs to, or NULL when it has none. *size_p (may be NULL) receives
 * its size. */
int sx_file_check(const char *root, const char *path, sx_file_kind_t kind, size_t *size_p,
                  sx_error_t *err);

/* Checks that path, once every link is resolved, lies inside root; err
 * names where it leads otherwise. */
int sx_path_check_inside(const char *root, const char *path, sx_error_t *err);

/* Reads a whole file under the input rule (NUL-terminated for convenience;
 * *size_p excludes it). */
char *sx_file_load(const char *root, const char *path, sx_file_kind_t kind,
                   size_t *size_p, sx_error_t *err);

/* Reads a file under the same rule in pieces of `chunk` bytes (the last
 * one shorter), each handed to `each` as it is read, so a large file is
 * never whole in memory; the limit holds however much the file grows while
 * read. A non-zero return from `each` stops the reading and is returned
 * (`each` fills err). */
typedef int(sx_file_chunk_fn)(const char *data, size_t size, void *arg, sx_error_t *err);
int sx_file_read_chunks(const char *root, const char *path, sx_file_kind_t kind,
                        size_t chunk, sx_file_chunk_fn *each, void *arg, sx_error_t *err);

/* The folder holding path ("." for a bare name), on the heap: the root of a
 * file that belongs to its own folder, such as BENCH/gold/ID.csv. */
char *sx_file_folder(const char *path);

/* Reads a whole file that streamex wrote itself (results, journal, spool):
 * regular files only, at most max_bytes. */
char *sx_file_read(const char *path, size_t max_bytes, size_t *size_p, sx_error_t *err);
/* The first max_bytes of a file (a preview): a longer file is cut and
 * *cut_p set, not an error. Never blocks on a FIFO or device. root, when not
 * NULL, is the folder the file belongs to, as for sx_file_check. */
char *sx_file_read_head(const char *root, const char *path, size_t max_bytes,
                        size_t *size_p, bool *cut_p, sx_error_t *err);
/* Reads the whole of a file the user named that may be a pipe (`--sql
 * <(...)`): anything but a folder, at most max_bytes, NUL-terminated. */
char *sx_file_read_stream(const char *path, size_t max_bytes, size_t *size_p,
                          sx_error_t *err);

/* The lines of a loaded text file, for JSONL readers. Each line is cut at
 * '\n' and NUL-terminated in place. */
typedef struct {
    const char *path; /* for messages */
    char *next;
    char *end;
    size_t number; /* of the line last returned, from 1 */
} sx_lines_t;

void sx_lines_init(sx_lines_t *self, const char *path, char *data, size_t size);
/* 1 and the next line in *line_p / *length_p; 0 at the end; -1 when the line
 * holds a NUL byte (err: "PATH:LINE: a NUL byte at column C"), after which
 * the next call goes on with the following line. */
int sx_lines_next(sx_lines_t *self, char **line_p, size_t *length_p, sx_error_t *err);
/* The same, past the blank lines (spaces, tabs and a CR only), which hold
 * nothing to read: 1 and the next line with something on it, 0 at the end,
 * -1 as sx_lines_next. */
int sx_lines_next_filled(sx_lines_t *self, char **line_p, sx_error_t *err);
/* Calls fn on each line of data with something on it, in order, with the
 * line's number from 1, until one call returns non-zero; fn's error gets
 * "PATH:LINE: " in front, a NUL byte is one as in sx_lines_next. Returns 0,
 * or the failing call's value (-1 for a NUL byte). */
typedef int sx_line_fn(char *line, size_t number, void *arg, sx_error_t *err);
int sx_lines_each(const char *path, char *data, size_t size, sx_line_fn *fn, void *arg,
                  sx_error_t *err);

/* The extra room every output folder needs below PATH_MAX for the names
 * written in it (method folders, result files, temporary names). */
#define SX_OUTPUT_PATH_ROOM 400

/* Refuses an output folder before any work: empty, longer than
 * PATH_MAX - SX_OUTPUT_PATH_ROOM, a component longer than NAME_MAX, an
 * existing non-folder, or a folder (or its nearest existing parent) this
 * process cannot write. err says which. */
int sx_output_path_check(const char *path, sx_error_t *err);

/* Writes bytes to path atomically and durably: a batch of one. */
int sx_file_write_atomic(const char *path, const void *data, size_t size,
                         sx_error_t *err);

/* Files written atomically and durably together (group commit): each one
 * goes to a temporary name beside its path when added; commit syncs them
 * all concurrently (the disk takes them
 * together, where one after another each would wait for the last), renames
 * each into place and syncs each of their folders once. When a sync fails,
 * none is renamed; when a rename fails, the ones before it are in place.
 * Either way err names the file and the batch is empty again, its temporary
 * files removed (so are those of a batch destroyed uncommitted). A batch
 * holds a descriptor per file until its commit. */
typedef struct _sx_file_batch_t sx_file_batch_t;
sx_file_batch_t *sx_file_batch_new(void);
int sx_file_batch_add(sx_file_batch_t *self, const char *path, const void *data,
                      size_t size, sx_error_t *err);
/* Adds a file the caller writes through the stream returned (NULL with err
 * set when it cannot be made), piece by piece, never whole in memory;
 * commit flushes and closes it (a write that failed is its error). */
FILE *sx_file_batch_stream(sx_file_batch_t *self, const char *path, sx_error_t *err);
size_t sx_file_batch_count(const sx_file_batch_t *self);
int sx_file_batch_commit(sx_file_batch_t *self, sx_error_t *err);
void sx_file_batch_destroy(sx_file_batch_t **self_p);
/* mkdir -p */
int sx_mkdirs(const char *path, sx_error_t *err);
/* mkdir -p of the folder holding path */
int sx_mkdirs_for(const char *path, sx_error_t *err);
bool sx_file_exists(const char *path);

void sx_files_test(bool verbose);

#endif
