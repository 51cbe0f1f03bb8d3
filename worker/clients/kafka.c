/* kafka.c: topics, replay and read-back on librdkafka (see kafka.h).
 * One producer lives as long as the sx_kafka_t (a warm worker reuses it for
 * every task); it is idempotent with acks=all so a replay is exactly the
 * rows in order, and produce() only returns after every delivery report.
 * Reading uses a short-lived consumer with manual assignment (no group
 * membership, nothing committed) that stops at the end offset queried first. */
#include "worker/clients/kafka.h"

#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <czmq.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MS 100
/* Messages taken from the consumer queue per call. */
#define READ_BATCH 1024

struct _sx_kafka_t {
    char *bootstrap;
    int timeout_ms;
    rd_kafka_t *producer;
    /* Delivery reports of the current produce() call. */
    size_t acked;
    size_t failed;
    char delivery_error[512];
    /* Last client-level error (e.g. broker connection refused), for messages. */
    char last_error[512];
};

/* librdkafka's own log lines are debugging material, not user output. */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    sx_debug("librdkafka %s: %s", fac, buf);
}

static void on_error(rd_kafka_t *rk, int code, const char *reason, void *opaque)
{
    (void)rk;
    (void)code;
    sx_kafka_t *self = opaque;
    snprintf(self->last_error, sizeof self->last_error, "%s", reason);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    sx_kafka_t *self = opaque;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        self->acked++;
        return;
    }
    if (self->failed++ == 0)
        snprintf(self->delivery_error, sizeof self->delivery_error, "%s",
                 rd_kafka_err2str(msg->err));
}

static int conf_set_all(rd_kafka_conf_t *conf, const char *const (*settings)[2],
                        size_t count, sx_error_t *err)
{
    char reason[512];
    for (size_t i = 0; i < count; i++)
        if (rd_kafka_conf_set(conf, settings[i][0], settings[i][1], reason,
                              sizeof reason) != RD_KAFKA_CONF_OK)
            return sx_error_set(err, "Kafka setting %s=%s: %s", settings[i][0],
                                settings[i][1], reason);
    return 0;
}

/* A configuration with the settings every client of this broker shares. */
static rd_kafka_conf_t *base_conf(sx_kafka_t *self, sx_error_t *err)
{
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%d", self->timeout_ms);
    const char *const settings[][2] = {
        {"bootstrap.servers", self->bootstrap},
        {"socket.timeout.ms", timeout},
        {"reconnect.backoff.max.ms", "1000"},
        {"log.connection.close", "false"},
        /* A long-lived producer refreshes the metadata of every topic it
         * wrote to; with auto-creation allowed, that brings back the topics
         * cleanup deleted (all of a worker's, five minutes on). */
        {"allow.auto.create.topics", "false"},
    };
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (conf_set_all(conf, settings, sizeof settings / sizeof settings[0], err) != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_opaque(conf, self);
    return conf;
}

static rd_kafka_t *producer_new(sx_kafka_t *self, sx_error_t *err)
{
    rd_kafka_conf_t *conf = base_conf(self, err);
    if (!conf)
        return NULL;
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%d", self->timeout_ms);
    const char *const settings[][2] = {
        {"enable.idempotence", "true"},
        {"acks", "all"},
        {"linger.ms", "5"},
        {"message.timeout.ms", timeout},
        /* A replay hands records over faster than the broker acknowledges
         * them: at most 32 MB waits in the local queue (librdkafka's default
         * is 1 GB, so wide rows could fill memory before its 100,000
         * messages), the rest waits in the file. */
        {"queue.buffering.max.kbytes", "32768"},
    };
    if (conf_set_all(conf, settings, sizeof settings / sizeof settings[0], err) != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    char reason[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof reason);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        sx_error_set(err, "Kafka producer for %s: %s", self->bootstrap, reason);
    }
    return rk;
}

sx_kafka_t *sx_kafka_new(const char *bootstrap, int timeout_ms, sx_error_t *err)
{
    if (!bootstrap || !*bootstrap || timeout_ms <= 0) {
        sx_error_set(err,
                     "Kafka client needs a bootstrap address and a positive timeout");
        return NULL;
    }
    sx_kafka_t *self = sx_new(sx_kafka_t);
    self->bootstrap = sx_strdup(bootstrap);
    self->timeout_ms = timeout_ms;
    self->producer = producer_new(self, err);
    if (!self->producer)
        sx_kafka_destroy(&self);
    return self;
}

void sx_kafka_destroy(sx_kafka_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_kafka_t *self = *self_p;
    if (self->producer) {
        rd_kafka_purge(self->producer,
                       RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_flush(self->producer, 100);
        rd_kafka_destroy(self->producer);
    }
    free(self->bootstrap);
    free(self);
    *self_p = NULL;
}

/* Appends the last client-level error, which usually says why (connection
 * refused, unknown host), to a message. */
static int fail_with_cause(sx_kafka_t *self, sx_error_t *err, const char *what,
                           const char *detail)
{
    rd_kafka_poll(self->producer, 0); /* serve pending error callbacks */
    if (self->last_error[0])
        return sx_error_set(err, "Kafka at %s: %s: %s (%s)", self->bootstrap, what,
                            detail, self->last_error);
    return sx_error_set(err, "Kafka at %s: %s: %s", self->bootstrap, what, detail);
}

int sx_kafka_check(sx_kafka_t *self, sx_error_t *err)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t code =
        rd_kafka_metadata(self->producer, 0, NULL, &md, self->timeout_ms);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
        return fail_with_cause(self, err, "metadata request failed",
                               rd_kafka_err2str(code));
    int brokers = md->broker_cnt;
    rd_kafka_metadata_destroy(md);
    if (brokers == 0)
        return fail_with_cause(self, err, "metadata request failed", "no broker listed");
    return 0;
}

int sx_kafka_list_topics(sx_kafka_t *self, const char *prefix, char ***topics,
                         size_t *count, sx_error_t *err)
{
    *topics = NULL;
    *count = 0;
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t code =
        rd_kafka_metadata(self->producer, 1, NULL, &md, self->timeout_ms);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
        return fail_with_cause(self, err, "listing topics", rd_kafka_err2str(code));
    *topics = sx_alloc((size_t)md->topic_cnt + 1, sizeof **topics);
    for (int i = 0; i < md->topic_cnt; i++) {
        const char *name = md->topics[i].topic;
        if (strncmp(name, prefix, strlen(prefix)) == 0)
            (*topics)[(*count)++] = sx_strdup(name);
    }
    rd_kafka_metadata_destroy(md);
    return 0;
}

void sx_kafka_topics_free(char ***topics, size_t count)
{
    for (size_t i = 0; *topics && i < count; i++)
        free((*topics)[i]);
    free(*topics);
    *topics = NULL;
}

/* Waits for an admin result event on `queue`; NULL (and err set) on timeout. */
static rd_kafka_event_t *admin_wait(sx_kafka_t *self, rd_kafka_queue_t *queue,
                                    const char *what, sx_error_t *err)
{
    rd_kafka_event_t *event = rd_kafka_queue_poll(queue, self->timeout_ms + 1000);
    if (!event) {
        fail_with_cause(self, err, what, "no answer in time");
        return NULL;
    }
    if (rd_kafka_event_error(event)) {
        fail_with_cause(self, err, what, rd_kafka_event_error_string(event));
        rd_kafka_event_destroy(event);
        return NULL;
    }
    return event;
}

static rd_kafka_AdminOptions_t *admin_options(sx_kafka_t *self, rd_kafka_admin_op_t op)
{
    rd_kafka_AdminOptions_t *options = rd_kafka_AdminOptions_new(self->producer, op);
    char unused[256];
    rd_kafka_AdminOptions_set_request_timeout(options, self->timeout_ms, unused,
                                              sizeof unused);
    rd_kafka_AdminOptions_set_operation_timeout(options, self->timeout_ms, unused,
                                                sizeof unused);
    return options;
}

/* Polls metadata until partition 0 of topic has a leader: produce and read
 * right after creation then work without retries on the client side. */
static int wait_for_leader(sx_kafka_t *self, const char *topic, sx_error_t *err)
{
    rd_kafka_topic_t *handle = rd_kafka_topic_new(self->producer, topic, NULL);
    if (!handle)
        return sx_error_set(err, "Kafka topic handle %s: %s", topic,
                            rd_kafka_err2str(rd_kafka_last_error()));
    int64_t deadline = zclock_mono() + self->timeout_ms;
    const char *why = "no answer";
    int rc = -1;
    while (rc != 0 && zclock_mono() < deadline) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t code =
            rd_kafka_metadata(self->producer, 0, handle, &md, self->timeout_ms);
        if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
            why = rd_kafka_err2str(code);
        } else {
            const struct rd_kafka_metadata_topic *t = &md->topics[0];
            if (md->topic_cnt == 1 && t->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                t->partition_cnt >= 1 && t->partitions[0].leader >= 0)
                rc = 0;
            else
                why = "partition 0 has no leader yet";
            rd_kafka_metadata_destroy(md);
        }
        if (rc != 0)
            rd_kafka_poll(self->producer, POLL_MS);
    }
    rd_kafka_topic_destroy(handle);
    if (rc != 0)
        return fail_with_cause(self, err, topic, why);
    return 0;
}

/* 0 when every topic of an admin answer succeeded (a topic that does not
 * exist counts as success when missing_ok); else err names the first that
 * failed and why. */
static int check_topic_results(sx_kafka_t *self, const rd_kafka_topic_result_t **results,
                               size_t n, bool missing_ok, const char *what,
                               sx_error_t *err)
{
    for (size_t i = 0; i < n; i++) {
        rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
        if (code != RD_KAFKA_RESP_ERR_NO_ERROR &&
            !(missing_ok && code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART))
            return sx_error_set(err, "Kafka at %s: %s %s: %s", self->bootstrap, what,
                                rd_kafka_topic_result_name(results[i]),
                                rd_kafka_topic_result_error_string(results[i]));
    }
    return 0;
}

int sx_kafka_create_topics(sx_kafka_t *self, const char *const *topics, size_t count,
                           sx_error_t *err)
{
    if (count == 0)
        return 0;
    char reason[512];
    rd_kafka_NewTopic_t **fresh = sx_alloc(count, sizeof *fresh);
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        fresh[i] = rd_kafka_NewTopic_new(topics[i], 1, 1, reason, sizeof reason);
        if (!fresh[i])
            rc = sx_error_set(err, "Kafka topic %s: %s", topics[i], reason);
        /* Replayed rows carry their original (often old) event times as
         * record timestamps: time-based retention must never delete them. */
        else
            rd_kafka_NewTopic_set_config(fresh[i], "retention.ms", "-1");
    }
    if (rc == 0) {
        /* One request for all of them: one round trip to the controller. */
        rd_kafka_AdminOptions_t *options =
            admin_options(self, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_queue_t *queue = rd_kafka_queue_new(self->producer);
        rd_kafka_CreateTopics(self->producer, fresh, count, options, queue);
        char what[600];
        snprintf(what, sizeof what, "creating topic %s%s", topics[0],
                 count > 1 ? " and others" : "");
        rd_kafka_event_t *event = admin_wait(self, queue, what, err);
        rc = event ? 0 : -1;
        if (event) {
            size_t n = 0;
            const rd_kafka_topic_result_t **results = rd_kafka_CreateTopics_result_topics(
                rd_kafka_event_CreateTopics_result(event), &n);
            rc = check_topic_results(self, results, n, false, "creating topic", err);
            rd_kafka_event_destroy(event);
        }
        rd_kafka_queue_destroy(queue);
        rd_kafka_AdminOptions_destroy(options);
    }
    for (size_t i = 0; i < count; i++)
        if (fresh[i])
            rd_kafka_NewTopic_destroy(fresh[i]);
    free(fresh);
    /* Created together, their leaders are known together: after the first,
     * each wait is one metadata answer. */
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = wait_for_leader(self, topics[i], err);
    return rc;
}

int sx_kafka_create_topic(sx_kafka_t *self, const char *topic, sx_error_t *err)
{
    return sx_kafka_create_topics(self, &topic, 1, err);
}

int sx_kafka_delete_topics(sx_kafka_t *self, const char *const *topics, size_t count,
                           sx_error_t *err)
{
    if (count == 0)
        return 0;
    rd_kafka_DeleteTopic_t **doomed = sx_alloc(count, sizeof *doomed);
    for (size_t i = 0; i < count; i++)
        doomed[i] = rd_kafka_DeleteTopic_new(topics[i]);
    rd_kafka_AdminOptions_t *options =
        admin_options(self, RD_KAFKA_ADMIN_OP_DELETETOPICS);
    rd_kafka_queue_t *queue = rd_kafka_queue_new(self->producer);
    rd_kafka_DeleteTopics(self->producer, doomed, count, options, queue);
    rd_kafka_event_t *event = admin_wait(self, queue, "deleting topics", err);
    int rc = event ? 0 : -1;
    if (event) {
        size_t n = 0;
        const rd_kafka_topic_result_t **results = rd_kafka_DeleteTopics_result_topics(
            rd_kafka_event_DeleteTopics_result(event), &n);
        rc = check_topic_results(self, results, n, true, "deleting topic", err);
        rd_kafka_event_destroy(event);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_DeleteTopic_destroy_array(doomed, count);
    free(doomed);
    return rc;
}

int sx_kafka_delete_topic_list(sx_kafka_t *self, zlist_t *topics, sx_error_t *err)
{
    size_t count = zlist_size(topics), n = 0;
    const char **names = sx_alloc(count + 1, sizeof *names);
    for (const char *t = zlist_first(topics); t; t = zlist_next(topics))
        names[n++] = t;
    int rc = sx_kafka_delete_topics(self, names, count, err);
    free(names);
    return rc;
}

/* An idempotent producer that hit a fatal error refuses all further work:
 * replace it so the next task starts with a healthy one. */
static void producer_reset_if_fatal(sx_kafka_t *self)
{
    char reason[256];
    if (rd_kafka_fatal_error(self->producer, reason, sizeof reason) ==
        RD_KAFKA_RESP_ERR_NO_ERROR)
        return;
    sx_warn("Kafka producer for %s had a fatal error (%s): replacing it", self->bootstrap,
            reason);
    sx_error_t ignored;
    rd_kafka_t *fresh = producer_new(self, &ignored);
    if (fresh) {
        rd_kafka_destroy(self->producer);
        self->producer = fresh;
    }
}

/* Drops whatever a failed produce() left queued, so it cannot be delivered
 * into a later task's accounting. */
static void producer_discard(sx_kafka_t *self)
{
    rd_kafka_purge(self->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(self->producer, 0);
    producer_reset_if_fatal(self);
}

static rd_kafka_resp_err_t produce_one(sx_kafka_t *self, const char *topic,
                                       const sx_kafka_record_t *record)
{
    return rd_kafka_producev(
        self->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(record->key, record->key ? record->key_len : 0),
        RD_KAFKA_V_VALUE((void *)record->value, record->value ? record->value_len : 0),
        RD_KAFKA_V_TIMESTAMP(record->timestamp_ms), RD_KAFKA_V_END);
}

void sx_kafka_produce_begin(sx_kafka_t *self)
{
    self->acked = self->failed = 0;
    self->delivery_error[0] = '\0';
}

int sx_kafka_produce_put(sx_kafka_t *self, const char *topic,
                         const sx_kafka_record_t *record, size_t index, size_t count,
                         sx_error_t *err)
{
    /* A full local queue drains as the broker acknowledges: give up only
     * when it stops draining, not because the source is large. */
    int64_t deadline = zclock_mono() + self->timeout_ms;
    rd_kafka_resp_err_t code;
    while ((code = produce_one(self, topic, record)) == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
           zclock_mono() < deadline)
        rd_kafka_poll(self->producer, POLL_MS);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        producer_discard(self);
        return sx_error_set(err, "Kafka at %s: producing record %zu of %zu to %s: %s",
                            self->bootstrap, index + 1, count, topic,
                            rd_kafka_err2str(code));
    }
    rd_kafka_poll(self->producer, 0);
    return 0;
}

int sx_kafka_produce_end(sx_kafka_t *self, const char *topic, size_t count,
                         sx_error_t *err)
{
    /* message.timeout.ms bounds each record, so flush needs a little more. */
    rd_kafka_flush(self->producer, self->timeout_ms + 1000);
    if (self->acked == count && self->failed == 0)
        return 0;
    size_t acked = self->acked, failed = self->failed;
    producer_discard(self);
    if (failed > 0)
        return fail_with_cause(self, err, topic, self->delivery_error);
    char detail[128];
    snprintf(detail, sizeof detail, "only %zu of %zu records acknowledged in time", acked,
             count);
    return fail_with_cause(self, err, topic, detail);
}

void sx_kafka_produce_abort(sx_kafka_t *self)
{
    producer_discard(self);
}

int sx_kafka_produce(sx_kafka_t *self, const char *topic,
                     const sx_kafka_record_t *records, size_t count, sx_error_t *err)
{
    sx_kafka_produce_begin(self);
    for (size_t i = 0; i < count; i++)
        if (sx_kafka_produce_put(self, topic, &records[i], i, count, err) != 0)
            return -1;
    return sx_kafka_produce_end(self, topic, count, err);
}

/* One offset of partition 0 (`which`: RD_KAFKA_OFFSET_BEGINNING or _END),
 * asked as a ListOffsets through rd_kafka_offsets_for_times. Not through
 * rd_kafka_query_watermark_offsets: before librdkafka 2.3.0 (Debian bookworm
 * ships 2.0.2) it waits past its timeout, forever, once the broker that
 * leads the partition is down (librdkafka issue 2588, fixed by pull request
 * 4460); a task, and the worker's shutdown behind it, hung on it after a
 * pair's Kafka was stopped. */
static rd_kafka_resp_err_t partition_offset(rd_kafka_t *rk, const char *topic,
                                            int64_t which, int timeout_ms,
                                            int64_t *offset)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic, 0)->offset = which;
    rd_kafka_resp_err_t code = rd_kafka_offsets_for_times(rk, list, timeout_ms);
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR)
        code = list->elems[0].err;
    *offset = code == RD_KAFKA_RESP_ERR_NO_ERROR ? list->elems[0].offset : 0;
    rd_kafka_topic_partition_list_destroy(list);
    return code;
}

/* Partition 0's first offset and the offset after its last record, within
 * timeout_ms in all. Two requests: one list naming the partition twice is
 * answered once. */
static rd_kafka_resp_err_t partition_span(rd_kafka_t *rk, const char *topic,
                                          int timeout_ms, int64_t *low, int64_t *high)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    *low = *high = 0;
    rd_kafka_resp_err_t code =
        partition_offset(rk, topic, RD_KAFKA_OFFSET_BEGINNING, timeout_ms, low);
    int64_t left = deadline - zclock_mono();
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR)
        code = partition_offset(rk, topic, RD_KAFKA_OFFSET_END, left > 1 ? (int)left : 1,
                                high);
    return code;
}

int sx_kafka_topic_span(sx_kafka_t *self, const char *topic, int64_t *low, int64_t *high,
                        sx_error_t *err)
{
    rd_kafka_resp_err_t code =
        partition_span(self->producer, topic, self->timeout_ms, low, high);
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR)
        return 0;
    sx_error_set(err, "Kafka at %s: offsets of %s: %s", self->bootstrap, topic,
                 rd_kafka_err2str(code));
    /* The broker's answer, or librdkafka's own once its metadata says the
     * topic is not there (what a real broker gives: e2e_runtime). */
    bool unknown = code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                   code == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
                   code == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION;
    return unknown ? 1 : -1;
}

static rd_kafka_t *consumer_new(sx_kafka_t *self, sx_error_t *err)
{
    rd_kafka_conf_t *conf = base_conf(self, err);
    if (!conf)
        return NULL;
    /* Manual assignment only: the group id is never joined or committed. */
    const char *const settings[][2] = {
        {"group.id", "streamex-reader"},
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
        {"enable.partition.eof", "true"},
        {"auto.offset.reset", "earliest"},
        /* The topic is complete when it is read: no point waiting for more. */
        {"fetch.wait.max.ms", "20"},
        /* A metadata answer wakes the broker thread: the stall below then
         * lasts at most this long, not a second (bench/heavy,
         * docs/internals/measurements.md). */
        {"topic.metadata.refresh.interval.ms", "100"},
        /* librdkafka 2.0 (Debian's) stops fetching while its queue holds
         * queued.min.messages or queued.max.messages.kbytes, and starts
         * again only on its broker thread's next tick, so a reader slower
         * than its broker stalls about once per queue filled; each queued
         * message also costs memory besides its own. A larger queue stalls
         * less and holds more; 300,000 messages or 24 MB is the trade kept,
         * and fetches stay at librdkafka's 1 MB, since larger ones make a
         * bare reader stall on every fetch (bench/heavy, exec's materialize
         * and peak RSS; each setting's figures are in
         * docs/internals/measurements.md). */
        {"queued.min.messages", "300000"},
        {"queued.max.messages.kbytes", "24576"},
    };
    if (conf_set_all(conf, settings, sizeof settings / sizeof settings[0], err) != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    char reason[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, reason, sizeof reason);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        sx_error_set(err, "Kafka consumer for %s: %s", self->bootstrap, reason);
    }
    return rk;
}

/* Hands msg to fn as an sx_kafka_message_t over librdkafka's own buffers. */
static int deliver(const rd_kafka_message_t *msg, sx_kafka_each_fn *fn, void *arg,
                   sx_error_t *err)
{
    sx_kafka_message_t view = {
        .key = msg->key,
        .key_len = msg->key ? msg->key_len : 0,
        .value = msg->payload,
        .value_len = msg->payload ? msg->len : 0,
        .timestamp_ms = rd_kafka_message_timestamp(msg, NULL),
        .offset = msg->offset,
    };
    return fn(&view, arg, err);
}

/* One message of the assigned partition: delivered when below `end`, the
 * position `next` moved past it (an end-of-partition event moves it to the
 * broker's end). */
static int take_message(sx_kafka_t *self, const char *topic,
                        const rd_kafka_message_t *msg, int64_t end, int64_t *next,
                        sx_kafka_each_fn *fn, void *arg, sx_error_t *err)
{
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        *next = msg->offset > *next ? msg->offset : *next;
        return 0;
    }
    if (msg->err)
        return sx_error_set(err, "Kafka at %s: reading %s: %s", self->bootstrap, topic,
                            rd_kafka_message_errstr(msg));
    if (msg->offset >= end) {
        *next = end; /* written after the read began: not ours to return */
        return 0;
    }
    *next = msg->offset + 1;
    return deliver(msg, fn, arg, err);
}

/* Up to READ_BATCH messages of the queue: those already there, else the
 * first to come within POLL_MS. A batch call that waits fills its batch or
 * its whole timeout, which at a topic's end is POLL_MS lost on every read. */
static ssize_t take_batch(rd_kafka_queue_t *queue, rd_kafka_message_t **batch)
{
    ssize_t got = rd_kafka_consume_batch_queue(queue, 0, batch, READ_BATCH);
    if (got != 0)
        return got;
    batch[0] = rd_kafka_consume_queue(queue, POLL_MS);
    return batch[0] != NULL;
}

/* Consumes from the assigned partition, positioned at `start`, until offset
 * `end` is reached, READ_BATCH messages a call: one poll per message left
 * the reader slower than its broker, and librdkafka 2.0 stops fetching
 * each time that fills its queue (see consumer_new). The deadline moves
 * with progress, so a long topic is not cut short. */
static int consume_until(sx_kafka_t *self, rd_kafka_t *rk, const char *topic,
                         int64_t start, int64_t end, sx_kafka_each_fn *fn, void *arg,
                         sx_error_t *err)
{
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    rd_kafka_message_t *batch[READ_BATCH];
    int64_t deadline = zclock_mono() + self->timeout_ms;
    int64_t next = start;
    int rc = 0;
    while (rc == 0 && next < end) {
        if (zclock_mono() > deadline) {
            rc = sx_error_set(err,
                              "Kafka at %s: reading %s stalled at offset %lld of %lld",
                              self->bootstrap, topic, (long long)next, (long long)end);
            break;
        }
        ssize_t got = take_batch(queue, batch);
        if (got < 0)
            rc = sx_error_set(err, "Kafka at %s: reading %s: %s", self->bootstrap, topic,
                              rd_kafka_err2str(rd_kafka_last_error()));
        int64_t before = next;
        for (ssize_t i = 0; i < got; i++) {
            if (rc == 0)
                rc = take_message(self, topic, batch[i], end, &next, fn, arg, err);
            rd_kafka_message_destroy(batch[i]);
        }
        if (next > before)
            deadline = zclock_mono() + self->timeout_ms;
    }
    rd_kafka_queue_destroy(queue);
    return rc;
}

static int read_partition(sx_kafka_t *self, rd_kafka_t *rk, const char *topic,
                          sx_kafka_each_fn *fn, void *arg, sx_error_t *err)
{
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t code = partition_span(rk, topic, self->timeout_ms, &low, &high);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
        return sx_error_set(err, "Kafka at %s: offsets of %s: %s", self->bootstrap, topic,
                            rd_kafka_err2str(code));
    /* The changelog must be read whole: a topic whose first records are gone
     * (retention, a DeleteRecords) would fold into a relation missing them
     * and be scored as if it were the query's output. */
    if (low != 0)
        return sx_error_set(
            err,
            "Kafka at %s: %s starts at offset %" PRId64
            ", not 0: its first records were deleted, it cannot be read whole",
            self->bootstrap, topic, low);
    if (high <= low)
        return 0;
    rd_kafka_topic_partition_list_t *assignment = rd_kafka_topic_partition_list_new(1);
    /* The explicit first offset, not OFFSET_BEGINNING: a logical offset costs
     * an extra lookup and about half a second before the first fetch. */
    rd_kafka_topic_partition_list_add(assignment, topic, 0)->offset = low;
    code = rd_kafka_assign(rk, assignment);
    rd_kafka_topic_partition_list_destroy(assignment);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
        return sx_error_set(err, "Kafka at %s: assigning %s: %s", self->bootstrap, topic,
                            rd_kafka_err2str(code));
    int rc = consume_until(self, rk, topic, low, high, fn, arg, err);
    rd_kafka_assign(rk, NULL);
    return rc;
}

int sx_kafka_read_topic_each(sx_kafka_t *self, const char *topic, sx_kafka_each_fn *fn,
                             void *arg, sx_error_t *err)
{
    rd_kafka_t *rk = consumer_new(self, err);
    if (!rk)
        return -1;
    int rc = read_partition(self, rk, topic, fn, arg, err);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return rc;
}

/* A growable array of messages read so far. */
typedef struct {
    sx_kafka_message_t *items;
    size_t count, capacity;
} message_list_t;

/* Keeps a copy of msg's key and value (NUL-terminated, for convenience). */
static int message_list_add(const sx_kafka_message_t *msg, void *arg, sx_error_t *err)
{
    (void)err;
    message_list_t *list = arg;
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 64;
        list->items = sx_realloc(list->items, list->capacity, sizeof *list->items);
    }
    sx_kafka_message_t *out = &list->items[list->count++];
    *out = *msg;
    out->key = msg->key ? sx_strndup(msg->key, msg->key_len) : NULL;
    out->value = msg->value ? sx_strndup(msg->value, msg->value_len) : NULL;
    return 0;
}

int sx_kafka_read_topic(sx_kafka_t *self, const char *topic,
                        sx_kafka_message_t **messages, size_t *count, sx_error_t *err)
{
    *messages = NULL;
    *count = 0;
    message_list_t list = {0};
    int rc = sx_kafka_read_topic_each(self, topic, message_list_add, &list, err);
    if (rc != 0) {
        sx_kafka_messages_free(&list.items, list.count);
        return rc;
    }
    *messages = list.items;
    *count = list.count;
    return 0;
}

void sx_kafka_messages_free(sx_kafka_message_t **messages, size_t count)
{
    if (!messages || !*messages)
        return;
    for (size_t i = 0; i < count; i++) {
        free((*messages)[i].key);
        free((*messages)[i].value);
    }
    free(*messages);
    *messages = NULL;
}

void sx_kafka_topic_sanitize(const char *name, char *out, size_t out_size)
{
    if (out_size == 0)
        return;
    size_t limit = out_size - 1 < 249 ? out_size - 1 : 249;
    size_t n = 0;
    for (; name[n] && n < limit; n++) {
        char c = name[n];
        bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out[n] = legal ? c : '_';
    }
    out[n] = '\0';
}

/* ---- self-test, against librdkafka's in-process mock cluster ---------- */

static void test_topic_names(void)
{
    char out[300];
    sx_kafka_topic_sanitize("sx.run-1.t 0/1.2.bids", out, sizeof out);
    SX_CHECK(strcmp(out, "sx.run-1.t_0_1.2.bids") == 0);
    sx_kafka_topic_sanitize("tâche", out, 4);
    SX_CHECK(strcmp(out, "t__") == 0);
    char big[400];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sx_kafka_topic_sanitize(big, out, sizeof out);
    SX_CHECK(strlen(out) == 249);
}

/* Records with every shape the replay and the sinks produce: keys and null
 * keys, values and tombstones, explicit timestamps. */
static void test_round_trip(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    enum { N = 2000 };
    rd_kafka_mock_topic_create(mock, "rt", 1, 1);
    sx_kafka_record_t *records = sx_alloc(N, sizeof *records);
    char(*values)[32] = sx_alloc(N, sizeof *values);
    for (int i = 0; i < N; i++) {
        snprintf(values[i], sizeof values[i], "{\"i\":%d}", i);
        records[i].value = i % 7 == 3 ? NULL : values[i];
        records[i].value_len = strlen(values[i]);
        records[i].key = i % 2 ? "k" : NULL;
        records[i].key_len = 1;
        records[i].timestamp_ms = 1700000000000LL + i;
    }
    sx_error_t err;
    sx_error_clear(&err);
    SX_CHECK(sx_kafka_produce(kafka, "rt", records, N, &err) == 0);
    sx_kafka_message_t *messages = NULL;
    size_t count = 0;
    SX_CHECK(sx_kafka_read_topic(kafka, "rt", &messages, &count, &err) == 0);
    SX_CHECK(count == N);
    for (int i = 0; i < N; i++) {
        SX_CHECK(messages[i].offset == i);
        SX_CHECK(messages[i].timestamp_ms == 1700000000000LL + i);
        SX_CHECK((messages[i].key != NULL) == (i % 2 == 1));
        if (i % 7 == 3)
            SX_CHECK(messages[i].value == NULL);
        else
            SX_CHECK(strcmp(messages[i].value, values[i]) == 0 &&
                     messages[i].value_len == strlen(values[i]));
    }
    sx_kafka_messages_free(&messages, count);
    SX_CHECK(messages == NULL);
    /* A second batch lands after the first: the read sees both, in order. */
    SX_CHECK(sx_kafka_produce(kafka, "rt", records, 10, &err) == 0);
    SX_CHECK(sx_kafka_read_topic(kafka, "rt", &messages, &count, &err) == 0);
    SX_CHECK(count == N + 10 && messages[N].offset == N);
    sx_kafka_messages_free(&messages, count);
    free(records);
    free(values);
}

/* Counts the messages handed over and refuses the one at offset 1500. */
static int refuse_at_1500(const sx_kafka_message_t *message, void *arg, sx_error_t *err)
{
    (*(int *)arg)++;
    return message->offset == 1500
               ? sx_error_set(err, "refused %lld", (long long)message->offset)
               : 0;
}

/* A reader that fails mid-batch (the second batch of 1,024) stops there:
 * nothing after it is handed over, and the batch's other messages are
 * released (LeakSanitizer). */
static void test_read_stops_at_refusal(sx_kafka_t *kafka)
{
    int seen = 0;
    sx_error_t err;
    SX_CHECK(sx_kafka_read_topic_each(kafka, "rt", refuse_at_1500, &seen, &err) == -1);
    SX_CHECK(seen == 1501);
    SX_CHECK(strcmp(err.msg, "refused 1500") == 0);
}

static void test_empty_topic(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    rd_kafka_mock_topic_create(mock, "empty", 1, 1);
    sx_kafka_message_t *messages = NULL;
    size_t count = 7;
    sx_error_t err;
    SX_CHECK(sx_kafka_read_topic(kafka, "empty", &messages, &count, &err) == 0);
    SX_CHECK(count == 0 && messages == NULL);
}

/* A topic whose first records are gone is refused, not read in part: the
 * mock keeps the last 5 MB of a partition (its own retention), so 7 MB of
 * records move the topic's first offset past 0. */
static void test_trimmed_topic(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    enum { N = 700, SIZE = 10000 };
    rd_kafka_mock_topic_create(mock, "trimmed", 1, 1);
    char *value = sx_alloc(SIZE, 1);
    memset(value, 'x', SIZE);
    sx_kafka_record_t *records = sx_alloc(N, sizeof *records);
    for (int i = 0; i < N; i++)
        records[i] =
            (sx_kafka_record_t){.value = value, .value_len = SIZE, .timestamp_ms = i};
    sx_error_t err;
    SX_CHECK(sx_kafka_produce(kafka, "trimmed", records, N, &err) == 0);
    free(records);
    free(value);
    int64_t low = -1, high = -1;
    SX_CHECK(sx_kafka_topic_span(kafka, "trimmed", &low, &high, &err) == 0);
    SX_CHECK(low > 0 && high == N);
    sx_kafka_message_t *messages = NULL;
    size_t count = 7;
    SX_CHECK(sx_kafka_read_topic(kafka, "trimmed", &messages, &count, &err) == -1);
    SX_CHECK(count == 0 && messages == NULL);
    char expected[128];
    snprintf(expected, sizeof expected,
             "trimmed starts at offset %" PRId64
             ", not 0: its first records were deleted",
             low);
    SX_CHECK(strstr(err.msg, expected));
}

/* A topic's span: offsets 0 to its record count; a topic the broker does
 * not know is told apart (1) from a broker that does not answer (-1). */
static void test_topic_span(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    rd_kafka_mock_topic_create(mock, "span", 1, 1);
    sx_kafka_record_t record = {.value = "x", .value_len = 1, .timestamp_ms = 1};
    sx_error_t err;
    SX_CHECK(sx_kafka_produce(kafka, "span", &record, 1, &err) == 0);
    SX_CHECK(sx_kafka_produce(kafka, "span", &record, 1, &err) == 0);
    int64_t low = -1, high = -1;
    SX_CHECK(sx_kafka_topic_span(kafka, "span", &low, &high, &err) == 0);
    SX_CHECK(low == 0 && high == 2);
    /* A topic the broker does not know is 1 on the pair's broker, which
     * creates none on its own (tests/e2e/runtime_job.c); the mock creates it
     * (and retries the error it is told to give at its own pace). A broker
     * that went down is -1 within the client's timeout, also for a client
     * that knew it as the partition's leader (the watermark query waited
     * for it forever). */
    sx_kafka_t *impatient =
        sx_kafka_new(rd_kafka_mock_cluster_bootstraps(mock), 500, &err);
    SX_CHECK(sx_kafka_topic_span(impatient, "span", &low, &high, &err) == 0);
    SX_CHECK(rd_kafka_mock_broker_set_down(mock, 1) == 0);
    SX_CHECK(sx_kafka_topic_span(impatient, "span", &low, &high, &err) == -1);
    SX_CHECK(strstr(err.msg, "offsets of span"));
    sx_kafka_destroy(&impatient);
    SX_CHECK(rd_kafka_mock_broker_set_up(mock, 1) == 0);
}

/* Listing keeps only the names with the prefix: what a sweep removes. */
static void test_list_topics(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    rd_kafka_mock_topic_create(mock, "sx.old.t1.1.s", 1, 1);
    rd_kafka_mock_topic_create(mock, "sx.old.t1.1.result", 1, 1);
    char **topics = NULL;
    size_t count = 0;
    sx_error_t err;
    SX_CHECK(sx_kafka_list_topics(kafka, "sx.", &topics, &count, &err) == 0);
    SX_CHECK(count == 2);
    bool s = false, result = false;
    for (size_t i = 0; i < count; i++) {
        s = s || strcmp(topics[i], "sx.old.t1.1.s") == 0;
        result = result || strcmp(topics[i], "sx.old.t1.1.result") == 0;
    }
    SX_CHECK(s && result);
    sx_kafka_topics_free(&topics, count);
    SX_CHECK(topics == NULL);
    SX_CHECK(sx_kafka_list_topics(kafka, "nothing-", &topics, &count, &err) == 0);
    SX_CHECK(count == 0);
    sx_kafka_topics_free(&topics, count);
}

/* A broker that refuses the records: produce fails, names the topic, and the
 * client still works for the next task. */
static void test_refused_delivery(sx_kafka_t *kafka, rd_kafka_mock_cluster_t *mock)
{
    rd_kafka_mock_topic_create(mock, "refused", 1, 1);
    rd_kafka_mock_topic_create(mock, "after", 1, 1);
    rd_kafka_mock_push_request_errors(mock, 0 /* Produce */, 1,
                                      RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    sx_kafka_record_t record = {.value = "x", .value_len = 1, .timestamp_ms = 1};
    sx_error_t err;
    sx_error_clear(&err);
    SX_CHECK(sx_kafka_produce(kafka, "refused", &record, 1, &err) == -1);
    SX_CHECK(strstr(err.msg, "refused") != NULL);
    sx_error_clear(&err);
    SX_CHECK(sx_kafka_produce(kafka, "after", &record, 1, &err) == 0);
    sx_kafka_message_t *messages = NULL;
    size_t count = 0;
    SX_CHECK(sx_kafka_read_topic(kafka, "after", &messages, &count, &err) == 0);
    SX_CHECK(count == 1 && strcmp(messages[0].value, "x") == 0);
    sx_kafka_messages_free(&messages, count);
}

/* The mock broker has no topic admin API: creating must fail cleanly, in
 * time, naming the topic. Deleting nothing is a no-op. */
static void test_admin_errors(const char *bootstrap)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_kafka_t *kafka = sx_kafka_new(bootstrap, 1000, &err);
    SX_CHECK(kafka);
    SX_CHECK(sx_kafka_create_topic(kafka, "sx.r.t.1.bids", &err) == -1);
    SX_CHECK(strstr(err.msg, "sx.r.t.1.bids") != NULL);
    const char *two[] = {"sx.r.t.1.s", "sx.r.t.1.result"};
    SX_CHECK(sx_kafka_create_topics(kafka, two, 2, &err) == -1);
    SX_CHECK(strstr(err.msg, "creating topic sx.r.t.1.s and others") != NULL);
    SX_CHECK(sx_kafka_create_topics(kafka, NULL, 0, &err) == 0);
    SX_CHECK(sx_kafka_delete_topics(kafka, NULL, 0, &err) == 0);
    sx_kafka_destroy(&kafka);
}

static void test_unreachable_broker(void)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_kafka_t *kafka = sx_kafka_new("127.0.0.1:1", 1500, &err);
    SX_CHECK(kafka);
    int64_t start = zclock_mono();
    SX_CHECK(sx_kafka_check(kafka, &err) == -1);
    SX_CHECK(zclock_mono() - start < 5000);
    SX_CHECK(strstr(err.msg, "127.0.0.1:1") != NULL);
    sx_kafka_record_t record = {.value = "x", .value_len = 1, .timestamp_ms = 1};
    SX_CHECK(sx_kafka_produce(kafka, "nowhere", &record, 1, &err) == -1);
    SX_CHECK(zclock_mono() - start < 10000);
    sx_kafka_destroy(&kafka);
    SX_CHECK(kafka == NULL);
    sx_kafka_destroy(&kafka);
    SX_CHECK(sx_kafka_new("", 1000, &err) == NULL);
}

void sx_kafka_test(bool verbose)
{
    test_topic_names();
    char reason[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_t *owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof reason);
    SX_CHECK(owner);
    rd_kafka_mock_cluster_t *mock = rd_kafka_mock_cluster_new(owner, 1);
    SX_CHECK(mock);
    sx_error_t err;
    sx_kafka_t *kafka = sx_kafka_new(rd_kafka_mock_cluster_bootstraps(mock), 5000, &err);
    SX_CHECK(kafka);
    SX_CHECK(sx_kafka_check(kafka, &err) == 0);
    int64_t start = zclock_mono();
    test_round_trip(kafka, mock);
    test_read_stops_at_refusal(kafka);
    test_empty_topic(kafka, mock);
    test_trimmed_topic(kafka, mock);
    test_list_topics(kafka, mock);
    test_topic_span(kafka, mock);
    if (verbose)
        printf("kafka: round trip %lld ms\n", (long long)(zclock_mono() - start));
    test_refused_delivery(kafka, mock);
    if (verbose)
        printf("kafka: refused delivery %lld ms\n", (long long)(zclock_mono() - start));
    test_admin_errors(rd_kafka_mock_cluster_bootstraps(mock));
    if (verbose)
        printf("kafka: admin errors %lld ms\n", (long long)(zclock_mono() - start));
    sx_kafka_destroy(&kafka);
    rd_kafka_mock_cluster_destroy(mock);
    rd_kafka_destroy(owner);
    test_unreachable_broker();
    if (verbose)
        printf("kafka: unreachable broker %lld ms\n", (long long)(zclock_mono() - start));
}
