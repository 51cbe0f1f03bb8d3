/* cmd_keygen.c: `streamex keygen NAME [--dir DIR]`, a CURVE certificate in
 * czmq's format: DIR/NAME.cert (public, safe to copy into a coordinator's
 * --allow folder or to workers as --server-cert) and DIR/NAME.cert_secret
 * (keep it on the machine that owns it). */
#include "cli/commands.h"
#include "cli/options.h"
#include "common/files.h"
#include "proto/proto.h"

#include <czmq.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>

static const char s_usage[] =
    "usage: streamex keygen NAME [--dir DIR]\n"
    "\n"
    "Makes a CURVE key pair for a coordinator or a worker: DIR/NAME.cert (the\n"
    "public certificate) and DIR/NAME.cert_secret (the secret one, mode 0600).\n"
    "Give a coordinator --cert DIR/NAME.cert and --allow FOLDER-OF-WORKER-CERTS,\n"
    "a worker --cert DIR/NAME.cert and --server-cert COORDINATOR.cert.\n"
    "An existing certificate is never overwritten.\n";

int sx_cmd_keygen(int argc, char **argv)
{
    static const struct option longs[] = {{"dir", required_argument, NULL, 'd'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *dir = ".";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'd')
            dir = optarg;
        else if (c == 'h') {
            fputs(s_usage, stdout);
            return 0;
        } else {
            return sx_option_error("keygen", c, argv, s_usage);
        }
    }
    if (optind != argc - 1 || !sx_name_is_safe(argv[optind]))
        return sx_usage_error("keygen", s_usage, "expected one NAME of [A-Za-z0-9_.-]");
    char path[4096], secret[4200];
    snprintf(path, sizeof path, "%s/%s.cert", dir, argv[optind]);
    snprintf(secret, sizeof secret, "%s_secret", path);
    sx_error_t err;
    if (sx_file_exists(path) || sx_file_exists(secret)) {
        fprintf(stderr, "streamex keygen: %s already exists; not overwritten\n", path);
        return 2;
    }
    if (sx_mkdirs(dir, &err) != 0) {
        fprintf(stderr, "streamex keygen: %s\n", err.msg);
        return 2;
    }
    zcert_t *cert = zcert_new();
    zcert_set_meta(cert, "name", "%s", argv[optind]);
    int rc = zcert_save(cert, path);
    zcert_destroy(&cert);
    if (rc != 0 || chmod(secret, 0600) != 0) {
        fprintf(stderr, "streamex keygen: cannot write %s\n", path);
        return 2;
    }
    printf("public: %s\nsecret: %s\n", path, secret);
    return 0;
}
