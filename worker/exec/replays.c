/* replays.c: a worker's shared source topics (see replays.h). One mutex
 * guards the table of entries, one per key; an entry is ABSENT (no topic
 * ready: the next task to ask claims it and replays), REPLAYING (a task is
 * producing it; others wait on the condition) or READY (its topic holds
 * `count` records). Entries are never freed before the registry, so a
 * pointer to one stays valid while the lock is not held. Each replay goes
 * into a topic of a new name, so a topic found short is never written
 * again, and no name waits for Kafka to finish deleting an older one. */
#include "worker/exec/replays.h"

#include "common/clock.h"
#include "common/digest.h"
#include "common/log.h"
#include "common/mem.h"

#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLIENT_TIMEOUT_MS 10000

typedef enum { ENTRY_ABSENT = 0, ENTRY_REPLAYING, ENTRY_READY } entry_state_t;

typedef struct {
    entry_state_t state;
    char topic[256];
    int64_t count; /* records in the topic, when READY */
} entry_t;

struct _sx_replays_t {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* an entry left REPLAYING */
    zhashx_t *entries;      /* key -> entry_t* */
    zlist_t *topics;        /* every topic made, deleted at the end */
    char *prefix;           /* sx.<run>.src.<token> */
    unsigned next;          /* the number of the next topic */
    size_t replays;
    size_t served; /* sources handed to tasks */
    bool keep;
    sx_kafka_t *admin; /* deletes the topics at the end */
    sx_topic_maker_fn *make;
    void *make_arg;
};

static void entry_free(void **item)
{
    free(*item);
    *item = NULL;
}

sx_replays_t *sx_replays_new(const char *bootstrap, const char *run_id, bool keep,
                             sx_error_t *err)
{
    if (!bootstrap || !run_id)
        return sx_error_set(err, "the shared replays need a Kafka address and a run id"),
               NULL;
    sx_replays_t *self = sx_new(sx_replays_t);
    self->admin = sx_kafka_new(bootstrap, CLIENT_TIMEOUT_MS, err);
    if (!self->admin) {
        free(self);
        return NULL;
    }
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->changed, NULL);
    self->entries = zhashx_new();
    zhashx_set_destructor(self->entries, entry_free);
    self->topics = zlist_new();
    zlist_autofree(self->topics);
    /* Random per registry: another worker of the same run id on one shared
     * Kafka (two started in the same second) still names its topics apart. */
    zuuid_t *token = zuuid_new();
    char raw[512];
    snprintf(raw, sizeof raw, "sx.%s.src.%.12s", run_id, zuuid_str_canonical(token));
    zuuid_destroy(&token);
    char legal[256];
    sx_kafka_topic_sanitize(raw, legal, 200);
    self->prefix = sx_strdup(legal);
    self->keep = keep;
    return self;
}

/* Deletes the topics made, in one request. */
static void delete_topics(sx_replays_t *self)
{
    size_t count = zlist_size(self->topics);
    if (count == 0)
        return;
    if (self->keep) {
        sx_info("keeping %zu shared source topic(s) %s.*", count, self->prefix);
        return;
    }
    sx_error_t err;
    if (sx_kafka_delete_topic_list(self->admin, self->topics, &err) != 0)
        sx_warn("shared source topics: %s (the next start's sweep removes them)",
                err.msg);
}

void sx_replays_destroy(sx_replays_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_replays_t *self = *self_p;
    if (self->served > 0)
        sx_info("shared source topics: %zu replay(s) served %zu task source(s)",
                self->replays, self->served);
    delete_topics(self);
    sx_kafka_destroy(&self->admin);
    zhashx_destroy(&self->entries);
    zlist_destroy(&self->topics);
    pthread_cond_destroy(&self->changed);
    pthread_mutex_destroy(&self->lock);
    free(self->prefix);
    free(self);
    *self_p = NULL;
}

void sx_replays_set_topic_maker(sx_replays_t *self, sx_topic_maker_fn *make, void *arg)
{
    self->make = make;
    self->make_arg = arg;
}

size_t sx_replays_count(sx_replays_t *self)
{
    pthread_mutex_lock(&self->lock);
    size_t count = self->replays;
    pthread_mutex_unlock(&self->lock);
    return count;
}

int sx_replays_key(const sx_source_t *source, char key[41], sx_error_t *err)
{
    char file[41];
    if (sx_hash_file(source->path, file, NULL, err) != 0)
        return -1;
    /* Everything prepare.c reads besides the file; the table's name and DDL
     * do not change the records. One line each, so no value can pass for
     * another's. */
    sx_digest_t *digest = sx_digest_new();
    sx_digest_line(digest, "replay 1");
    sx_digest_line(digest, "file %s", file);
    sx_digest_line(digest, "kind %d", (int)source->kind);
    sx_digest_line(digest, "event_time %s", source->event_time ? source->event_time : "");
    for (size_t i = 0; i < source->column_count; i++) {
        const sx_column_t *c = &source->columns[i];
        sx_digest_line(digest, "column %zu %zu:%s", i, strlen(c->name), c->name);
        sx_digest_line(digest, "from %zu:%s", strlen(c->from), c->from);
        sx_digest_line(digest, "time %d %d %zu:%s", (int)c->time_from, (int)c->time_to,
                       c->time_pattern ? strlen(c->time_pattern) : 0,
                       c->time_pattern ? c->time_pattern : "");
    }
    sx_digest_hex(digest, key);
    sx_digest_destroy(&digest);
    return 0;
}

/* One replay in progress: where each prepared record goes. */
typedef struct {
    sx_kafka_t *kafka;
    const char *topic;
    size_t index, count;
    bool kafka_failed; /* else a failure is the source's */
} producing_t;

static int produce_record(const char *value, size_t length, int64_t timestamp, void *arg,
                          sx_error_t *err)
{
    producing_t *p = arg;
    sx_kafka_record_t record = {
        .value = value, .value_len = length, .timestamp_ms = timestamp};
    p->kafka_failed =
        sx_kafka_produce_put(p->kafka, p->topic, &record, p->index++, p->count, err) != 0;
    return p->kafka_failed ? -1 : 0;
}

sx_replay_rc_t sx_replay_produce(sx_kafka_t *kafka, const char *topic,
                                 const char *task_id, const sx_source_t *source,
                                 const sx_prepare_t *prepared, sx_error_t *err)
{
    producing_t p = {.kafka = kafka, .topic = topic, .count = sx_prepare_count(prepared)};
    sx_kafka_produce_begin(kafka);
    if (sx_prepare_each(prepared, task_id, source, produce_record, &p, err) != 0) {
        if (p.kafka_failed)
            return SX_REPLAY_INFRA_ERROR;
        sx_kafka_produce_abort(kafka);
        return SX_REPLAY_INPUT_ERROR;
    }
    return sx_kafka_produce_end(kafka, topic, p.count, err) == 0 ? SX_REPLAY_READY
                                                                 : SX_REPLAY_INFRA_ERROR;
}

/* Prepares the source (a scan: its values are made again as they are
 * produced) and replays it into a new topic: *count records. */
static sx_replay_rc_t replay(sx_replays_t *self, sx_kafka_t *kafka, const char *task_id,
                             const sx_source_t *source, const char *topic, int64_t *count,
                             double *prepare_s, sx_error_t *err)
{
    double start = sx_clock_seconds();
    sx_prepare_t *prepared = sx_prepare_scan(task_id, source, err);
    *prepare_s = sx_clock_seconds() - start;
    if (!prepared)
        return SX_REPLAY_INPUT_ERROR;
    sx_replay_rc_t rc = SX_REPLAY_INFRA_ERROR;
    if ((self->make ? self->make(self->make_arg, &topic, 1, err)
                    : sx_kafka_create_topic(kafka, topic, err)) == 0)
        rc = sx_replay_produce(kafka, topic, task_id, source, prepared, err);
    *count = (int64_t)sx_prepare_count(prepared);
    sx_prepare_destroy(&prepared);
    return rc;
}

/* Whether a ready topic still holds exactly its records: 0 yes, 1 no (gone
 * or another count: replay again), -1 Kafka did not answer. */
static int check_topic(sx_kafka_t *kafka, const char *topic, int64_t count,
                       sx_error_t *err)
{
    int64_t low = 0, high = 0;
    int rc = sx_kafka_topic_span(kafka, topic, &low, &high, err);
    if (rc == 0 && (low != 0 || high != count)) {
        sx_error_set(err,
                     "shared topic %s holds offsets %lld to %lld, not the %lld records "
                     "replayed",
                     topic, (long long)low, (long long)high, (long long)count);
        rc = 1;
    }
    return rc;
}

/* Claims entry (held REPLAYING, lock held), replays into a new topic and
 * publishes the outcome to the waiting tasks. */
static sx_replay_rc_t replay_entry(sx_replays_t *self, entry_t *entry, sx_kafka_t *kafka,
                                   const char *task_id, const sx_source_t *source,
                                   char *topic, size_t topic_size, double *prepare_s,
                                   sx_error_t *err)
{
    entry->state = ENTRY_REPLAYING;
    snprintf(entry->topic, sizeof entry->topic, "%s.%u", self->prefix, self->next++);
    zlist_append(self->topics, entry->topic);
    self->replays++;
    char name[256];
    snprintf(name, sizeof name, "%s", entry->topic);
    pthread_mutex_unlock(&self->lock);
    int64_t count = 0;
    sx_replay_rc_t rc =
        replay(self, kafka, task_id, source, name, &count, prepare_s, err);
    pthread_mutex_lock(&self->lock);
    entry->state = rc == SX_REPLAY_READY ? ENTRY_READY : ENTRY_ABSENT;
    entry->count = count;
    self->served += rc == SX_REPLAY_READY;
    pthread_cond_broadcast(&self->changed);
    pthread_mutex_unlock(&self->lock);
    if (rc == SX_REPLAY_READY)
        snprintf(topic, topic_size, "%s", name);
    return rc;
}

sx_replay_rc_t sx_replays_acquire(sx_replays_t *self, sx_kafka_t *kafka,
                                  const char *task_id, const sx_source_t *source,
                                  char *topic, size_t topic_size, double *prepare_s,
                                  sx_error_t *err)
{
    *prepare_s = 0;
    char key[41];
    if (sx_replays_key(source, key, err) != 0)
        return sx_error_prefix(err, "task %s: source %s", task_id, source->name),
               SX_REPLAY_INPUT_ERROR;
    pthread_mutex_lock(&self->lock);
    entry_t *entry = zhashx_lookup(self->entries, key);
    if (!entry) {
        entry = sx_new(entry_t);
        zhashx_insert(self->entries, key, entry);
    }
    for (;;) {
        if (entry->state == ENTRY_ABSENT)
            return replay_entry(self, entry, kafka, task_id, source, topic, topic_size,
                                prepare_s, err);
        if (entry->state == ENTRY_REPLAYING) {
            pthread_cond_wait(&self->changed, &self->lock);
            continue;
        }
        char name[256];
        snprintf(name, sizeof name, "%s", entry->topic);
        int64_t count = entry->count;
        pthread_mutex_unlock(&self->lock);
        int checked = check_topic(kafka, name, count, err);
        if (checked == 0) {
            snprintf(topic, topic_size, "%s", name);
            pthread_mutex_lock(&self->lock);
            self->served++;
            pthread_mutex_unlock(&self->lock);
            return SX_REPLAY_READY;
        }
        if (checked < 0)
            return SX_REPLAY_INFRA_ERROR;
        sx_warn("task %s: %s: replaying source %s again", task_id, err->msg,
                source->name);
        pthread_mutex_lock(&self->lock);
        /* Unless another task replayed it meanwhile, it is ours to replay. */
        if (entry->state == ENTRY_READY && strcmp(entry->topic, name) == 0)
            entry->state = ENTRY_ABSENT;
    }
}
