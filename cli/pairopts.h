/* pairopts.h: the command-line options that describe one worker's Kafka +
 * Flink pair (worker/pair/pair.h's sx_pair_config_t), as `streamex runtime`
 * takes them: their --help text and the parser that applies one. */
#ifndef SX_PAIROPTS_H
#define SX_PAIROPTS_H

#include "common/error.h"
#include "worker/pair/pair.h"

#include <stdbool.h>

/* The command-line options every command that owns a pair accepts (`runtime`,
 * `worker`, `run`), for their --help. */
#define SX_RUNTIME_OPTIONS_HELP                                                          \
    "  --index N                 worker index: ports 21000+20*N.., .runtime/pairs/N\n"   \
    "  --runtime-dir DIR         the install (default $SX_RUNTIME_DIR, else "            \
    "<repo>/.runtime,\n"                                                                 \
    "                            installed: ~/.local/share/streamex/runtime)\n"          \
    "  --flink X.Y               the engine: Flink X.Y, installed by\n"                  \
    "                            scripts/setup-runtime.sh --flink X.Y (default: the\n"   \
    "                            default engine; streamex --version lists them)\n"       \
    "  --slots N                 TaskManager slots (4)\n"                                \
    "  --kafka-heap-mb MB        Kafka broker heap (512)\n"                              \
    "  --jobmanager-heap-mb MB   JobManager heap (512)\n"                                \
    "  --taskmanager-heap-mb MB  TaskManager task heap (512)\n"                          \
    "  --taskmanager-managed-mb MB  TaskManager managed memory (256)\n"                  \
    "  --gateway-heap-mb MB      SQL Gateway heap (512)\n"                               \
    "  --start-timeout S         seconds to wait for a healthy pair (180)\n"             \
    "  --kafka-bootstrap HOST:PORT, --flink-gateway URL, --flink-rest URL\n"             \
    "                            use an existing Kafka + Flink instead (all three)\n"

/* Applies one of those options ("--slots", "4") to config. Returns 1 when it
 * took the option, 0 when `name` is not a runtime option, -1 (err set) when
 * the value is bad. String values are kept by pointer, not copied. */
int sx_pair_config_option(sx_pair_config_t *config, const char *name, const char *value,
                          sx_error_t *err);

void sx_pairopts_test(bool verbose);

#endif
