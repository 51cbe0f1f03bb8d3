/* commands.h: the subcommands of the streamex executable. Each lives in
 * cli/cmd_NAME.c, parses its own options and returns the process exit code:
 * 0 success, 1 the work found problems (a broken benchmark, failed tasks),
 * 2 bad usage or a fatal error. Errors are printed once, here at the top. */
#ifndef SX_COMMANDS_H
#define SX_COMMANDS_H

int sx_cmd_check(int argc, char **argv);
int sx_cmd_doctor(int argc, char **argv);
int sx_cmd_score(int argc, char **argv);
int sx_cmd_runtime(int argc, char **argv);
int sx_cmd_exec(int argc, char **argv);
int sx_cmd_run(int argc, char **argv);
int sx_cmd_coordinator(int argc, char **argv);
int sx_cmd_worker(int argc, char **argv);
int sx_cmd_merge(int argc, char **argv);
int sx_cmd_keygen(int argc, char **argv);
int sx_cmd_report(int argc, char **argv);
int sx_cmd_compare(int argc, char **argv);

#endif
