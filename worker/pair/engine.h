/* engine.h: which Flink engine a pair runs (docs/internals/flink-2.md). An
 * engine is one Flink with its Kafka table connector, installed by
 * scripts/setup-runtime.sh [--flink X.Y] into a runtime folder RT beside the
 * shared Kafka broker: the default engine in RT/flink, marked by
 * RT/installed.env; every other engine X.Y in RT/flink-X.Y, marked by its own
 * RT/flink-X.Y/installed.env. A marker names the engine's three versions
 * (SX_FLINK_VERSION, SX_FLINK_KAFKA_CONNECTOR_VERSION, SX_KAFKA_VERSION).
 *
 * This module is the one place that maps a selector (`--flink X.Y`) to an
 * engine: its folder, its versions and the label that results carry. What
 * else differs between engines (the jars, Flink's own JVM options in
 * java-opts.txt) lives in the engine's folder, so no other code compares
 * versions. Installed engines are found from the markers, not from
 * runtime/versions.env: an install may hold engines another checkout pinned. */
#ifndef SX_ENGINE_H
#define SX_ENGINE_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

/* The most engines sx_engine_list reports. */
#define SX_ENGINE_MAX 16
/* Room for a label or a versions text. */
#define SX_ENGINE_TEXT 160

typedef struct {
    char dir[4096];    /* RT/flink or RT/flink-X.Y: lib/ and java-opts.txt */
    char marker[4096]; /* its installed.env */
    char flink[32];
    char connector[32]; /* "" when the marker does not say */
    char kafka[32];
    bool is_default; /* the engine of RT/flink */
} sx_engine_t;

/* The selector in effect: `given` (--flink) when not NULL or empty, else
 * $SX_FLINK when set (the worker image's FLINK build argument,
 * docker/Dockerfile.worker; bench/scale), else NULL: the default engine. */
const char *sx_engine_selector(const char *given);

/* Checks a selector: "" or NULL (the default engine), or a Flink version
 * X.Y or X.Y.Z. */
int sx_engine_selector_check(const char *selector, sx_error_t *err);

/* The engine `selector` picks in runtime_dir (NULL: the default folder of
 * common/install.h): the default engine for "" or NULL, else the installed
 * engine whose Flink version is the selector or starts with it and a dot
 * ("2.2" picks 2.2.1). When it is not installed, err says so and names the
 * command that installs it (scripts/setup-runtime.sh [--flink X.Y]) and the
 * engines that are. */
int sx_engine_resolve(const char *runtime_dir, const char *selector, sx_engine_t *engine,
                      sx_error_t *err);

/* The installed engines of runtime_dir (NULL: the default folder), the
 * default first, then the others by folder name; at most max. */
size_t sx_engine_list(const char *runtime_dir, sx_engine_t *engines, size_t max);

/* What results.jsonl's "engine" and a worker's HELLO call it:
 * "flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1". */
void sx_engine_label(const sx_engine_t *engine, char *out, size_t size);
/* "Flink 2.2.1 (Kafka connector 5.0.0-2.2), Kafka 3.9.1": `check`'s wording
 * and the text the result cache keys on. */
void sx_engine_versions(const sx_engine_t *engine, char *out, size_t size);
/* The selector that picks it again, X.Y of its Flink version: "2.2". */
void sx_engine_series(const sx_engine_t *engine, char *out, size_t size);

void sx_engine_test(bool verbose);

#endif
