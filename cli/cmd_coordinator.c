/* cmd_coordinator.c: placeholder until the issue that builds 'streamex coordinator'
 * lands. It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_coordinator(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex coordinator: not built yet\n");
    return 2;
}
