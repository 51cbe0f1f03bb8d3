/* cmd_check.c: placeholder until the issue that builds 'streamex check' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex check: not built yet\n");
    return 2;
}
