/* proto.h: the wire messages between the coordinator and its workers (docs/outputs.md,
 * docs/cluster.md), each one ZeroMQ frame holding a msgpack array
 * ["SXP", version, type, fields...]. One encoder and one decoder per message
 * type; decoding is strict: a frame that is oversized, not msgpack, of another
 * protocol version, of an unknown type, with a missing, extra or mistyped
 * field, or with an unsafe name is rejected with an error naming what is
 * wrong, never a crash. Which messages a peer may send in which state is the
 * peers' business (sx_msg_from_worker / sx_msg_from_coordinator help).
 *
 *   worker -> coordinator: HELLO, RESULT, HEARTBEAT, GOODBYE, FILE_REQUEST,
 *                          RELEASE
 *   coordinator -> worker: ASSIGN, ACK, HEARTBEAT, GOODBYE, FILE, RECALL */
#ifndef SX_PROTO_H
#define SX_PROTO_H

#include "common/digest.h" /* sx_hash_bytes, sx_hash_file */
#include "common/error.h"
#include "common/results/result.h"
#include "common/bench/task.h"

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2: attempt tokens on ASSIGN tasks, RESULT and ACK. 3: RESULT says whether
 * the worker's result cache served the final CSV, ASSIGN whether it may;
 * HELLO says what the worker runs on. 4: RECALL and RELEASE, so the tasks a
 * busy worker has not started can go to an idle one. 5: HELLO says how many
 * tasks the worker runs at once (its slots). 6: RESULT carries the
 * changelog's figures. Several samples per task (common/sample.h) add an
 * optional trailing sample number to an ASSIGN task, a RELEASE task and a
 * RESULT, written only when it is not 0, so a worker of an earlier build
 * refuses (by its item count) only the messages of a sample K > 0. */
#define SX_PROTO_VERSION 6
/* Largest frame either side accepts (a source CSV or a final CSV travels in one). */
#define SX_PROTO_MAX_BYTES (256u * 1024u * 1024u)
/* Most tasks a worker may say it runs at once (HELLO's slots): a thread and
 * a Flink job each, on one Kafka + Flink pair. */
#define SX_PROTO_SLOTS_MAX 64

typedef enum {
    SX_MSG_HELLO = 1, /* worker name, capacity (shards it may hold), runtime, slots */
    SX_MSG_ASSIGN,    /* one shard: tasks and the bench files they need */
    SX_MSG_RESULT,    /* one task's verdict and final CSV, with its attempt token */
    SX_MSG_HEARTBEAT, /* either way, when nothing else was sent lately */
    SX_MSG_ACK,       /* the coordinator is done with a result: drop it from the spool */
    SX_MSG_GOODBYE,   /* either way; `final` = the run is over, do not reconnect */
    SX_MSG_FILE_REQUEST, /* worker asks for a bench file by content hash */
    SX_MSG_FILE,         /* the file's bytes */
    SX_MSG_RECALL,       /* coordinator asks for the tasks the worker has not started */
    SX_MSG_RELEASE,      /* worker gives them up: (method, task_id, token) of each */
} sx_msg_type_t;

/* One task of a shard. sql NULL = missing prediction. */
typedef struct {
    char *method;
    char *task_id;
    char *sql;
    int attempt;    /* 1-based */
    uint64_t token; /* this dispatch; a RESULT must carry it back */
    int sample;     /* which candidate of the task (0 with one per task) */
} sx_msg_task_t;

/* A bench file a shard needs: path relative to BENCH, SHA-1 of its bytes. */
typedef struct {
    char *path;
    char *hash;
    uint64_t size;
} sx_msg_file_t;

/* A decoded or to-be-encoded message. Which fields mean something depends on
 * type (see the enum); the rest stay zero/NULL. Strings are owned. */
typedef struct {
    sx_msg_type_t type;
    char *worker;         /* HELLO */
    int capacity;         /* HELLO */
    int slots;            /* HELLO: tasks it runs at once */
    char *runtime;        /* HELLO: what the worker executes on (printable text):
                             first the engine its results are computed on, one
                             word (e.g. "flink-1.20.3/kafka-connector-3.4.0-1.20/
                             kafka-3.9.1", "simulated"), then any detail after a
                             space; the coordinator stamps each result with it */
    uint64_t shard_id;    /* ASSIGN */
    uint64_t token;       /* RESULT, ACK: the attempt token of the ASSIGN task */
    sx_msg_task_t *tasks; /* ASSIGN; RELEASE (method, task_id and token only) */
    size_t task_count;
    sx_msg_file_t *files; /* ASSIGN */
    size_t file_count;
    bool no_cache;      /* ASSIGN: execute every task, never from the result cache
                           (--repeat: a run served from the cache proves nothing) */
    char *method;       /* RESULT, ACK */
    sx_result_t result; /* RESULT (csv and engine unused on the wire; steps travel
                           as the timings field, changelog as nil or its counts;
                           sample as the last, optional field); ACK uses task_id,
                           attempts */
    char *data;         /* RESULT: the final CSV (NULL = none); FILE: contents */
    size_t size;
    char *hash;   /* FILE_REQUEST, FILE */
    char *reason; /* GOODBYE; a final one starting "refused: " turns the worker
                     away (e.g. another engine than the run's): it stops with it */
    bool final;   /* GOODBYE */
} sx_msg_t;

sx_msg_t *sx_msg_new(sx_msg_type_t type);
void sx_msg_destroy(sx_msg_t **self_p);
const char *sx_msg_type_name(sx_msg_type_t type);

/* A HELLO (copies the strings). */
sx_msg_t *sx_msg_hello(const char *worker, int capacity, int slots, const char *runtime);
/* Appends a task (sample 0; the caller sets another) / file to an ASSIGN
 * (copies the strings). */
sx_msg_task_t *sx_msg_add_task(sx_msg_t *self, const char *method, const char *task_id,
                               const char *sql, int attempt, uint64_t token);
void sx_msg_add_file(sx_msg_t *self, const char *path, const char *hash, uint64_t size);
/* Copies `size` bytes into data. */
void sx_msg_set_data(sx_msg_t *self, const void *data, size_t size);

/* msgpack bytes of the message (heap, *size_p set); NULL if a field is invalid. */
char *sx_msg_encode(const sx_msg_t *self, size_t *size_p, sx_error_t *err);
/* Strict decoding of one frame of at most max_bytes. */
sx_msg_t *sx_msg_decode(const void *data, size_t size, size_t max_bytes, sx_error_t *err);

/* Sends as [routing_id,] payload; routing_id (ROUTER side) is not consumed. */
int sx_msg_send(const sx_msg_t *self, zsock_t *sock, zframe_t *routing_id,
                sx_error_t *err);
/* Sends bytes already encoded (a spooled RESULT) the same way. */
int sx_msg_send_raw(const void *data, size_t size, zsock_t *sock, zframe_t *routing_id,
                    sx_error_t *err);
/* Receives one whole multipart message (a ROUTER passes routing_id_p to get
 * the sender, a DEALER passes NULL) and decodes it. On a malformed message
 * returns NULL with err set; every frame is consumed either way, and
 * *routing_id_p is still set when the sender is known, so the caller can log
 * or answer it. */
sx_msg_t *sx_msg_recv(zsock_t *sock, zframe_t **routing_id_p, sx_error_t *err);

/* Whether a message of this type may travel in that direction. */
bool sx_msg_from_worker(sx_msg_type_t type);
bool sx_msg_from_coordinator(sx_msg_type_t type);

/* Names (task IDs, method names) are checked with common/bench/task.h's
 * sx_name_is_safe, the one rule for a name that is safe as a path component. */
/* A relative path of safe components separated by '/' (bench file paths). */
bool sx_proto_safe_path(const char *path);

/* Whether a ZeroMQ endpoint stays on this machine: ipc://, inproc://, or tcp
 * whose address (and source address, in ZeroMQ's tcp://SOURCE;DESTINATION
 * form) is a literal loopback address, 127.0.0.0/8 or [::1]. Hostnames
 * (even localhost), interface names and '*' do not count. Plain TCP
 * elsewhere needs CURVE or --insecure. */
bool sx_endpoint_is_loopback(const char *endpoint);

void sx_proto_test(bool verbose);

#endif
