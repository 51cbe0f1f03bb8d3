/* cmd_run.c: placeholder until the issue that builds 'streamex run' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex run: not built yet\n");
    return 2;
}
