/* jsonout.h: JSON text with its numbers written as a person would write
 * them. Jansson formats every real of a document with one precision, so a
 * document holding 1/6 (0.16666666666666666, 17 digits) would print 17/30
 * as 0.56666666666666665. sx_json_dumps writes each real in its own shortest
 * form that reads back as the same double (0.5666666666666667, 0.5, 12.345,
 * 300.0), in plain decimals from 1e-4 to below 1e16, as Python's repr does.
 * Every JSON file and line streamex writes for people and tools (results,
 * summaries, progress) goes through it. */
#ifndef SX_JSONOUT_H
#define SX_JSONOUT_H

#include "common/error.h"
#include "common/files.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* json_dumps(json, flags) with every real in its shortest form (flags must
 * not hold JSON_REAL_PRECISION). NULL where json_dumps fails. Free with free(). */
char *sx_json_dumps(const json_t *json, size_t flags);

/* The shortest text of a finite double, as sx_json_dumps writes it, into out
 * (at least 32 bytes). */
void sx_json_real_text(double value, char *out, size_t size);

/* Writes sx_json_dumps(json, flags) and a newline to path, atomically, its
 * folders made first (summary.json). -1 with err set (naming path) when it
 * cannot. */
int sx_json_write_file(const char *path, const json_t *json, size_t flags,
                       sx_error_t *err);
/* The same into a batch (common/files.h): durable at the batch's commit,
 * with the batch's other files (a method's diffs). */
int sx_json_batch_add(sx_file_batch_t *batch, const char *path, const json_t *json,
                      size_t flags, sx_error_t *err);

void sx_jsonout_test(bool verbose);

#endif
