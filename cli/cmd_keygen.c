/* cmd_keygen.c: placeholder until the issue that builds 'streamex keygen' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_keygen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex keygen: not built yet\n");
    return 2;
}
