/* options.c: parsing of option values shared by several subcommands. */
#include "cli/options.h"
#include "common/mem.h"
#include "common/task.h"

#include <getopt.h>
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

int sx_option_error(const char *command, int option, char **argv, const char *usage)
{
    const char *arg = argv[optind - 1];
    if (option == ':')
        fprintf(stderr, "streamex %s: %s needs a value\n%s", command, arg, usage);
    else
        fprintf(stderr, "streamex %s: unknown option '%s'\n%s", command, arg, usage);
    return 2;
}
