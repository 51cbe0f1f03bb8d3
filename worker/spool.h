/* spool.h: a worker's durable outbox. Every result is written here (one file
 * per key, fsync'ed, renamed into place) before it is sent, and removed only
 * when the coordinator acknowledges it; after a reconnect or a restart the
 * worker sends whatever is still in the spool again. */
#ifndef SX_SPOOL_H
#define SX_SPOOL_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct _sx_spool_t sx_spool_t;

/* Opens (creating if needed) the spool folder dir. */
sx_spool_t *sx_spool_open(const char *dir, sx_error_t *err);
void sx_spool_destroy(sx_spool_t **self_p);

/* Stores bytes under key (a safe file name), replacing an older entry. */
int sx_spool_put(sx_spool_t *self, const char *key, const void *data, size_t size,
                 sx_error_t *err);
/* Removes key; a key that is not there is fine (a repeated ACK). */
void sx_spool_remove(sx_spool_t *self, const char *key);
/* Number of entries, and the bytes of each in key order through `visit`
 * (which returns non-zero to stop). */
size_t sx_spool_count(sx_spool_t *self);
int sx_spool_each(sx_spool_t *self,
                  int (*visit)(const char *key, const void *data, size_t size, void *arg),
                  void *arg, sx_error_t *err);

void sx_spool_test(bool verbose);

#endif
