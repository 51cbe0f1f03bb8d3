/* mockkafka.h: librdkafka's in-process mock Kafka for self-tests (one
 * broker, no topic admin API), with a stand-in for topic creation that the
 * executor and the shared replays take (sx_topic_maker_fn): topics are made
 * on the mock directly. Its log is silent. */
#ifndef SX_MOCKKAFKA_H
#define SX_MOCKKAFKA_H

#include "common/error.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stddef.h>

typedef struct _sx_mockkafka_t sx_mockkafka_t;

sx_mockkafka_t *sx_mockkafka_new(void);
void sx_mockkafka_destroy(sx_mockkafka_t **self_p);

/* Its bootstrap address, for sx_kafka_new. */
const char *sx_mockkafka_bootstrap(sx_mockkafka_t *self);
/* The mock cluster, for rd_kafka_mock_* (errors, a broker down). */
rd_kafka_mock_cluster_t *sx_mockkafka_cluster(sx_mockkafka_t *self);

/* An sx_topic_maker_fn, arg the sx_mockkafka_t: one-partition topics. */
int sx_mockkafka_make_topics(void *arg, const char *const *topics, size_t count,
                             sx_error_t *err);

#endif
