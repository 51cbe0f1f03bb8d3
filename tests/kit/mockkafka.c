/* mockkafka.c: the mock Kafka of self-tests (see mockkafka.h). The mock
 * cluster lives in a producer handle of its own that nothing else uses. */
#include "tests/kit/mockkafka.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <stdlib.h>

struct _sx_mockkafka_t {
    rd_kafka_t *owner;
    rd_kafka_mock_cluster_t *cluster;
};

sx_mockkafka_t *sx_mockkafka_new(void)
{
    sx_mockkafka_t *self = sx_new(sx_mockkafka_t);
    char reason[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", reason, sizeof reason);
    self->owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof reason);
    SX_CHECK(self->owner);
    self->cluster = rd_kafka_mock_cluster_new(self->owner, 1);
    SX_CHECK(self->cluster);
    return self;
}

void sx_mockkafka_destroy(sx_mockkafka_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_mockkafka_t *self = *self_p;
    rd_kafka_mock_cluster_destroy(self->cluster);
    rd_kafka_destroy(self->owner);
    free(self);
    *self_p = NULL;
}

const char *sx_mockkafka_bootstrap(sx_mockkafka_t *self)
{
    return rd_kafka_mock_cluster_bootstraps(self->cluster);
}

rd_kafka_mock_cluster_t *sx_mockkafka_cluster(sx_mockkafka_t *self)
{
    return self->cluster;
}

int sx_mockkafka_make_topics(void *arg, const char *const *topics, size_t count,
                             sx_error_t *err)
{
    sx_mockkafka_t *self = arg;
    (void)err;
    for (size_t i = 0; i < count; i++)
        SX_CHECK(rd_kafka_mock_topic_create(self->cluster, topics[i], 1, 1) == 0);
    return 0;
}
