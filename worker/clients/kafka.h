/* kafka.h: the worker's Kafka client on librdkafka. It creates and deletes
 * the single-partition topics of one task, replays records with an
 * idempotent acks=all producer and returns only once the broker confirmed
 * every one of them, and reads a whole topic back from its first offset to
 * the end offset it had when the read began. A health check lets the runtime
 * tell whether the broker answers. Every call has a short deadline; errors
 * name the broker, the topic and what Kafka said. */
#ifndef SX_KAFKA_H
#define SX_KAFKA_H

#include "common/error.h"

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One record to produce. A NULL key or value is sent as Kafka null (a NULL
 * value is a tombstone); lengths are ignored for NULL pointers. */
typedef struct {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
    int64_t timestamp_ms; /* record timestamp (CreateTime) */
} sx_kafka_record_t;

/* One record read back; key/value are NULL for Kafka null. From
 * sx_kafka_read_topic they are NUL-terminated heap copies; handed to an
 * sx_kafka_each_fn they are librdkafka's buffers, not NUL-terminated and
 * valid only during the call. */
typedef struct {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    int64_t timestamp_ms;
    int64_t offset;
} sx_kafka_message_t;

typedef struct _sx_kafka_t sx_kafka_t;

/* Connects lazily to `bootstrap` ("host:port[,...]"); timeout_ms bounds every
 * later call (metadata, topic admin, delivery, reading). */
sx_kafka_t *sx_kafka_new(const char *bootstrap, int timeout_ms, sx_error_t *err);
void sx_kafka_destroy(sx_kafka_t **self_p);

/* Asks the broker for cluster metadata: 0 when it answered in time. */
int sx_kafka_check(sx_kafka_t *self, sx_error_t *err);

/* Creates topics with one partition each, replication factor 1 and no
 * time-based retention (record timestamps are original event times), in
 * one request, and waits until each one's leader is known. A topic that
 * already exists is an error: names are unique per run, task and attempt,
 * so an existing one means a clash. */
int sx_kafka_create_topics(sx_kafka_t *self, const char *const *topics, size_t count,
                           sx_error_t *err);
/* sx_kafka_create_topics of one topic. */
int sx_kafka_create_topic(sx_kafka_t *self, const char *topic, sx_error_t *err);

/* The first offset and the end offset of partition 0 of `topic`: a topic
 * written once from empty holds exactly its records when low is 0 and high
 * their count. Returns 0; 1 when the broker does not know the topic; -1
 * when it did not answer. err says which in both cases. */
int sx_kafka_topic_span(sx_kafka_t *self, const char *topic, int64_t *low, int64_t *high,
                        sx_error_t *err);

/* Makes topics in place of sx_kafka_create_topics: a test's stand-in on
 * librdkafka's mock Kafka, which has no topic admin API. Returns 0, or -1
 * with *err set. */
typedef int(sx_topic_maker_fn)(void *arg, const char *const *topics, size_t count,
                               sx_error_t *err);

/* Deletes topics; one that does not exist is not an error. */
int sx_kafka_delete_topics(sx_kafka_t *self, const char *const *topics, size_t count,
                           sx_error_t *err);
/* The same for the names (char *) in a list, which it leaves as it is. */
int sx_kafka_delete_topic_list(sx_kafka_t *self, zlist_t *topics, sx_error_t *err);

/* The names of the broker's topics that start with `prefix` (a heap array of
 * heap strings, free with sx_kafka_topics_free). */
int sx_kafka_list_topics(sx_kafka_t *self, const char *prefix, char ***topics,
                         size_t *count, sx_error_t *err);
void sx_kafka_topics_free(char ***topics, size_t count);

/* Produces records to partition 0 of `topic`, in array order, and waits for
 * every delivery report: returns 0 only when all were acknowledged. */
int sx_kafka_produce(sx_kafka_t *self, const char *topic,
                     const sx_kafka_record_t *records, size_t count, sx_error_t *err);
/* The same, the caller handing the records over as it makes them (a large
 * source needs no array of records): begin,
 * put each (index of count, for messages), then end, which waits for every
 * delivery report as sx_kafka_produce does. A put that fails has dropped
 * what was queued; a caller that stops for its own reason calls abort. */
void sx_kafka_produce_begin(sx_kafka_t *self);
int sx_kafka_produce_put(sx_kafka_t *self, const char *topic,
                         const sx_kafka_record_t *record, size_t index, size_t count,
                         sx_error_t *err);
int sx_kafka_produce_end(sx_kafka_t *self, const char *topic, size_t count,
                         sx_error_t *err);
void sx_kafka_produce_abort(sx_kafka_t *self);

/* Reads partition 0 of `topic` from the beginning to the end offset queried
 * first. On success *messages (heap array, free with sx_kafka_messages_free)
 * holds them in offset order. */
int sx_kafka_read_topic(sx_kafka_t *self, const char *topic,
                        sx_kafka_message_t **messages, size_t *count, sx_error_t *err);
void sx_kafka_messages_free(sx_kafka_message_t **messages, size_t count);

/* The same read, each message handed to fn as it arrives, in offset order,
 * so a large topic is never held whole. A non-zero return from fn stops the
 * read, and is returned (fn fills err). */
typedef int(sx_kafka_each_fn)(const sx_kafka_message_t *message, void *arg,
                              sx_error_t *err);
int sx_kafka_read_topic_each(sx_kafka_t *self, const char *topic, sx_kafka_each_fn *fn,
                             void *arg, sx_error_t *err);

/* Turns any string into a legal Kafka topic name ([A-Za-z0-9._-], at most
 * 249 characters): every other byte becomes '_'. Writes into out. */
void sx_kafka_topic_sanitize(const char *name, char *out, size_t out_size);

void sx_kafka_test(bool verbose);

#endif
