/* cmd_score.c: placeholder until the issue that builds 'streamex score' lands.
 * It says so plainly and fails; it is never reported as done. */
#include "cli/commands.h"

#include <stdio.h>

int sx_cmd_score(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "streamex score: not built yet\n");
    return 2;
}
