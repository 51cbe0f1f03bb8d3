/* sqlcheck.h: the candidate check of docs/predictions.md, done before Flink sees
 * anything. A candidate is accepted when it is exactly one statement (a
 * trailing ';', whitespace and comments allowed) that is either
 *   - a query starting with SELECT or WITH (possibly inside parentheses),
 *     submitted as "INSERT INTO `<sink>` <query>"; a bare VALUES is not a
 *     SELECT/WITH query and is rejected, or
 *   - INSERT INTO <sink> ... (any body Flink accepts after the target),
 *     submitted as written. The target may be qualified as
 *     [default_catalog.]default_database.<sink>.
 * Identifiers follow Flink: matched case-sensitively, quoted with backticks,
 * so `result` and result name the sink "result" and RESULT does not.
 * Everything else is rejected with a reason naming what was found: DDL
 * (CREATE/DROP/ALTER ...), SET/RESET, ADD JAR, LOAD/UNLOAD MODULE, USE,
 * EXPLAIN, DESCRIBE, SHOW, EXECUTE, statement sets (BEGIN/END), CALL,
 * INSERT OVERWRITE, INSERT into another table, several statements, an empty
 * candidate, unterminated strings or comments, and any OPTIONS hint
 * (dynamic table options), its name in any case and quoted or not, as
 * Calcite reads hint names. Other hints (BROADCAST, STATE_TTL, ...) change
 * how a query runs, not the tables it reads, and are accepted. Strings,
 * quoted identifiers and comments never count as keywords or separators; a
 * double quote is no quote to Flink (backticks are), so it is none here.
 * Where a statement begins and ends follows Calcite's lexer (sqllex.h):
 * a line comment ends at \r as at \n, and a backslash escapes nothing.
 * tests/e2e/sqlparse.sh holds this against Flink's own parser. */
#ifndef SX_SQLCHECK_H
#define SX_SQLCHECK_H

#include "common/error.h"

#include <stdbool.h>

/* Returns the statement to submit to Flink as a heap string, or NULL with
 * err set to "rejected: <reason>" (the caller adds the task ID and makes the
 * task rejected_sql). sink_name is the registered sink table name. */
char *sx_sqlcheck(const char *sql, const char *sink_name, sx_error_t *err);

void sx_sqlcheck_test(bool verbose);

#endif
