/* sample.h: which of several candidates per task a line is (docs/predictions.md):
 * the optional "sample" field of a predictions line and of a submission line
 * given to `score`. A line without it is sample 0; with it, an integer K,
 * 0 <= K < max_samples (--max-samples, default SX_SAMPLES_DEFAULT). A method
 * has n = 1 + its largest sample number samples; each (task, sample) is
 * executed and scored on its own. Read here, once, so that the two files
 * refuse the same values with the same words. */
#ifndef SX_SAMPLE_H
#define SX_SAMPLE_H

#include "common/error.h"

#include <jansson.h>

#define SX_SAMPLE_FIELD "sample"
/* --max-samples: its default, and the largest value it takes. */
#define SX_SAMPLES_DEFAULT 100
#define SX_SAMPLES_LIMIT 10000

/* Reads the "sample" field of a line's object into *sample (0 when the field
 * is absent). -1 with err saying why when it is not an integer (1.5, "1",
 * true), is negative, or is not below max_samples. */
int sx_sample_get(const json_t *object, int max_samples, int *sample, sx_error_t *err);

void sx_sample_test(bool verbose);

#endif
