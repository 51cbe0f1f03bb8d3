/* install.h: where streamex finds its own files (docs/install.md). A binary
 * run from the build folder CMake made it in reads them from the source tree
 * it was built from: SX_SOURCE_DIR/examples/sample-bench, SX_SOURCE_DIR/runtime
 * (the pinned versions) and SX_SOURCE_DIR/.runtime (Kafka + Flink). Anywhere
 * else it is an installed binary and finds its share folder relative to its
 * own location (/proc/self/exe): BINDIR/SX_SHARE_RELATIVE, ../share/streamex
 * by default, so an installed prefix can be moved as a whole. The Kafka +
 * Flink install, which is written to, is chosen by --runtime-dir, else
 * $SX_RUNTIME_DIR, else SX_SOURCE_DIR/.runtime for a build-tree binary and
 * $XDG_DATA_HOME/streamex/runtime (default ~/.local/share/streamex/runtime)
 * for an installed one. */
#ifndef SX_INSTALL_H
#define SX_INSTALL_H

#include "common/error.h"

#include <stdbool.h>

/* Whether this process's binary lies inside its build folder. */
bool sx_install_in_build_tree(void);
/* The folder holding examples/, runtime/ and scripts/: the source tree or the
 * install's share/streamex. Never NULL; computed once per process. */
const char *sx_install_share_dir(void);
/* The runtime folder (see the top): `given` when not NULL or empty, else
 * the default. A heap string, never NULL. */
char *sx_install_runtime_dir(const char *given);

/* The versions the Kafka + Flink runtime is pinned to, from
 * SHARE/runtime/versions.env (the defaults setup-runtime.sh installs). */
typedef struct {
    char flink[64];
    char connector[64];
    char kafka[64];
} sx_install_versions_t;

int sx_install_pinned_versions(sx_install_versions_t *versions, sx_error_t *err);

void sx_install_test(bool verbose);

#endif
