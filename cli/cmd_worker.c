/* cmd_worker.c: placeholder until the issue that builds 'streamex worker' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_worker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex worker: not built yet\n");
    return 2;
}
