/* cmd_runtime.c: placeholder until the issue that builds 'streamex runtime' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_runtime(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex runtime: not built yet\n");
    return 2;
}
