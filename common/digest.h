/* digest.h: content hashes, and the fingerprint of what an outcome is
 * computed from. sx_hash_bytes / sx_hash_file give the SHA-1 of bytes or of a
 * file (bench files travel and are cached by it). An sx_digest_t folds a
 * sequence of inputs (lines, a candidate's SQL, files by their hash) into
 * one SHA-1, always in the same byte layout, so that two fingerprints are
 * equal exactly when their inputs were: the coordinator's journal keys a
 * settled verdict on one (coordinator.c), the worker's result cache a final
 * CSV (worker/resultcache.h). */
#ifndef SX_DIGEST_H
#define SX_DIGEST_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SHA-1 of bytes / of a file as 40 lowercase hex digits into hex[41]. */
void sx_hash_bytes(const void *data, size_t size, char hex[41]);
int sx_hash_file(const char *path, char hex[41], uint64_t *size_p, sx_error_t *err);

typedef struct _sx_digest_t sx_digest_t;

sx_digest_t *sx_digest_new(void);
void sx_digest_destroy(sx_digest_t **self_p);

/* Adds one line: the formatted text and a newline. */
void sx_digest_line(sx_digest_t *self, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Adds a candidate: "sql\n" and its text with the terminating NUL (so no
 * SQL can pass for the lines after it), or "no prediction\n" for NULL. */
void sx_digest_sql(sx_digest_t *self, const char *sql);
/* Adds a file by its content hash and its path: "HASH PATH\n". */
void sx_digest_file(sx_digest_t *self, const char *hash, const char *path);
/* The SHA-1 of everything added, into hex[41]. */
void sx_digest_hex(sx_digest_t *self, char hex[41]);

void sx_digest_test(bool verbose);

#endif
