/* scratch.h: a private folder in tmpfs for the fuzz targets whose module
 * only reads files (task.json, predictions): made on first use, one per
 * process, removed at exit. Each input is written to a file there, so the
 * module's own file reading is fuzzed too, at memory speed. */
#ifndef SX_FUZZ_SCRATCH_H
#define SX_FUZZ_SCRATCH_H

#include <stddef.h>

/* The folder (/dev/shm/sxfuzz-PID, or under $TMPDIR when /dev/shm is absent). */
const char *scratch_dir(void);
/* Heap path of `relative` inside the folder. */
char *scratch_path(const char *relative);
/* Writes bytes to `relative` (its parent folders are made); aborts on failure,
 * which is the harness's fault, not the module's. */
void scratch_write(const char *relative, const void *data, size_t size);

#endif
