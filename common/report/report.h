/* report.h: OUT/report.html, one self-contained page (inline CSS, JS and
 * SVG, no network) that shows a finished run to a person: EX per method with
 * its full denominator and status breakdown, a task x method grid, each
 * task's question, candidate SQL, verdict, detail and first rows beside gold,
 * and where the time went. It is written from OUT alone (summary.json, with
 * its "run" object, and every OUT/NAME/results.jsonl), reading the bench and
 * the predictions files that summary.json names when they are still there, so
 * `streamex report OUT` writes the same page again. Everything that comes
 * from a candidate, a CSV or a detail is HTML-escaped: the page never runs
 * what a method wrote. Without JavaScript it is plain tables; with it, the
 * grid filters and sorts and one task opens at a time (#task=ID). */
#ifndef SX_REPORT_H
#define SX_REPORT_H

#include "common/error.h"

#include <stdbool.h>

/* Writes OUT/report.html (atomically). err names the file that could not be
 * read or written; the page does not depend on the bench still existing. */
int sx_report_write(const char *out_dir, sx_error_t *err);

void sx_report_test(bool verbose);

#endif
