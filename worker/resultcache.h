/* resultcache.h: the worker's result cache, so that an incremental run (a
 * method that changed 20 of 402 candidates) sends only the changed ones to
 * Kafka and Flink. An entry is the final CSV of one execution, filed under
 * a key that digests everything that decides that CSV: the execution
 * semantics version (SX_EXEC_SEMANTICS), what executes it (the Flink, Kafka
 * and connector versions), the candidate SQL as submitted and the task's
 * own files (tasks/ID/..., by content hash), and the sample number when it
 * is not 0: each sample of a task is its own execution, so two samples with
 * the same SQL never share an entry (and sample 0's keys are those of a run
 * of one sample per task). Gold and evaluation are not in
 * the key: they do not decide the CSV, and a hit is always scored again
 * (so a fixed gold or another profile needs no execution). A changed input
 * is a changed key, so a stale CSV is never served.
 *
 * It lives on the worker because that is where the three kinds of input
 * meet: the task's files arrive there by hash, the executor knows its
 * versions, and one folder per machine is shared by every run, method and
 * worker process on it (entries are named by key and written atomically, so
 * concurrent writers of one key are harmless).
 *
 * Only a genuine execution outcome with a final CSV is kept: match and
 * mismatch. flink_error and timeout are not (a timeout depends on the load
 * of the machine, and a Flink failure may be the pair's), nor is anything
 * else (infra_error, an interrupted task, a rejected or missing candidate
 * never reaches Flink anyway).
 *
 * An entry keeps the figures of the changelog the CSV was folded from
 * (results.jsonl "changelog"), so a result served from the cache reports
 * the execution that made its CSV.
 *
 * Layout: DIR/v2/AB/KEY, one file per entry: a header line
 * "streamex-result-cache 2 SHA1 SIZE CHANGELOG", CHANGELOG being the six
 * counts (insert update_before update_after delete tombstone rows) or "-"
 * when unknown, and the CSV's bytes, written to a temporary name, fsync'ed
 * and renamed. A read checks the header, the size and the hash; an entry
 * that fails any check is logged, removed and treated as a miss, never
 * served. (DIR/v1 holds the entries of the format without the changelog,
 * which this version leaves alone.) */
#ifndef SX_RESULTCACHE_H
#define SX_RESULTCACHE_H

#include "common/error.h"
#include "common/status.h"
#include "proto/proto.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct _sx_resultcache_t sx_resultcache_t;

/* Opens (creates) the cache in dir for an executor described by runtime,
 * e.g. "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1". */
sx_resultcache_t *sx_resultcache_open(const char *dir, const char *runtime,
                                      sx_error_t *err);
void sx_resultcache_destroy(sx_resultcache_t **self_p);

/* The key of a task's execution: its sample, its candidate sql (not NULL)
 * and, of the shard's files, those under tasks/TASK_ID/ (in path order). */
void sx_resultcache_key(const sx_resultcache_t *self, const char *task_id, int sample,
                        const char *sql, const sx_msg_file_t *files, size_t file_count,
                        char key[41]);

/* Whether a result of this status is kept (match, mismatch). */
bool sx_resultcache_keeps(sx_status_t status);

/* Copies the entry of key to csv_path and its changelog figures to
 * *changelog: 1 on a hit, 0 on a miss (also for a corrupt entry, which is
 * logged and removed), -1 when the copy cannot be written (err says why). */
int sx_resultcache_get(sx_resultcache_t *self, const char *key, const char *csv_path,
                       sx_changelog_counts_t *changelog, sx_error_t *err);
/* Stores the CSV at csv_path and its changelog figures under key, atomically. */
int sx_resultcache_put(sx_resultcache_t *self, const char *key, const char *csv_path,
                       const sx_changelog_counts_t *changelog, sx_error_t *err);

void sx_resultcache_test(bool verbose);

#endif
