/* cmd_exec.c: placeholder until the issue that builds 'streamex exec' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_exec(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex exec: not built yet\n");
    return 2;
}
