/* options.h: option parsing shared by several subcommands. */
#ifndef SX_OPTIONS_H
#define SX_OPTIONS_H

#include "common/error.h"

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

/* Says what getopt_long's ':' (an option missing its value) or any other
 * unexpected result (an unknown option) means, for `streamex COMMAND`, then
 * the usage text. Returns 2, the exit code of bad usage. */
int sx_option_error(const char *command, int option, char **argv, const char *usage);

#endif
