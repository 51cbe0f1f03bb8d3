/* ddl.h: the registered DDL of a task, made ready for one run. ${topic} and
 * ${bootstrap} are filled in (inside string literals, with quotes escaped);
 * any other ${...} placeholder is an error. A source table is also made to
 * read exactly the rows the worker produced, whatever the registered text
 * says: 'scan.startup.mode'='earliest-offset' and
 * 'scan.bounded.mode'='latest-offset' replace the existing options or are
 * added to the WITH (...) list. This applies to static sources too: they are
 * fully preloaded before the job starts, and an unbounded source would keep
 * the job from finishing. Only the 'kafka' connector is accepted for a
 * source: the worker replays keyless JSON records, which an 'upsert-kafka'
 * source (keyed by its PRIMARY KEY) would misread, and other connectors do
 * not read the replayed topic at all. The text is read with the shared SQL
 * lexer, so quotes and comments in the DDL cannot confuse the edit. */
#ifndef SX_DDL_H
#define SX_DDL_H

#include "common/error.h"

#include <stdbool.h>

/* The sink (or any table) DDL with placeholders filled; heap string or NULL
 * with err naming what is wrong and where (line:column in the DDL). */
char *sx_ddl_fill(const char *ddl, const char *topic, const char *bootstrap,
                  sx_error_t *err);
/* A source DDL with placeholders filled and bounded reading enforced. */
char *sx_ddl_source(const char *ddl, const char *topic, const char *bootstrap,
                    sx_error_t *err);

/* Checks that a registered DDL is what the worker may send for the table
 * `name`: exactly one statement (a trailing ';' and comments allowed),
 * CREATE [TEMPORARY] TABLE [IF NOT EXISTS] with the table named as
 * declared (optionally qualified by the default catalog and database, see
 * sx_sqllex_names_table), and not CREATE TABLE ... AS SELECT, which would
 * run a query of its own. err says what was found and where. */
int sx_ddl_check_table(const char *ddl, const char *name, sx_error_t *err);

void sx_ddl_test(bool verbose);

#endif
