/* html.h: OUT/report.html written from the report model (model.h); it only
 * reads the model, report.c fills it. */
#ifndef SX_REPORT_HTML_H
#define SX_REPORT_HTML_H

#include "common/report/model.h"

#include <stdio.h>

/* Writes the whole page. */
void sx_report_html(FILE *out, const sx_report_t *report);
/* Writes text HTML-escaped (& < > " ' and control characters). */
void sx_report_escape(FILE *out, const char *text);

#endif
