/* options.h: option parsing shared by the subcommands: --method values,
 * integer values, and how an unknown option or a bad value is reported. */
#ifndef SX_OPTIONS_H
#define SX_OPTIONS_H

#include "common/error.h"
#include "common/results/figures.h"

#include <stddef.h>

/* One `--method NAME=FILE` argument. */
typedef struct {
    char *name;
    char *file;
} sx_method_arg_t;

/* Parses "NAME=FILE": NAME is [A-Za-z0-9_.-]+ (it becomes a folder under
 * OUT), FILE is non-empty. Fills *out with heap copies. */
int sx_method_arg_parse(const char *text, sx_method_arg_t *out, sx_error_t *err);
void sx_method_arg_free(sx_method_arg_t *arg);

/* Appends a parsed --method to a growable array, refusing a repeated NAME. */
int sx_method_args_add(sx_method_arg_t **args, size_t *count, const char *text,
                       sx_error_t *err);
void sx_method_args_free(sx_method_arg_t **args, size_t *count);

/* The one parser of integer option values: ARG is a whole decimal integer
 * (nothing before or after it, no overflow) in [min, max], else err says
 * "--NAME 'ARG': expected an integer in [MIN, MAX]". */
int sx_option_int(const char *name, const char *arg, long min, long max, long *out,
                  sx_error_t *err);

/* --bootstrap B and --seed S of run, coordinator, score, merge and compare:
 * getopt_long values far from any command's own, their table entries and
 * help lines. A command starts from SX_BOOTSTRAP_DEFAULT. */
enum { SX_OPT_BOOTSTRAP = 900, SX_OPT_SEED };
#define SX_BOOTSTRAP_DEFAULT                                                             \
    ((sx_bootstrap_t){SX_BOOTSTRAP_DEFAULT_RESAMPLES, SX_BOOTSTRAP_DEFAULT_SEED})
#define SX_BOOTSTRAP_LONGOPTS                                                            \
    {"bootstrap", required_argument, NULL, SX_OPT_BOOTSTRAP},                            \
    {                                                                                    \
        "seed", required_argument, NULL, SX_OPT_SEED                                     \
    }
#define SX_BOOTSTRAP_OPTIONS_HELP                                                        \
    "  --bootstrap B          resamples of the task IDs behind each 95% interval\n"      \
    "                         (default 10000, at most 1000000; 0: no intervals)\n"       \
    "  --seed S               the bootstrap's seed (default 1): the same seed, the\n"    \
    "                         same bounds\n"
/* Takes --bootstrap or --seed (c) into *bootstrap: 1 when c was one of them,
 * 0 when it is not, -1 with err for a bad value. */
int sx_bootstrap_option(int c, const char *arg, sx_bootstrap_t *bootstrap,
                        sx_error_t *err);

/* The message for a getopt_long result no case of a command took: ':' (the
 * optstring starts with ':') is an option missing its value ("--bench needs
 * a value"), anything else an unknown option ("unknown option '--bogus'").
 * Sets err; returns -1. getopt's own messages are off (opterr = 0 in main). */
int sx_option_unknown(int option, char **argv, sx_error_t *err);

/* Bad usage, said once and the same way by every command: "streamex COMMAND:
 * MESSAGE" and then the usage text, on stderr. Returns 2, the exit code of
 * bad usage. */
int sx_usage_error(const char *command, const char *usage, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* sx_option_unknown's message as sx_usage_error says it, for a command that
 * reports bad usage where it finds it. Returns 2. */
int sx_option_error(const char *command, int option, char **argv, const char *usage);

#endif
