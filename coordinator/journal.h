/* journal.h: the coordinator's durable record of settled results,
 * OUT/journal.jsonl. One line per settled (method, task): {"method": NAME,
 * "inputs": SHA1, "csv_sha1": SHA1, "result": <a results.jsonl object>},
 * fsync'ed before the worker is acknowledged, so a crash or Ctrl-C never
 * loses a settled result and `--resume` re-executes only what the journal
 * does not hold. "inputs" is the coordinator's fingerprint of what the
 * verdict was computed from (NULL when a record predates it); "csv_sha1" the
 * content hash of the final CSV the result points at (absent when it has
 * none or the record predates it), so a CSV replaced after its record (a
 * --rerun cut short between writing the new CSV and journaling its verdict)
 * is never paired with the old verdict. The journal is a history: a unit may
 * have several records (a --rerun, changed inputs); the coordinator decides
 * which one holds. A failed append cuts the journal back to where it was, so
 * it stays a valid prefix; a torn last line (a crash in the middle of a
 * write) is ignored and cut off when opening; any other bad line is an error
 * naming the journal and its line.
 *
 * A bench and test hook: SX_JOURNAL_FSYNC_DELAY_MS=N (1 to 60000) makes
 * every fsync of the journal wait N ms first, a slow disk on purpose
 * (bench/coordinator's slow cells). Only the journal's own fsyncs wait. */
#ifndef SX_JOURNAL_H
#define SX_JOURNAL_H

#include "common/error.h"
#include "common/results/result.h"

#include <stdbool.h>

typedef struct _sx_journal_t sx_journal_t;

/* Called for every record when loading; returns non-zero to stop with an error. */
typedef int(sx_journal_visit_fn)(const char *method, const char *inputs,
                                 const char *csv_sha1, const sx_result_t *result,
                                 void *arg, sx_error_t *err);

/* Opens path for appending. With visit, first replays every complete record
 * through it (resume); a torn last line is cut off. */
sx_journal_t *sx_journal_open(const char *path, sx_journal_visit_fn *visit, void *arg,
                              sx_error_t *err);
/* Adds one record to the batch the next sx_journal_commit makes durable;
 * nothing is written yet. */
void sx_journal_add(sx_journal_t *self, const char *method, const char *inputs,
                    const char *csv_sha1, const sx_result_t *result);
/* Writes every record of the batch and syncs them with one fsync (group
 * commit: the records of all the results that came while the last fsync
 * ran); on failure (err names the journal and errno) the journal is cut back
 * to its length before the batch: none of its records holds. The batch is
 * empty after, either way. */
int sx_journal_commit(sx_journal_t *self, sx_error_t *err);
/* Forgets the batch unwritten (the files its records point at could not be
 * made durable). */
void sx_journal_drop(sx_journal_t *self);
/* Appends one record durably: a batch of one. */
int sx_journal_append(sx_journal_t *self, const char *method, const char *inputs,
                      const char *csv_sha1, const sx_result_t *result, sx_error_t *err);
void sx_journal_destroy(sx_journal_t **self_p);

void sx_journal_test(bool verbose);

#endif
