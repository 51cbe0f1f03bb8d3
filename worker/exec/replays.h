/* replays.h: a worker's shared source topics on its pair (SPEC section 4,
 * docs/execution.md step 3): replay once, execute many. A live or static
 * source is prepared and replayed once into a topic of its own, and every
 * task and every method that declares a source with the same prepared
 * records reads that topic, from its first offset to its last, as it would
 * read a private replay: same records, same order, same timestamps (a live
 * record's timestamp is its event time, so a replay is the same whenever it
 * happens). What decides the prepared records is the key: the CSV's content,
 * the source's kind, its column projection and time conversions and its
 * event-time column; two sources differing in any of these never share.
 * A task's sink topic stays its own.
 *
 * Several executors of one worker use one registry at once: two tasks that
 * need the same source at the same time cause exactly one replay, the other
 * waiting until every record of it is acknowledged; a replay that fails
 * leaves nothing marked ready (the next task tries again). Before each use
 * the topic is checked to still hold exactly the replayed records (first
 * offset 0, end offset the record count): a topic that is gone or short
 * (Kafka lost it) is replayed again into a new topic, and a broker that does
 * not answer is infra trouble, never a verdict from a partial topic. Topic
 * names are sx.<run>.src.<token>.<n>, the token random per registry, so two
 * workers on one shared Kafka never collide; the topics are deleted when
 * the registry is destroyed, and a sweep at the next start removes them
 * like other leftovers (they start with sx.). */
#ifndef SX_REPLAYS_H
#define SX_REPLAYS_H

#include "common/error.h"
#include "common/bench/task.h"
#include "worker/clients/kafka.h"
#include "worker/exec/prepare.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct _sx_replays_t sx_replays_t;

/* bootstrap: the pair's Kafka, where the topics are deleted at the end;
 * run_id: part of every topic name; keep: leave the topics (debugging). */
sx_replays_t *sx_replays_new(const char *bootstrap, const char *run_id, bool keep,
                             sx_error_t *err);
/* Deletes every topic the registry made (unless keep), then frees it. Call
 * it once no executor uses it any more. */
void sx_replays_destroy(sx_replays_t **self_p);

/* Makes topics in place of Kafka's admin API (librdkafka's mock Kafka has
 * none): for tests. NULL: the registry creates them itself. */
void sx_replays_set_topic_maker(sx_replays_t *self, sx_topic_maker_fn *make, void *arg);

typedef enum {
    SX_REPLAY_READY = 0,   /* *topic holds the source's records */
    SX_REPLAY_INPUT_ERROR, /* the source's own files are broken: the task's fault */
    SX_REPLAY_INFRA_ERROR, /* Kafka could not take or keep the records */
} sx_replay_rc_t;

/* The topic holding source's prepared records, replayed now (with kafka,
 * the caller's client, which produces and checks) unless a ready one exists
 * and still holds them all. task_id names the task in messages; *prepare_s
 * receives the seconds spent preparing (0 when the topic was there).
 * err says what failed unless READY. */
sx_replay_rc_t sx_replays_acquire(sx_replays_t *self, sx_kafka_t *kafka,
                                  const char *task_id, const sx_source_t *source,
                                  char *topic, size_t topic_size, double *prepare_s,
                                  sx_error_t *err);

/* How many replays the registry has done, failed ones included (tests). */
size_t sx_replays_count(sx_replays_t *self);

/* The key of a source: the SHA-1 of what decides its prepared records (see
 * above). -1 when its CSV cannot be read. */
int sx_replays_key(const sx_source_t *source, char key[41], sx_error_t *err);

/* Produces a prepared source's records to topic in replay order, each with
 * its timestamp (a live record's event time), and returns once every one is
 * acknowledged: the replay of a shared topic and of a private one alike.
 * A scanned source is converted again as it is produced (sx_prepare_each):
 * INPUT_ERROR when its file no longer converts as scanned, INFRA_ERROR
 * when Kafka does not take the records. */
sx_replay_rc_t sx_replay_produce(sx_kafka_t *kafka, const char *topic,
                                 const char *task_id, const sx_source_t *source,
                                 const sx_prepare_t *prepared, sx_error_t *err);

/* No sx_replays_test here: the registry is tested by tests/unit/replays.c,
 * on the mock Kafka of tests/kit/mockkafka.h, test code that stays out of
 * the program. */

#endif
