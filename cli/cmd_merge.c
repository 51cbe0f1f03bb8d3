/* cmd_merge.c: placeholder until the issue that builds 'streamex merge' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_merge(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex merge: not built yet\n");
    return 2;
}
