/* options.c: parsing of option values shared by the subcommands, and the one
 * way every subcommand reports bad usage. */
#include "cli/options.h"
#include "common/mem.h"
#include "common/bench/task.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sx_method_arg_parse(const char *text, sx_method_arg_t *out, sx_error_t *err)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq[1] == '\0')
        return sx_error_set(err, "--method '%s': expected NAME=FILE", text);
    size_t len = (size_t)(eq - text);
    if (len > 128 || !sx_name_is_safe(strndupa(text, len)))
        return sx_error_set(err,
                            "--method '%s': NAME must be 1-128 characters of "
                            "[A-Za-z0-9_.-] and not start with '.'",
                            text);
    out->name = sx_strndup(text, len);
    out->file = sx_strdup(eq + 1);
    return 0;
}

void sx_method_arg_free(sx_method_arg_t *arg)
{
    free(arg->name);
    free(arg->file);
    arg->name = arg->file = NULL;
}

int sx_method_args_add(sx_method_arg_t **args, size_t *count, const char *text,
                       sx_error_t *err)
{
    sx_method_arg_t arg;
    if (sx_method_arg_parse(text, &arg, err) != 0)
        return -1;
    for (size_t i = 0; i < *count; i++) {
        if (strcmp((*args)[i].name, arg.name) == 0) {
            sx_error_set(err, "--method %s given twice", arg.name);
            sx_method_arg_free(&arg);
            return -1;
        }
    }
    *args = sx_realloc(*args, *count + 1, sizeof **args);
    (*args)[(*count)++] = arg;
    return 0;
}

void sx_method_args_free(sx_method_arg_t **args, size_t *count)
{
    for (size_t i = 0; i < *count; i++)
        sx_method_arg_free(&(*args)[i]);
    free(*args);
    *args = NULL;
    *count = 0;
}

int sx_option_int(const char *name, const char *arg, long min, long max, long *out,
                  sx_error_t *err)
{
    /* strtol alone would take " 7" and "+7", and clamp an overflow to LONG_MAX. */
    bool number = isdigit((unsigned char)arg[0]) ||
                  (arg[0] == '-' && isdigit((unsigned char)arg[1]));
    char *end = NULL;
    errno = 0;
    long value = number ? strtol(arg, &end, 10) : 0;
    if (!number || *end || errno == ERANGE || value < min || value > max)
        return sx_error_set(err, "--%s '%s': expected an integer in [%ld, %ld]", name,
                            arg, min, max);
    *out = value;
    return 0;
}

int sx_bootstrap_option(int c, const char *arg, sx_bootstrap_t *bootstrap,
                        sx_error_t *err)
{
    long value = 0;
    if (c == SX_OPT_BOOTSTRAP &&
        sx_option_int("bootstrap", arg, 0, SX_STATS_MAX_RESAMPLES, &value, err) == 0)
        bootstrap->resamples = (unsigned)value;
    else if (c == SX_OPT_SEED &&
             sx_option_int("seed", arg, 0, LONG_MAX, &value, err) == 0)
        bootstrap->seed = (uint64_t)value;
    else if (c == SX_OPT_BOOTSTRAP || c == SX_OPT_SEED)
        return -1;
    else
        return 0;
    return 1;
}

int sx_option_unknown(int option, char **argv, sx_error_t *err)
{
    const char *arg = argv[optind - 1];
    if (option == ':')
        return sx_error_set(err, "%s needs a value", arg);
    return sx_error_set(err, "unknown option '%s'", arg);
}

int sx_usage_error(const char *command, const char *usage, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "streamex %s: ", command);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n%s", usage);
    va_end(args);
    return 2;
}

int sx_option_error(const char *command, int option, char **argv, const char *usage)
{
    sx_error_t err;
    sx_option_unknown(option, argv, &err);
    return sx_usage_error(command, usage, "%s", err.msg);
}
