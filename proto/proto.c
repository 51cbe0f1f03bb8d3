/* proto.c: msgpack encoding and strict decoding of the coordinator/worker
 * messages (see proto.h). Every message is an array whose first three items
 * are "SXP", the protocol version and the type; the fields follow in a fixed
 * order per type, so a decoder can check count and type of each one. */
#include "proto/proto.h"

#include "common/mem.h"
#include "common/sample.h"
#include "common/selftest.h"

#include <arpa/inet.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "SXP"
#define NAME_MAX_LEN 256
#define TEXT_MAX_LEN (16u * 1024u * 1024u)
#define MAX_CAPACITY 1024
#define RUNTIME_MAX_LEN 256
#define MAX_ATTEMPT 1000

static const char *s_type_names[] = {
    "?",       "HELLO",        "ASSIGN", "RESULT", "HEARTBEAT", "ACK",
    "GOODBYE", "FILE_REQUEST", "FILE",   "RECALL", "RELEASE",
};

const char *sx_msg_type_name(sx_msg_type_t type)
{
    return type >= SX_MSG_HELLO && type <= SX_MSG_RELEASE ? s_type_names[type]
                                                          : "unknown";
}

sx_msg_t *sx_msg_new(sx_msg_type_t type)
{
    sx_msg_t *self = sx_new(sx_msg_t);
    self->type = type;
    return self;
}

sx_msg_t *sx_msg_hello(const char *worker, int capacity, int slots, const char *runtime)
{
    sx_msg_t *self = sx_msg_new(SX_MSG_HELLO);
    self->worker = sx_strdup(worker);
    self->capacity = capacity;
    self->slots = slots;
    self->runtime = sx_strdup(runtime);
    return self;
}

void sx_msg_destroy(sx_msg_t **self_p)
{
    sx_msg_t *self = *self_p;
    if (!self)
        return;
    free(self->worker);
    free(self->runtime);
    for (size_t i = 0; i < self->task_count; i++) {
        free(self->tasks[i].method);
        free(self->tasks[i].task_id);
        free(self->tasks[i].sql);
    }
    free(self->tasks);
    for (size_t i = 0; i < self->file_count; i++) {
        free(self->files[i].path);
        free(self->files[i].hash);
    }
    free(self->files);
    free(self->method);
    sx_result_clear(&self->result);
    free(self->data);
    free(self->hash);
    free(self->reason);
    free(self);
    *self_p = NULL;
}

sx_msg_task_t *sx_msg_add_task(sx_msg_t *self, const char *method, const char *task_id,
                               const char *sql, int attempt, uint64_t token)
{
    self->tasks = sx_realloc(self->tasks, self->task_count + 1, sizeof *self->tasks);
    self->tasks[self->task_count] = (sx_msg_task_t){
        sx_strdup(method), sx_strdup(task_id), sx_strdup_or_null(sql), attempt, token, 0};
    return &self->tasks[self->task_count++];
}

void sx_msg_add_file(sx_msg_t *self, const char *path, const char *hash, uint64_t size)
{
    self->files = sx_realloc(self->files, self->file_count + 1, sizeof *self->files);
    self->files[self->file_count++] =
        (sx_msg_file_t){sx_strdup(path), sx_strdup(hash), size};
}

void sx_msg_set_data(sx_msg_t *self, const void *data, size_t size)
{
    free(self->data);
    self->data = sx_alloc(size, 1);
    memcpy(self->data, data, size);
    self->size = size;
}

bool sx_msg_from_worker(sx_msg_type_t type)
{
    return type == SX_MSG_HELLO || type == SX_MSG_RESULT || type == SX_MSG_HEARTBEAT ||
           type == SX_MSG_GOODBYE || type == SX_MSG_FILE_REQUEST ||
           type == SX_MSG_RELEASE;
}

bool sx_msg_from_coordinator(sx_msg_type_t type)
{
    return type == SX_MSG_ASSIGN || type == SX_MSG_ACK || type == SX_MSG_HEARTBEAT ||
           type == SX_MSG_GOODBYE || type == SX_MSG_FILE || type == SX_MSG_RECALL;
}

bool sx_proto_safe_path(const char *path)
{
    if (!path || !*path || strlen(path) > 4 * NAME_MAX_LEN)
        return false;
    char copy[4 * NAME_MAX_LEN + 1];
    snprintf(copy, sizeof copy, "%s", path);
    char *save = NULL;
    size_t parts = 0;
    for (char *part = strtok_r(copy, "/", &save); part;
         part = strtok_r(NULL, "/", &save)) {
        if (!sx_name_is_safe(part))
            return false;
        parts++;
    }
    /* strtok_r skips empty components: refuse "a//b", "/a" and "a/" outright. */
    return parts > 0 && path[0] != '/' && path[strlen(path) - 1] != '/' &&
           !strstr(path, "//");
}

/* HELLO's runtime ends up in logs and on a page: 1 to RUNTIME_MAX_LEN
 * bytes, none a control character. */
static int check_runtime(const char *runtime, sx_error_t *err)
{
    size_t n = runtime ? strlen(runtime) : 0;
    bool printable = n > 0 && n <= RUNTIME_MAX_LEN;
    for (size_t i = 0; printable && i < n; i++)
        printable = (unsigned char)runtime[i] >= 0x20 && runtime[i] != 0x7f;
    return printable
               ? 0
               : sx_error_set(err, "the runtime is no printable text of at most %d bytes",
                              RUNTIME_MAX_LEN);
}

static bool is_hash(const char *hash)
{
    if (!hash || strlen(hash) != 40)
        return false;
    for (int i = 0; i < 40; i++)
        if (!((hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f')))
            return false;
    return true;
}

/* ---- encoding ---------------------------------------------------------- */

static void pack_str(msgpack_packer *pk, const char *text)
{
    if (!text) {
        msgpack_pack_nil(pk);
        return;
    }
    size_t len = strlen(text);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, text, len);
}

static void pack_bin(msgpack_packer *pk, const char *data, size_t size)
{
    if (!data) {
        msgpack_pack_nil(pk);
        return;
    }
    msgpack_pack_bin(pk, size);
    msgpack_pack_bin_body(pk, data, size);
}

static void pack_timings(msgpack_packer *pk, const sx_timings_t *t)
{
    msgpack_pack_array(pk, SX_STEP_COUNT);
    for (int i = 0; i < SX_STEP_COUNT; i++)
        msgpack_pack_double(pk, sx_step_seconds(t, i));
}

/* nil when no changelog was folded, else [records by kind..., rows]. */
static void pack_changelog(msgpack_packer *pk, const sx_changelog_counts_t *c)
{
    if (!c->known) {
        msgpack_pack_nil(pk);
        return;
    }
    msgpack_pack_array(pk, SX_CHANGE_KINDS + 1);
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        msgpack_pack_uint64(pk, c->records[k]);
    msgpack_pack_uint64(pk, c->rows);
}

/* Number of fields after the three-item header, per type. */
static int field_count(sx_msg_type_t type)
{
    switch (type) {
    case SX_MSG_HELLO:
        return 4;
    case SX_MSG_ASSIGN:
        return 4;
    case SX_MSG_RESULT:
        return 13;
    case SX_MSG_HEARTBEAT:
        return 0;
    case SX_MSG_ACK:
        return 4;
    case SX_MSG_GOODBYE:
        return 2;
    case SX_MSG_FILE_REQUEST:
        return 1;
    case SX_MSG_FILE:
        return 2;
    case SX_MSG_RECALL:
        return 0;
    case SX_MSG_RELEASE:
        return 1;
    }
    return -1;
}

/* Fields a message of the type may carry after its required ones (RESULT's
 * sample, written only when it is not 0). */
static int optional_count(sx_msg_type_t type)
{
    return type == SX_MSG_RESULT ? 1 : 0;
}

static bool sample_ok(int sample)
{
    return sample >= 0 && sample < SX_SAMPLES_LIMIT;
}

/* Encoding checks what decoding would refuse, so a bug on the sending side
 * shows up where it is made rather than as a rejected message at the peer. */
static int check_fields(const sx_msg_t *m, sx_error_t *err)
{
    switch (m->type) {
    case SX_MSG_HELLO:
        if (!sx_name_is_safe(m->worker) || m->capacity < 1 || m->capacity > MAX_CAPACITY)
            return sx_error_set(err, "HELLO: bad worker name or capacity %d",
                                m->capacity);
        if (m->slots < 1 || m->slots > SX_PROTO_SLOTS_MAX)
            return sx_error_set(err, "HELLO: slots %d is not between 1 and %d", m->slots,
                                SX_PROTO_SLOTS_MAX);
        if (check_runtime(m->runtime, err) != 0)
            return sx_error_prefix(err, "HELLO"), -1;
        break;
    case SX_MSG_ASSIGN:
        for (size_t i = 0; i < m->task_count; i++)
            if (!sx_name_is_safe(m->tasks[i].method) ||
                !sx_name_is_safe(m->tasks[i].task_id) || m->tasks[i].attempt < 1 ||
                !sample_ok(m->tasks[i].sample))
                return sx_error_set(err, "ASSIGN: bad task %zu", i);
        for (size_t i = 0; i < m->file_count; i++)
            if (!sx_proto_safe_path(m->files[i].path) || !is_hash(m->files[i].hash))
                return sx_error_set(err, "ASSIGN: bad file '%s'", m->files[i].path);
        break;
    case SX_MSG_RELEASE:
        for (size_t i = 0; i < m->task_count; i++)
            if (!sx_name_is_safe(m->tasks[i].method) ||
                !sx_name_is_safe(m->tasks[i].task_id) || !sample_ok(m->tasks[i].sample))
                return sx_error_set(err, "RELEASE: bad task %zu", i);
        break;
    case SX_MSG_RESULT:
    case SX_MSG_ACK:
        if (!sx_name_is_safe(m->method) || !sx_name_is_safe(m->result.task_id))
            return sx_error_set(err, "%s: bad method or task ID",
                                sx_msg_type_name(m->type));
        if (!sample_ok(m->result.sample))
            return sx_error_set(err, "%s: bad sample %d", sx_msg_type_name(m->type),
                                m->result.sample);
        break;
    case SX_MSG_FILE_REQUEST:
    case SX_MSG_FILE:
        if (!is_hash(m->hash))
            return sx_error_set(err, "%s: bad hash", sx_msg_type_name(m->type));
        break;
    case SX_MSG_HEARTBEAT:
    case SX_MSG_GOODBYE:
    case SX_MSG_RECALL:
        break;
    default:
        return sx_error_set(err, "cannot encode message of unknown type %d",
                            (int)m->type);
    }
    return 0;
}

static void pack_bool(msgpack_packer *pk, bool value)
{
    if (value)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

static void pack_fields(msgpack_packer *pk, const sx_msg_t *m)
{
    switch (m->type) {
    case SX_MSG_HELLO:
        pack_str(pk, m->worker);
        msgpack_pack_int(pk, m->capacity);
        pack_str(pk, m->runtime);
        msgpack_pack_int(pk, m->slots);
        break;
    case SX_MSG_ASSIGN:
        msgpack_pack_uint64(pk, m->shard_id);
        msgpack_pack_array(pk, m->task_count);
        for (size_t i = 0; i < m->task_count; i++) {
            bool sampled = m->tasks[i].sample != 0;
            msgpack_pack_array(pk, sampled ? 6 : 5);
            pack_str(pk, m->tasks[i].method);
            pack_str(pk, m->tasks[i].task_id);
            pack_str(pk, m->tasks[i].sql);
            msgpack_pack_int(pk, m->tasks[i].attempt);
            msgpack_pack_uint64(pk, m->tasks[i].token);
            if (sampled)
                msgpack_pack_int(pk, m->tasks[i].sample);
        }
        msgpack_pack_array(pk, m->file_count);
        for (size_t i = 0; i < m->file_count; i++) {
            msgpack_pack_array(pk, 3);
            pack_str(pk, m->files[i].path);
            pack_str(pk, m->files[i].hash);
            msgpack_pack_uint64(pk, m->files[i].size);
        }
        pack_bool(pk, m->no_cache);
        break;
    case SX_MSG_RESULT:
        msgpack_pack_uint64(pk, m->token);
        pack_str(pk, m->method);
        pack_str(pk, m->result.task_id);
        pack_str(pk, sx_status_name(m->result.status));
        pack_str(pk, m->result.detail ? m->result.detail : "");
        msgpack_pack_int(pk, m->result.attempts);
        msgpack_pack_double(pk, m->result.seconds);
        pack_str(pk, m->result.worker ? m->result.worker : "");
        pack_timings(pk, &m->result.steps);
        pack_bin(pk, m->data, m->size);
        msgpack_pack_int(pk, m->result.strict);
        pack_bool(pk, m->result.cached);
        pack_changelog(pk, &m->result.changelog);
        if (m->result.sample != 0)
            msgpack_pack_int(pk, m->result.sample);
        break;
    case SX_MSG_ACK:
        pack_str(pk, m->method);
        pack_str(pk, m->result.task_id);
        msgpack_pack_int(pk, m->result.attempts);
        msgpack_pack_uint64(pk, m->token);
        break;
    case SX_MSG_GOODBYE:
        pack_str(pk, m->reason ? m->reason : "");
        pack_bool(pk, m->final);
        break;
    case SX_MSG_FILE_REQUEST:
        pack_str(pk, m->hash);
        break;
    case SX_MSG_FILE:
        pack_str(pk, m->hash);
        pack_bin(pk, m->data ? m->data : "", m->size);
        break;
    case SX_MSG_RELEASE:
        msgpack_pack_array(pk, m->task_count);
        for (size_t i = 0; i < m->task_count; i++) {
            bool sampled = m->tasks[i].sample != 0;
            msgpack_pack_array(pk, sampled ? 4 : 3);
            pack_str(pk, m->tasks[i].method);
            pack_str(pk, m->tasks[i].task_id);
            msgpack_pack_uint64(pk, m->tasks[i].token);
            if (sampled)
                msgpack_pack_int(pk, m->tasks[i].sample);
        }
        break;
    case SX_MSG_HEARTBEAT:
    case SX_MSG_RECALL:
        break;
    }
}

char *sx_msg_encode(const sx_msg_t *self, size_t *size_p, sx_error_t *err)
{
    if (check_fields(self, err) != 0)
        return NULL;
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    bool sampled = self->type == SX_MSG_RESULT && self->result.sample != 0;
    msgpack_pack_array(&pk, 3 + (size_t)field_count(self->type) + sampled);
    pack_str(&pk, MAGIC);
    msgpack_pack_int(&pk, SX_PROTO_VERSION);
    msgpack_pack_int(&pk, (int)self->type);
    pack_fields(&pk, self);
    *size_p = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

/* ---- decoding ---------------------------------------------------------- */

/* Each getter names the field it reads, so an error says which one is bad. */
static int get_str(const msgpack_object *o, const char *field, bool nullable, size_t max,
                   char **out, sx_error_t *err)
{
    if (nullable && o->type == MSGPACK_OBJECT_NIL) {
        *out = NULL;
        return 0;
    }
    if (o->type != MSGPACK_OBJECT_STR)
        return sx_error_set(err, "field '%s' is not a string", field);
    size_t len = o->via.str.size;
    if (len > max)
        return sx_error_set(err, "field '%s' is longer than %zu bytes", field, max);
    if (memchr(o->via.str.ptr, '\0', len))
        return sx_error_set(err, "field '%s' holds a NUL byte", field);
    *out = sx_strndup(o->via.str.ptr, len);
    return 0;
}

static int get_name(const msgpack_object *o, const char *field, char **out,
                    sx_error_t *err)
{
    if (get_str(o, field, false, NAME_MAX_LEN, out, err) != 0)
        return -1;
    if (!sx_name_is_safe(*out))
        return sx_error_set(err, "field '%s' is not a safe name: '%s'", field, *out);
    return 0;
}

static int get_hash(const msgpack_object *o, char **out, sx_error_t *err)
{
    if (get_str(o, "hash", false, 40, out, err) != 0)
        return -1;
    if (!is_hash(*out))
        return sx_error_set(err, "field 'hash' is not a SHA-1 in hex");
    return 0;
}

static int get_bool(const msgpack_object *o, const char *field, bool *out,
                    sx_error_t *err)
{
    if (o->type != MSGPACK_OBJECT_BOOLEAN)
        return sx_error_set(err, "field '%s' is not a boolean", field);
    *out = o->via.boolean;
    return 0;
}

static int get_int(const msgpack_object *o, const char *field, int64_t min, int64_t max,
                   int64_t *out, sx_error_t *err)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= (uint64_t)INT64_MAX)
        *out = (int64_t)o->via.u64;
    else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        *out = o->via.i64;
    else
        return sx_error_set(err, "field '%s' is not an integer", field);
    if (*out < min || *out > max)
        return sx_error_set(err, "field '%s' = %lld is outside [%lld, %lld]", field,
                            (long long)*out, (long long)min, (long long)max);
    return 0;
}

static int get_u64(const msgpack_object *o, const char *field, uint64_t *out,
                   sx_error_t *err)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return sx_error_set(err, "field '%s' is not a non-negative integer", field);
    *out = o->via.u64;
    return 0;
}

static int get_seconds(const msgpack_object *o, const char *field, double *out,
                       sx_error_t *err)
{
    if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
        *out = o->via.f64;
    else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        *out = (double)o->via.u64;
    else
        return sx_error_set(err, "field '%s' is not a number", field);
    if (!isfinite(*out) || *out < 0)
        return sx_error_set(err, "field '%s' is not a finite duration", field);
    return 0;
}

/* An array of `least` to `most` items (UINT32_MAX, UINT32_MAX: any). */
static int get_array_of(const msgpack_object *o, const char *field, uint32_t least,
                        uint32_t most, sx_error_t *err)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return sx_error_set(err, "field '%s' is not an array", field);
    uint32_t size = o->via.array.size;
    if (least != UINT32_MAX && (size < least || size > most))
        return least == most
                   ? sx_error_set(err, "field '%s' has %u items, expected %u", field,
                                  size, least)
                   : sx_error_set(err, "field '%s' has %u items, expected %u to %u",
                                  field, size, least, most);
    return 0;
}

static int get_array(const msgpack_object *o, const char *field, uint32_t want,
                     sx_error_t *err)
{
    return get_array_of(o, field, want, want, err);
}

/* An optional trailing sample number: 0 when the item is not there. */
static int get_sample(const msgpack_object *items, uint32_t count, uint32_t index,
                      int *sample, sx_error_t *err)
{
    int64_t value = 0;
    if (index < count &&
        get_int(&items[index], "sample", 0, SX_SAMPLES_LIMIT - 1, &value, err) != 0)
        return -1;
    *sample = (int)value;
    return 0;
}

static int get_bin(const msgpack_object *o, const char *field, bool nullable, sx_msg_t *m,
                   sx_error_t *err)
{
    if (nullable && o->type == MSGPACK_OBJECT_NIL)
        return 0;
    if (o->type != MSGPACK_OBJECT_BIN)
        return sx_error_set(err, "field '%s' is not binary", field);
    sx_msg_set_data(m, o->via.bin.ptr, o->via.bin.size);
    return 0;
}

static int decode_assign(const msgpack_object *f, sx_msg_t *m, sx_error_t *err)
{
    if (get_u64(&f[0], "shard_id", &m->shard_id, err) != 0 ||
        get_array(&f[1], "tasks", UINT32_MAX, err) != 0 ||
        get_array(&f[2], "files", UINT32_MAX, err) != 0 ||
        get_bool(&f[3], "no_cache", &m->no_cache, err) != 0)
        return -1;
    for (uint32_t i = 0; i < f[1].via.array.size; i++) {
        const msgpack_object *t = &f[1].via.array.ptr[i];
        char *method = NULL, *task_id = NULL, *sql = NULL;
        int64_t attempt = 0;
        uint64_t token = 0;
        int sample = 0;
        int rc =
            get_array_of(t, "task", 5, 6, err) == 0 &&
                    get_name(&t->via.array.ptr[0], "method", &method, err) == 0 &&
                    get_name(&t->via.array.ptr[1], "task_id", &task_id, err) == 0 &&
                    get_str(&t->via.array.ptr[2], "sql", true, TEXT_MAX_LEN, &sql, err) ==
                        0 &&
                    get_int(&t->via.array.ptr[3], "attempt", 1, MAX_ATTEMPT, &attempt,
                            err) == 0 &&
                    get_u64(&t->via.array.ptr[4], "token", &token, err) == 0 &&
                    get_sample(t->via.array.ptr, t->via.array.size, 5, &sample, err) == 0
                ? 0
                : -1;
        if (rc == 0)
            sx_msg_add_task(m, method, task_id, sql, (int)attempt, token)->sample =
                sample;
        free(method);
        free(task_id);
        free(sql);
        if (rc != 0)
            return sx_error_prefix(err, "task %u", i), -1;
    }
    for (uint32_t i = 0; i < f[2].via.array.size; i++) {
        const msgpack_object *t = &f[2].via.array.ptr[i];
        char *path = NULL, *hash = NULL;
        uint64_t size = 0;
        int rc = get_array(t, "file", 3, err) == 0 &&
                         get_str(&t->via.array.ptr[0], "path", false, 4 * NAME_MAX_LEN,
                                 &path, err) == 0 &&
                         get_hash(&t->via.array.ptr[1], &hash, err) == 0 &&
                         get_u64(&t->via.array.ptr[2], "size", &size, err) == 0
                     ? 0
                     : -1;
        if (rc == 0 && !sx_proto_safe_path(path))
            rc = sx_error_set(err, "file path '%s' is not a safe relative path", path);
        if (rc == 0)
            sx_msg_add_file(m, path, hash, size);
        free(path);
        free(hash);
        if (rc != 0)
            return sx_error_prefix(err, "file %u", i), -1;
    }
    return 0;
}

/* RELEASE: [[method, task_id, token(, sample)], ...], the tasks given back. */
static int decode_release(const msgpack_object *f, sx_msg_t *m, sx_error_t *err)
{
    if (get_array(&f[0], "tasks", UINT32_MAX, err) != 0)
        return -1;
    for (uint32_t i = 0; i < f[0].via.array.size; i++) {
        const msgpack_object *t = &f[0].via.array.ptr[i];
        char *method = NULL, *task_id = NULL;
        uint64_t token = 0;
        int sample = 0;
        int rc =
            get_array_of(t, "task", 3, 4, err) == 0 &&
                    get_name(&t->via.array.ptr[0], "method", &method, err) == 0 &&
                    get_name(&t->via.array.ptr[1], "task_id", &task_id, err) == 0 &&
                    get_u64(&t->via.array.ptr[2], "token", &token, err) == 0 &&
                    get_sample(t->via.array.ptr, t->via.array.size, 3, &sample, err) == 0
                ? 0
                : -1;
        if (rc == 0)
            sx_msg_add_task(m, method, task_id, NULL, 0, token)->sample = sample;
        free(method);
        free(task_id);
        if (rc != 0)
            return sx_error_prefix(err, "task %u", i), -1;
    }
    return 0;
}

static int decode_timings(const msgpack_object *o, sx_timings_t *t, sx_error_t *err)
{
    if (get_array(o, "timings", SX_STEP_COUNT, err) != 0)
        return -1;
    for (int i = 0; i < SX_STEP_COUNT; i++)
        if (get_seconds(&o->via.array.ptr[i], "timings", sx_step_slot(t, i), err) != 0)
            return -1;
    return 0;
}

static int decode_changelog(const msgpack_object *o, sx_changelog_counts_t *c,
                            sx_error_t *err)
{
    if (o->type == MSGPACK_OBJECT_NIL)
        return 0;
    if (get_array(o, "changelog", SX_CHANGE_KINDS + 1, err) != 0)
        return -1;
    for (int k = 0; k <= SX_CHANGE_KINDS; k++)
        if (get_u64(&o->via.array.ptr[k], "changelog",
                    k < SX_CHANGE_KINDS ? &c->records[k] : &c->rows, err) != 0)
            return -1;
    c->known = true;
    return 0;
}

static int decode_result(const msgpack_object *f, uint32_t count, sx_msg_t *m,
                         sx_error_t *err)
{
    char *status = NULL;
    int64_t attempts = 0, strict = 0;
    int rc = get_u64(&f[0], "token", &m->token, err) == 0 &&
                     get_name(&f[1], "method", &m->method, err) == 0 &&
                     get_name(&f[2], "task_id", &m->result.task_id, err) == 0 &&
                     get_str(&f[3], "status", false, NAME_MAX_LEN, &status, err) == 0 &&
                     get_str(&f[4], "detail", false, TEXT_MAX_LEN, &m->result.detail,
                             err) == 0 &&
                     get_int(&f[5], "attempts", 1, MAX_ATTEMPT, &attempts, err) == 0 &&
                     get_seconds(&f[6], "seconds", &m->result.seconds, err) == 0 &&
                     get_str(&f[7], "worker", false, NAME_MAX_LEN, &m->result.worker,
                             err) == 0 &&
                     decode_timings(&f[8], &m->result.steps, err) == 0 &&
                     get_bin(&f[9], "csv", true, m, err) == 0 &&
                     get_int(&f[10], "strict", 0, 1, &strict, err) == 0 &&
                     get_bool(&f[11], "cached", &m->result.cached, err) == 0 &&
                     decode_changelog(&f[12], &m->result.changelog, err) == 0 &&
                     get_sample(f, count, 13, &m->result.sample, err) == 0
                 ? 0
                 : -1;
    if (!m->result.detail)
        m->result.detail = sx_strdup("");
    if (rc == 0 && sx_status_parse(status, &m->result.status) != 0)
        rc = sx_error_set(err, "field 'status' is not a known status: '%s'", status);
    if (rc == 0 && strict && m->result.status != SX_STATUS_MATCH &&
        m->result.status != SX_STATUS_MISMATCH)
        rc = sx_error_set(err, "field 'strict' is 1 for an unscored status '%s'", status);
    m->result.attempts = (int)attempts;
    m->result.score = m->result.status == SX_STATUS_MATCH;
    m->result.strict = (int)strict;
    free(status);
    return rc;
}

/* Decodes the `count` fields after the header. */
static int decode_fields(const msgpack_object *f, uint32_t count, sx_msg_t *m,
                         sx_error_t *err)
{
    int64_t number = 0;
    switch (m->type) {
    case SX_MSG_HELLO:
        if (get_name(&f[0], "worker", &m->worker, err) != 0 ||
            get_int(&f[1], "capacity", 1, MAX_CAPACITY, &number, err) != 0 ||
            get_str(&f[2], "runtime", false, RUNTIME_MAX_LEN, &m->runtime, err) != 0)
            return -1;
        m->capacity = (int)number;
        if (get_int(&f[3], "slots", 1, SX_PROTO_SLOTS_MAX, &number, err) != 0)
            return -1;
        m->slots = (int)number;
        return check_runtime(m->runtime, err);
    case SX_MSG_ASSIGN:
        return decode_assign(f, m, err);
    case SX_MSG_RESULT:
        return decode_result(f, count, m, err);
    case SX_MSG_ACK:
        if (get_name(&f[0], "method", &m->method, err) != 0 ||
            get_name(&f[1], "task_id", &m->result.task_id, err) != 0 ||
            get_int(&f[2], "attempt", 1, MAX_ATTEMPT, &number, err) != 0 ||
            get_u64(&f[3], "token", &m->token, err) != 0)
            return -1;
        m->result.attempts = (int)number;
        return 0;
    case SX_MSG_GOODBYE:
        if (get_str(&f[0], "reason", false, NAME_MAX_LEN * 4, &m->reason, err) != 0)
            return -1;
        return get_bool(&f[1], "final", &m->final, err);
    case SX_MSG_FILE_REQUEST:
        return get_hash(&f[0], &m->hash, err);
    case SX_MSG_FILE:
        return get_hash(&f[0], &m->hash, err) != 0
                   ? -1
                   : get_bin(&f[1], "data", false, m, err);
    case SX_MSG_RELEASE:
        return decode_release(f, m, err);
    case SX_MSG_HEARTBEAT:
    case SX_MSG_RECALL:
        return 0;
    }
    return sx_error_set(err, "unknown message type");
}

static sx_msg_t *decode_object(const msgpack_object *root, sx_error_t *err)
{
    if (root->type != MSGPACK_OBJECT_ARRAY || root->via.array.size < 3)
        return sx_error_set(err, "not a streamex message (expected an array)"), NULL;
    const msgpack_object *items = root->via.array.ptr;
    if (items[0].type != MSGPACK_OBJECT_STR || items[0].via.str.size != 3 ||
        memcmp(items[0].via.str.ptr, MAGIC, 3) != 0)
        return sx_error_set(err, "not a streamex message (bad magic)"), NULL;
    int64_t version = 0, type = 0;
    if (get_int(&items[1], "version", 0, INT32_MAX, &version, err) != 0)
        return NULL;
    if (version != SX_PROTO_VERSION)
        return sx_error_set(err, "protocol version %lld, this streamex speaks %d",
                            (long long)version, SX_PROTO_VERSION),
               NULL;
    if (get_int(&items[2], "type", 0, INT32_MAX, &type, err) != 0)
        return NULL;
    int want = field_count((sx_msg_type_t)type);
    if (type < SX_MSG_HELLO || type > SX_MSG_RELEASE || want < 0)
        return sx_error_set(err, "unknown message type %lld", (long long)type), NULL;
    uint32_t count = root->via.array.size - 3;
    int optional = optional_count((sx_msg_type_t)type);
    if (count < (uint32_t)want || count > (uint32_t)(want + optional))
        return (optional
                    ? sx_error_set(err, "%s has %u fields, expected %d to %d",
                                   sx_msg_type_name((sx_msg_type_t)type), count, want,
                                   want + optional)
                    : sx_error_set(err, "%s has %u fields, expected %d",
                                   sx_msg_type_name((sx_msg_type_t)type), count, want)),
               NULL;
    sx_msg_t *m = sx_msg_new((sx_msg_type_t)type);
    if (decode_fields(items + 3, count, m, err) != 0) {
        sx_error_prefix(err, "%s", sx_msg_type_name(m->type));
        sx_msg_destroy(&m);
    }
    return m;
}

/* msgpack_unpack_next allocates for a container's declared item count before
 * reading the items, so five forged bytes could ask for gigabytes. This walk
 * checks, without allocating, that the bytes are well-formed msgpack whose
 * every declared item could actually be present. */
static uint64_t read_be(const unsigned char *p, int bytes)
{
    uint64_t value = 0;
    for (int i = 0; i < bytes; i++)
        value = value << 8 | p[i];
    return value;
}

/* Length-prefix width and fixed body size of a header byte (c4-df range). */
static bool header_shape(unsigned char b, int *len_bytes, uint64_t *fixed, int *container)
{
    static const struct {
        unsigned char first, last;
        int len_bytes;
        uint64_t fixed;
        int container; /* 1 array, 2 map */
    } shapes[] = {
        {0xc0, 0xc0, 0, 0, 0}, {0xc2, 0xc3, 0, 0, 0},  {0xc4, 0xc4, 1, 0, 0},
        {0xc5, 0xc5, 2, 0, 0}, {0xc6, 0xc6, 4, 0, 0},  {0xc7, 0xc7, 1, 1, 0},
        {0xc8, 0xc8, 2, 1, 0}, {0xc9, 0xc9, 4, 1, 0},  {0xca, 0xca, 0, 4, 0},
        {0xcb, 0xcb, 0, 8, 0}, {0xcc, 0xcc, 0, 1, 0},  {0xcd, 0xcd, 0, 2, 0},
        {0xce, 0xce, 0, 4, 0}, {0xcf, 0xcf, 0, 8, 0},  {0xd0, 0xd0, 0, 1, 0},
        {0xd1, 0xd1, 0, 2, 0}, {0xd2, 0xd2, 0, 4, 0},  {0xd3, 0xd3, 0, 8, 0},
        {0xd4, 0xd4, 0, 2, 0}, {0xd5, 0xd5, 0, 3, 0},  {0xd6, 0xd6, 0, 5, 0},
        {0xd7, 0xd7, 0, 9, 0}, {0xd8, 0xd8, 0, 17, 0}, {0xd9, 0xd9, 1, 0, 0},
        {0xda, 0xda, 2, 0, 0}, {0xdb, 0xdb, 4, 0, 0},  {0xdc, 0xdc, 2, 0, 1},
        {0xdd, 0xdd, 4, 0, 1}, {0xde, 0xde, 2, 0, 2},  {0xdf, 0xdf, 4, 0, 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (b >= shapes[i].first && b <= shapes[i].last) {
            *len_bytes = shapes[i].len_bytes;
            *fixed = shapes[i].fixed;
            *container = shapes[i].container;
            return true;
        }
    }
    return false; /* 0xc1 is never used */
}

static bool plausible_msgpack(const unsigned char *p, size_t size)
{
    size_t pos = 0;
    uint64_t pending = 1;
    while (pending > 0) {
        if (pos >= size || pending > size - pos)
            return false;
        pending--;
        unsigned char b = p[pos++];
        int len_bytes = 0, container = 0;
        uint64_t fixed = 0, count = 0;
        if (b <= 0x7f || b >= 0xe0)
            continue;
        if (b <= 0x8f || (b >= 0x90 && b <= 0x9f)) {
            container = b <= 0x8f ? 2 : 1;
            count = b & 0x0f;
        } else if (b <= 0xbf) {
            fixed = b & 0x1f;
        } else if (!header_shape(b, &len_bytes, &fixed, &container)) {
            return false;
        }
        if ((size_t)len_bytes > size - pos)
            return false;
        uint64_t length = read_be(p + pos, len_bytes);
        pos += (size_t)len_bytes;
        if (container) {
            count = len_bytes ? length : count;
            pending += container == 2 ? 2 * count : count;
            continue;
        }
        uint64_t body = fixed + length;
        if (body > size - pos)
            return false;
        pos += (size_t)body;
    }
    return true;
}

sx_msg_t *sx_msg_decode(const void *data, size_t size, size_t max_bytes, sx_error_t *err)
{
    if (size > max_bytes)
        return sx_error_set(err, "message of %zu bytes is over the %zu-byte limit", size,
                            max_bytes),
               NULL;
    if (!plausible_msgpack(data, size))
        return sx_error_set(err, "not msgpack (truncated or corrupt, %zu bytes)", size),
               NULL;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init(&unpacked);
    size_t offset = 0;
    msgpack_unpack_return rc = msgpack_unpack_next(&unpacked, data, size, &offset);
    sx_msg_t *m = NULL;
    if (rc != MSGPACK_UNPACK_SUCCESS)
        sx_error_set(err, "not msgpack (truncated or corrupt, %zu bytes)", size);
    else if (offset != size)
        sx_error_set(err, "%zu bytes of trailing garbage after the message",
                     size - offset);
    else
        m = decode_object(&unpacked.data, err);
    msgpack_unpacked_destroy(&unpacked);
    return m;
}

/* ---- sockets ----------------------------------------------------------- */

int sx_msg_send_raw(const void *data, size_t size, zsock_t *sock, zframe_t *routing_id,
                    sx_error_t *err)
{
    zmsg_t *msg = zmsg_new();
    if (routing_id)
        zmsg_append(msg, &(zframe_t *){zframe_dup(routing_id)});
    zmsg_addmem(msg, data, size);
    if (zmsg_send(&msg, sock) != 0) {
        zmsg_destroy(&msg);
        return sx_error_set(err, "cannot send: %s", zmq_strerror(zmq_errno()));
    }
    return 0;
}

int sx_msg_send(const sx_msg_t *self, zsock_t *sock, zframe_t *routing_id,
                sx_error_t *err)
{
    size_t size = 0;
    char *data = sx_msg_encode(self, &size, err);
    if (!data)
        return -1;
    int rc = sx_msg_send_raw(data, size, sock, routing_id, err);
    free(data);
    if (rc != 0)
        sx_error_prefix(err, "%s", sx_msg_type_name(self->type));
    return rc;
}

/* Whether one side of a tcp endpoint ("HOST:PORT", "[IPV6]:PORT", or a
 * source HOST without a port) names a literal loopback address. Hostnames
 * and interface names are not literals: what they resolve to is not ours to
 * trust, so they fail. */
static bool side_is_loopback(const char *side, size_t len)
{
    char host[128];
    const char *end = side + len;
    if (len > 0 && side[0] == '[') {
        const char *close = memchr(side, ']', len);
        if (!close || (close + 1 != end && close[1] != ':'))
            return false;
        side++;
        len = (size_t)(close - side);
    } else {
        const char *colon = memchr(side, ':', len);
        if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
            return false; /* a bare IPv6 address is ambiguous with its port */
        if (colon)
            len = (size_t)(colon - side);
    }
    if (len == 0 || len >= sizeof host)
        return false;
    memcpy(host, side, len);
    host[len] = '\0';
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6) ||
               (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    return false;
}

bool sx_endpoint_is_loopback(const char *endpoint)
{
    if (strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0)
        return true;
    if (strncmp(endpoint, "tcp://", 6) != 0)
        return false;
    /* ZeroMQ's tcp://SOURCE;DESTINATION: both sides must stay on this host. */
    const char *rest = endpoint + 6;
    const char *semi = strchr(rest, ';');
    if (!semi)
        return side_is_loopback(rest, strlen(rest));
    return !strchr(semi + 1, ';') && side_is_loopback(rest, (size_t)(semi - rest)) &&
           side_is_loopback(semi + 1, strlen(semi + 1));
}

sx_msg_t *sx_msg_recv(zsock_t *sock, zframe_t **routing_id_p, sx_error_t *err)
{
    zmsg_t *msg = zmsg_recv(sock);
    if (!msg)
        return sx_error_set(err, "interrupted"), NULL;
    if (routing_id_p)
        *routing_id_p = zmsg_pop(msg);
    sx_msg_t *m = NULL;
    if (routing_id_p && !*routing_id_p)
        sx_error_set(err, "message without a sender");
    else if (zmsg_size(msg) != 1)
        sx_error_set(err, "message of %zu frames, expected 1", zmsg_size(msg));
    else {
        zframe_t *frame = zmsg_first(msg);
        m = sx_msg_decode(zframe_data(frame), zframe_size(frame), SX_PROTO_MAX_BYTES,
                          err);
    }
    zmsg_destroy(&msg);
    return m;
}

/* ---- self-test --------------------------------------------------------- */

static sx_msg_t *roundtrip(const sx_msg_t *m)
{
    size_t size = 0;
    sx_error_t err;
    char *data = sx_msg_encode(m, &size, &err);
    SX_CHECK(data);
    sx_msg_t *back = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, &err);
    free(data);
    SX_CHECK(back);
    SX_CHECK(back->type == m->type);
    return back;
}

static void test_roundtrips(void)
{
    sx_msg_t *hello = sx_msg_hello("w-1", 3, SX_PROTO_SLOTS_MAX, "test runtime");
    sx_msg_t *back = roundtrip(hello);
    SX_CHECK(strcmp(back->worker, "w-1") == 0 && back->capacity == 3 &&
             back->slots == SX_PROTO_SLOTS_MAX &&
             strcmp(back->runtime, "test runtime") == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&hello);

    sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
    assign->shard_id = 1ull << 40;
    sx_msg_add_task(assign, "m1", "t0001", "SELECT 1", 1, 7);
    sx_msg_add_task(assign, "m1", "t0002", NULL, 2, UINT64_MAX);
    sx_msg_add_file(assign, "tasks/t0001/task.json",
                    "0123456789abcdef0123456789abcdef01234567", 12);
    back = roundtrip(assign);
    SX_CHECK(back->shard_id == 1ull << 40 && back->task_count == 2 &&
             back->file_count == 1);
    SX_CHECK(strcmp(back->tasks[0].sql, "SELECT 1") == 0 && back->tasks[1].sql == NULL);
    SX_CHECK(back->tasks[1].attempt == 2 && back->files[0].size == 12);
    SX_CHECK(back->tasks[0].token == 7 && back->tasks[1].token == UINT64_MAX);
    SX_CHECK(!back->no_cache);
    sx_msg_destroy(&back);
    assign->no_cache = true; /* --repeat: every run executes */
    back = roundtrip(assign);
    SX_CHECK(back->no_cache && back->task_count == 2);
    sx_msg_destroy(&back);
    sx_msg_destroy(&assign);

    sx_msg_t *result = sx_msg_new(SX_MSG_RESULT);
    result->method = sx_strdup("m1");
    sx_result_init(&result->result, "t0001", SX_STATUS_FLINK_ERROR, "root cause", NULL);
    result->result.attempts = 2;
    result->token = 1ull << 63;
    result->result.seconds = 1.5;
    free(result->result.worker);
    result->result.worker = sx_strdup("w-1");
    result->result.steps.run = 0.25;
    sx_msg_set_data(result, "a,b\n1,2\n", 8);
    back = roundtrip(result);
    SX_CHECK(back->result.status == SX_STATUS_FLINK_ERROR && back->result.score == 0);
    SX_CHECK(back->result.strict == 0);
    SX_CHECK(strcmp(back->result.detail, "root cause") == 0 &&
             back->result.attempts == 2 && back->token == 1ull << 63);
    SX_CHECK(back->result.steps.run == 0.25 && back->size == 8 &&
             memcmp(back->data, "a,b", 3) == 0);
    SX_CHECK(strcmp(back->result.worker, "w-1") == 0);
    sx_msg_destroy(&back);
    /* strict travels beside the verdict, and only a scored task has strict 1 */
    result->result.strict = 1;
    size_t size = 0;
    char *data = sx_msg_encode(result, &size, NULL);
    SX_CHECK(data && !sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL));
    free(data);
    result->result.status = SX_STATUS_MISMATCH;
    back = roundtrip(result);
    SX_CHECK(back->result.strict == 1 && back->result.score == 0);
    SX_CHECK(!back->result.cached);
    sx_msg_destroy(&back);
    /* whether the worker's result cache served the CSV travels too */
    result->result.cached = true;
    back = roundtrip(result);
    SX_CHECK(back->result.cached && back->result.status == SX_STATUS_MISMATCH);
    SX_CHECK(!back->result.changelog.known);
    sx_msg_destroy(&back);
    /* and so do the changelog's figures */
    result->result.changelog =
        (sx_changelog_counts_t){.known = true, .records = {9, 4, 4, 2, 1}, .rows = 7};
    back = roundtrip(result);
    SX_CHECK(back->result.changelog.known && back->result.changelog.rows == 7 &&
             memcmp(back->result.changelog.records, result->result.changelog.records,
                    sizeof result->result.changelog.records) == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&result);

    sx_msg_t *ack = sx_msg_new(SX_MSG_ACK);
    ack->method = sx_strdup("m1");
    ack->result.task_id = sx_strdup("t0001");
    ack->result.attempts = 3;
    ack->token = 42;
    back = roundtrip(ack);
    SX_CHECK(strcmp(back->result.task_id, "t0001") == 0 && back->result.attempts == 3 &&
             back->token == 42);
    sx_msg_destroy(&back);
    sx_msg_destroy(&ack);

    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = sx_strdup("done");
    bye->final = true;
    back = roundtrip(bye);
    SX_CHECK(back->final && strcmp(back->reason, "done") == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&bye);
}

/* Packs an arbitrary array so the test can forge messages a bug or an
 * attacker might send. */
static char *forge(size_t *size, const char *magic, int version, int type, int extra)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3 + (size_t)extra);
    pack_str(&pk, magic);
    msgpack_pack_int(&pk, version);
    msgpack_pack_int(&pk, type);
    for (int i = 0; i < extra; i++)
        msgpack_pack_int(&pk, 7);
    *size = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

static void expect_rejected(const void *data, size_t size, size_t cap, const char *needle)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_msg_t *m = sx_msg_decode(data, size, cap, &err);
    SX_CHECK(m == NULL);
    if (!strstr(err.msg, needle)) {
        fprintf(stderr, "error '%s' lacks '%s'\n", err.msg, needle);
        SX_CHECK(false);
    }
}

/* A HELLO as a peer could send it, whatever its runtime text. */
static char *forge_hello(size_t *size, const char *runtime)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 7);
    pack_str(&pk, MAGIC);
    msgpack_pack_int(&pk, SX_PROTO_VERSION);
    msgpack_pack_int(&pk, SX_MSG_HELLO);
    pack_str(&pk, "w1");
    msgpack_pack_int(&pk, 1);
    pack_str(&pk, runtime);
    msgpack_pack_int(&pk, 1);
    *size = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

/* The runtime a HELLO names ends up in logs and on a page: printable text
 * of 1 to 256 bytes, refused otherwise both ways. */
static void test_hello_runtime(void)
{
    static const char *const bad[] = {"", "\x1b[2J cleared", "tab\there", NULL};
    char longest[300];
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    for (int i = 0; i < 4; i++) {
        const char *runtime = bad[i] ? bad[i] : longest;
        size_t size = 0;
        sx_error_t err;
        sx_msg_t *hello = sx_msg_hello("w1", 1, 1, runtime);
        SX_CHECK(sx_msg_encode(hello, &size, &err) == NULL);
        SX_CHECK(strcmp(err.msg, "HELLO: the runtime is no printable text of at most 256 "
                                 "bytes") == 0);
        sx_msg_destroy(&hello);
        char *data = forge_hello(&size, runtime);
        expect_rejected(
            data, size, SX_PROTO_MAX_BYTES,
            bad[i] ? "HELLO: the runtime is no printable text of at most 256 bytes"
                   : "field 'runtime' is longer than 256 bytes");
        free(data);
    }
    size_t size = 0;
    char *data =
        forge_hello(&size, "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1");
    sx_error_t err;
    sx_msg_t *back = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, &err);
    SX_CHECK(back &&
             strcmp(back->runtime,
                    "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1") == 0);
    sx_msg_destroy(&back);
    free(data);
}

static void test_malformed(void)
{
    size_t size = 0;
    char *data = forge(&size, "SXP", SX_PROTO_VERSION + 1, SX_MSG_HEARTBEAT, 0);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "protocol version");
    free(data);
    /* Version 1 had no attempt tokens: its results must not be taken for ours. */
    data = forge(&size, "SXP", 1, SX_MSG_HEARTBEAT, 0);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "protocol version 1");
    free(data);
    data = forge(&size, "XXX", SX_PROTO_VERSION, SX_MSG_HEARTBEAT, 0);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "bad magic");
    free(data);
    data = forge(&size, "SXP", SX_PROTO_VERSION, 99, 0);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "unknown message type");
    free(data);
    data = forge(&size, "SXP", SX_PROTO_VERSION, SX_MSG_HEARTBEAT, 1);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "fields, expected 0");
    free(data);
    /* HELLO whose worker name is an integer. */
    data = forge(&size, "SXP", SX_PROTO_VERSION, SX_MSG_HELLO, 4);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "'worker' is not a string");
    free(data);
    test_hello_runtime();

    sx_msg_t *hello = sx_msg_hello("w1", 1, 1, "test runtime");
    data = sx_msg_encode(hello, &size, NULL);
    expect_rejected(data, size, size - 1, "over the");
    expect_rejected(data, size - 1, SX_PROTO_MAX_BYTES, "truncated");
    char *longer = sx_alloc(size + 1, 1);
    memcpy(longer, data, size);
    longer[size] = 0x01;
    expect_rejected(longer, size + 1, SX_PROTO_MAX_BYTES, "trailing garbage");
    free(longer);
    free(data);
    expect_rejected("", 0, SX_PROTO_MAX_BYTES, "not msgpack");
    expect_rejected("\x93\x01", 2, SX_PROTO_MAX_BYTES, "not msgpack");
    expect_rejected("\x01", 1, SX_PROTO_MAX_BYTES, "expected an array");
    /* An array claiming 2^31 items in five bytes must not allocate for them. */
    expect_rejected("\xdd\x80\x00\x00\x00", 5, SX_PROTO_MAX_BYTES, "not msgpack");

    /* Fields that encode fine as msgpack but are unsafe are refused both ways. */
    free(hello->worker);
    hello->worker = sx_strdup("../etc");
    SX_CHECK(sx_msg_encode(hello, &size, NULL) == NULL);
    sx_msg_destroy(&hello);
    sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
    sx_msg_add_file(assign, "../gold/t1.csv", "0123456789abcdef0123456789abcdef01234567",
                    1);
    SX_CHECK(sx_msg_encode(assign, &size, NULL) == NULL);
    sx_msg_destroy(&assign);

    /* Random bytes never crash the decoder. */
    unsigned seed = 7;
    char noise[64];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(rand_r(&seed) % (int)sizeof noise);
        for (size_t i = 0; i < n; i++)
            noise[i] = (char)rand_r(&seed);
        sx_msg_t *m = sx_msg_decode(noise, n, SX_PROTO_MAX_BYTES, NULL);
        sx_msg_destroy(&m);
    }
}

/* The pre-check before msgpack allocates anything knows every msgpack format
 * (the spec's table of first bytes): each complete value passes it and
 * decodes (then is refused for not being a streamex message), and the same
 * value one byte short is refused as truncated. */
static void test_every_msgpack_format_passes_the_precheck(void)
{
    static const struct {
        const char *bytes;
        size_t size;
    } values[] = {
        {"\x01", 1},                                      /* positive fixint */
        {"\x81\xc0\xc0", 3},                              /* fixmap of 1 */
        {"\x91\xc0", 2},                                  /* fixarray of 1 */
        {"\xa1\x41", 2},                                  /* fixstr of 1 */
        {"\xc0", 1},                                      /* nil */
        {"\xc3", 1},                                      /* true */
        {"\xc4\x01\x41", 3},                              /* bin 8 */
        {"\xc5\x00\x01\x41", 4},                          /* bin 16 */
        {"\xc6\x00\x00\x00\x01\x41", 6},                  /* bin 32 */
        {"\xc7\x01\x05\x41", 4},                          /* ext 8 */
        {"\xc8\x00\x01\x05\x41", 5},                      /* ext 16 */
        {"\xc9\x00\x00\x00\x01\x05\x41", 7},              /* ext 32 */
        {"\xca\x3f\x80\x00\x00", 5},                      /* float 32 */
        {"\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", 9},      /* float 64 */
        {"\xcc\x01", 2},                                  /* uint 8 */
        {"\xcd\x00\x01", 3},                              /* uint 16 */
        {"\xce\x00\x00\x00\x01", 5},                      /* uint 32 */
        {"\xcf\x00\x00\x00\x00\x00\x00\x00\x01", 9},      /* uint 64 */
        {"\xd0\xff", 2},                                  /* int 8 */
        {"\xd1\xff\xff", 3},                              /* int 16 */
        {"\xd2\xff\xff\xff\xff", 5},                      /* int 32 */
        {"\xd3\xff\xff\xff\xff\xff\xff\xff\xff", 9},      /* int 64 */
        {"\xd4\x05\x41", 3},                              /* fixext 1 */
        {"\xd5\x05\x41\x41", 4},                          /* fixext 2 */
        {"\xd6\x05\x41\x41\x41\x41", 6},                  /* fixext 4 */
        {"\xd7\x05\x41\x41\x41\x41\x41\x41\x41\x41", 10}, /* fixext 8 */
        {"\xd8\x05\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41\x41",
         18},                                /* fixext 16 */
        {"\xd9\x01\x41", 3},                 /* str 8 */
        {"\xda\x00\x01\x41", 4},             /* str 16 */
        {"\xdb\x00\x00\x00\x01\x41", 6},     /* str 32 */
        {"\xdc\x00\x01\xc0", 4},             /* array 16 */
        {"\xdd\x00\x00\x00\x01\xc0", 6},     /* array 32 */
        {"\xde\x00\x01\xc0\xc0", 5},         /* map 16 */
        {"\xdf\x00\x00\x00\x01\xc0\xc0", 7}, /* map 32 */
        {"\xff", 1},                         /* negative fixint */
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        sx_error_t err;
        size_t size = values[i].size;
        SX_CHECK(sx_msg_decode(values[i].bytes, size, SX_PROTO_MAX_BYTES, &err) == NULL);
        if (strcmp(err.msg, "not a streamex message (expected an array)") != 0)
            fprintf(stderr, "value %zu (0x%02x): %s\n", i,
                    (unsigned char)values[i].bytes[0], err.msg);
        SX_CHECK(strcmp(err.msg, "not a streamex message (expected an array)") == 0);
        char want[64];
        snprintf(want, sizeof want, "not msgpack (truncated or corrupt, %zu bytes)",
                 size - 1);
        SX_CHECK(sx_msg_decode(values[i].bytes, size - 1, SX_PROTO_MAX_BYTES, &err) ==
                 NULL);
        SX_CHECK(strcmp(err.msg, want) == 0);
    }
    /* 0xc1 is no msgpack at all. */
    sx_error_t err;
    SX_CHECK(sx_msg_decode("\xc1", 1, SX_PROTO_MAX_BYTES, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "not msgpack (truncated or corrupt, 1 bytes)") == 0);
}

/* A RELEASE of one task packed as a peer could: `items` values per task
 * ("method", "task_id", then a token that is `token` when >= 0, else a
 * string), under protocol `version`. */
static char *forge_release(size_t *size, int version, const char *task_id, int items,
                           int64_t token)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 4);
    pack_str(&pk, MAGIC);
    msgpack_pack_int(&pk, version);
    msgpack_pack_int(&pk, SX_MSG_RELEASE);
    msgpack_pack_array(&pk, 1);
    msgpack_pack_array(&pk, (size_t)items);
    pack_str(&pk, "m1");
    if (items > 1)
        pack_str(&pk, task_id);
    if (items > 2 && token >= 0)
        msgpack_pack_int64(&pk, token);
    else if (items > 2)
        pack_str(&pk, "7");
    for (int i = 3; i < items; i++)
        msgpack_pack_int(&pk, 7);
    *size = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

/* RECALL travels coordinator -> worker with no field; RELEASE worker ->
 * coordinator with (method, task_id, token) of each task given back, none
 * being a valid answer. Anything else, or an older protocol's, is refused. */
static void test_recall_release(void)
{
    SX_CHECK(sx_msg_from_coordinator(SX_MSG_RECALL) &&
             !sx_msg_from_worker(SX_MSG_RECALL));
    SX_CHECK(sx_msg_from_worker(SX_MSG_RELEASE) &&
             !sx_msg_from_coordinator(SX_MSG_RELEASE));
    SX_CHECK(strcmp(sx_msg_type_name(SX_MSG_RELEASE), "RELEASE") == 0);
    sx_msg_t *recall = sx_msg_new(SX_MSG_RECALL);
    sx_msg_t *back = roundtrip(recall);
    SX_CHECK(back->task_count == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&recall);

    sx_msg_t *release = sx_msg_new(SX_MSG_RELEASE);
    back = roundtrip(release);
    SX_CHECK(back->task_count == 0);
    sx_msg_destroy(&back);
    sx_msg_add_task(release, "m1", "t0002", NULL, 0, 7);
    sx_msg_add_task(release, "m2", "t0003", NULL, 0, UINT64_MAX);
    back = roundtrip(release);
    SX_CHECK(back->task_count == 2 && back->tasks[0].token == 7 &&
             back->tasks[1].token == UINT64_MAX);
    SX_CHECK(strcmp(back->tasks[0].method, "m1") == 0 &&
             strcmp(back->tasks[1].task_id, "t0003") == 0 && !back->tasks[1].sql);
    sx_msg_destroy(&back);
    free(release->tasks[1].task_id);
    release->tasks[1].task_id = sx_strdup("../t0003");
    size_t size = 0;
    sx_error_t err;
    SX_CHECK(sx_msg_encode(release, &size, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "RELEASE: bad task 1") == 0);
    sx_msg_destroy(&release);

    char *data = forge_release(&size, SX_PROTO_VERSION, "t0001", 3, 7);
    back = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, &err);
    SX_CHECK(back && back->task_count == 1 && back->tasks[0].token == 7);
    sx_msg_destroy(&back);
    free(data);
    static const struct {
        int version;
        const char *task_id;
        int items;
        int64_t token;
        const char *needle;
    } bad[] = {
        {3, "t0001", 3, 7, "protocol version 3,"},
        {SX_PROTO_VERSION, "../t0001", 3, 7,
         "RELEASE: task 0: field 'task_id' is not a safe name"},
        {SX_PROTO_VERSION, "t0001", 2, 7,
         "RELEASE: task 0: field 'task' has 2 items, expected 3 to 4"},
        {SX_PROTO_VERSION, "t0001", 5, 7,
         "RELEASE: task 0: field 'task' has 5 items, expected 3 to 4"},
        {SX_PROTO_VERSION, "t0001", 3, -1,
         "RELEASE: task 0: field 'token' is not a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        data = forge_release(&size, bad[i].version, bad[i].task_id, bad[i].items,
                             bad[i].token);
        expect_rejected(data, size, SX_PROTO_MAX_BYTES, bad[i].needle);
        free(data);
    }
    data = forge(&size, "SXP", SX_PROTO_VERSION, SX_MSG_RECALL, 1);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "RECALL has 1 fields, expected 0");
    free(data);
    data = forge(&size, "SXP", SX_PROTO_VERSION, SX_MSG_RELEASE, 1);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES,
                    "RELEASE: field 'tasks' is not an array");
    free(data);
    data = forge(&size, "SXP", SX_PROTO_VERSION, SX_MSG_RELEASE + 1, 0);
    expect_rejected(data, size, SX_PROTO_MAX_BYTES, "unknown message type");
    free(data);
}

/* A RESULT packed field by field, so that attempts, status, seconds and
 * strict can hold what the encoder never writes; `broken` names one more
 * field to pack wrongly (NULL: none). */
static char *forge_result(size_t *size, int64_t attempts, const char *status,
                          double seconds, int64_t strict, const char *broken)
{
    broken = broken ? broken : "";
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3 + (size_t)field_count(SX_MSG_RESULT));
    pack_str(&pk, MAGIC);
    msgpack_pack_int(&pk, SX_PROTO_VERSION);
    msgpack_pack_int(&pk, SX_MSG_RESULT);
    if (strcmp(broken, "token") == 0)
        msgpack_pack_int64(&pk, -7);
    else
        msgpack_pack_uint64(&pk, 7);
    pack_str(&pk, "m1");
    pack_str(&pk, strcmp(broken, "task_id") == 0 ? "../t1" : "t1");
    if (strcmp(broken, "status") == 0) {
        msgpack_pack_str(&pk, 6);
        msgpack_pack_str_body(&pk, "match\0", 6);
    } else {
        pack_str(&pk, status);
    }
    pack_str(&pk, "why");
    msgpack_pack_int64(&pk, attempts);
    msgpack_pack_double(&pk, seconds);
    pack_str(&pk, "w1");
    sx_timings_t timings = {0};
    if (strcmp(broken, "timings") == 0)
        msgpack_pack_array(&pk, 0);
    else if (strcmp(broken, "timings array") == 0)
        msgpack_pack_double(&pk, 0);
    else
        pack_timings(&pk, &timings);
    if (strcmp(broken, "csv") == 0)
        pack_str(&pk, "a,b");
    else
        pack_bin(&pk, NULL, 0);
    msgpack_pack_int64(&pk, strict);
    if (strcmp(broken, "cached") == 0)
        msgpack_pack_int(&pk, 1);
    else
        pack_bool(&pk, false);
    sx_changelog_counts_t changelog = {
        .known = true, .records = {3, 1, 1, 0, 2}, .rows = 3};
    if (strcmp(broken, "changelog") == 0) {
        msgpack_pack_array(&pk, SX_CHANGE_KINDS);
        for (int k = 0; k < SX_CHANGE_KINDS; k++)
            msgpack_pack_uint64(&pk, 1);
    } else if (strcmp(broken, "changelog count") == 0) {
        msgpack_pack_array(&pk, SX_CHANGE_KINDS + 1);
        for (int k = 0; k <= SX_CHANGE_KINDS; k++)
            msgpack_pack_int64(&pk, k == SX_CHANGE_DELETE ? -1 : 1);
    } else if (strcmp(broken, "no changelog") == 0) {
        msgpack_pack_nil(&pk);
    } else {
        pack_changelog(&pk, &changelog);
    }
    *size = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

/* A worker's verdict is taken as sent, and one that cannot be a verdict is
 * refused: the score is the status's, never a field of its own. */
static void test_result_fields(void)
{
    size_t size = 0;
    char *data = forge_result(&size, 2, "match", 1.5, 1, NULL);
    sx_msg_t *m = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL);
    SX_CHECK(m && m->result.status == SX_STATUS_MATCH && m->result.score == 1);
    SX_CHECK(m->result.strict == 1 && m->result.attempts == 2 && m->token == 7);
    SX_CHECK(m->result.seconds == 1.5 && strcmp(m->result.detail, "why") == 0);
    const uint64_t counts[SX_CHANGE_KINDS] = {3, 1, 1, 0, 2};
    SX_CHECK(m->result.changelog.known && m->result.changelog.rows == 3 &&
             memcmp(m->result.changelog.records, counts, sizeof counts) == 0);
    sx_msg_destroy(&m);
    free(data);
    data = forge_result(&size, 1000, "mismatch", 0, 0, NULL);
    m = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL);
    SX_CHECK(m && m->result.status == SX_STATUS_MISMATCH && m->result.score == 0);
    SX_CHECK(m->result.strict == 0 && m->result.attempts == 1000);
    sx_msg_destroy(&m);
    free(data);
    /* nil: no changelog was folded (the task did not run, or came from the
     * result cache). */
    data = forge_result(&size, 1, "timeout", 0, 0, "no changelog");
    m = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL);
    SX_CHECK(m && m->result.status == SX_STATUS_TIMEOUT && !m->result.changelog.known);
    sx_msg_destroy(&m);
    free(data);
    const struct {
        int64_t attempts;
        const char *status;
        double seconds;
        int64_t strict;
        const char *broken;
        const char *error;
    } bad[] = {
        {0, "match", 1, 0, NULL, "field 'attempts' = 0 is outside [1, 1000]"},
        {1001, "match", 1, 0, NULL, "field 'attempts' = 1001 is outside [1, 1000]"},
        {-1, "match", 1, 0, NULL, "field 'attempts' = -1 is outside [1, 1000]"},
        {1, "maybe", 1, 0, NULL, "field 'status' is not a known status: 'maybe'"},
        {1, "match", -1, 0, NULL, "field 'seconds' is not a finite duration"},
        {1, "match", NAN, 0, NULL, "field 'seconds' is not a finite duration"},
        {1, "match", 1, 2, NULL, "field 'strict' = 2 is outside [0, 1]"},
        {1, "timeout", 1, 1, NULL,
         "field 'strict' is 1 for an unscored status 'timeout'"},
        {1, "match", 1, 0, "token", "field 'token' is not a non-negative integer"},
        {1, "match", 1, 0, "task_id", "field 'task_id' is not a safe name: '../t1'"},
        {1, "match", 1, 0, "status", "field 'status' holds a NUL byte"},
        {1, "match", 1, 0, "timings", "field 'timings' has 0 items, expected 7"},
        {1, "match", 1, 0, "timings array", "field 'timings' is not an array"},
        {1, "match", 1, 0, "csv", "field 'csv' is not binary"},
        {1, "match", 1, 0, "cached", "field 'cached' is not a boolean"},
        {1, "match", 1, 0, "changelog", "field 'changelog' has 5 items, expected 6"},
        {1, "match", 1, 0, "changelog count",
         "field 'changelog' is not a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        data = forge_result(&size, bad[i].attempts, bad[i].status, bad[i].seconds,
                            bad[i].strict, bad[i].broken);
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, &err) == NULL);
        if (strstr(err.msg, bad[i].error) == NULL)
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].error);
        SX_CHECK(strstr(err.msg, bad[i].error) != NULL);
        free(data);
    }
}

/* Packs a whole message from a spec of space-separated items: aN array of
 * N, mN map of N, sTEXT string, bTEXT binary, iN integer, uN unsigned, dX
 * double, FX float, n nil, t/f booleans, V this protocol's version. */
static char *forge_spec(size_t *size, const char *spec)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    char *copy = sx_strdup(spec), *save = NULL;
    for (char *item = strtok_r(copy, " ", &save); item;
         item = strtok_r(NULL, " ", &save)) {
        const char *arg = item + 1;
        switch (item[0]) {
        case 'a':
            msgpack_pack_array(&pk, (size_t)atoi(arg));
            break;
        case 'm':
            msgpack_pack_map(&pk, (size_t)atoi(arg));
            break;
        case 's':
            pack_str(&pk, arg);
            break;
        case 'b':
            pack_bin(&pk, arg, strlen(arg));
            break;
        case 'i':
            msgpack_pack_int64(&pk, strtoll(arg, NULL, 10));
            break;
        case 'u':
            msgpack_pack_uint64(&pk, strtoull(arg, NULL, 10));
            break;
        case 'd':
            msgpack_pack_double(&pk, strtod(arg, NULL));
            break;
        case 'n':
            msgpack_pack_nil(&pk);
            break;
        case 't':
        case 'f':
            pack_bool(&pk, item[0] == 't');
            break;
        case 'F':
            msgpack_pack_float(&pk, strtof(arg, NULL));
            break;
        case 'V':
            msgpack_pack_int(&pk, SX_PROTO_VERSION);
            break;
        default:
            SX_CHECK(false);
        }
    }
    free(copy);
    *size = buffer.size;
    char *data = msgpack_sbuffer_release(&buffer);
    msgpack_sbuffer_destroy(&buffer);
    return data;
}

#define HASH "0123456789abcdef0123456789abcdef01234567"
#define ASSIGN_TASK(task) "a7 sSXP V i2 u1 a1 " task " a0 f"
#define ASSIGN_FILE(file) "a7 sSXP V i2 u1 a0 a1 " file " f"
#define RESULT(fields) "a16 sSXP V i3 " fields " i0 f n"
#define RESULT_OK_UNTIL_SECONDS "u7 sm1 st1 smatch swhy i1"
#define TIMINGS "a7 d0 d0 d0 d0 d0 d0 d0"

/* Every field a peer can get wrong, refused with the message type, the
 * task or file it sits in, the field and why. */
static void test_decoding_names_the_field(void)
{
    static const char *const bad[][2] = {
        {"a2 sSXP V", "not a streamex message (expected an array)"},
        {"m0", "not a streamex message (expected an array)"},
        {"a3 sSX V i4", "not a streamex message (bad magic)"},
        {"a3 i1 V i4", "not a streamex message (bad magic)"},
        {"a3 sSXP sv i4", "field 'version' is not an integer"},
        {"a3 sSXP u18446744073709551615 i4", "field 'version' is not an integer"},
        {"a3 sSXP V st", "field 'type' is not an integer"},
        {"a3 sSXP V i0", "unknown message type 0"},
        {"a6 sSXP V i1 sw1 i1 srt", "HELLO has 3 fields, expected 4"},
        {"a7 sSXP V i1 sw1 s1 srt i1", "HELLO: field 'capacity' is not an integer"},
        {"a7 sSXP V i1 sw1 i1 i5 i1", "HELLO: field 'runtime' is not a string"},
        {"a7 sSXP V i1 sw1 i1 s\x7f i1",
         "HELLO: the runtime is no printable text of at most 256 bytes"},
        {"a7 sSXP V i1 sw1 i1 srt s1", "HELLO: field 'slots' is not an integer"},
        {"a7 sSXP V i1 sw1 i1 srt i0", "HELLO: field 'slots' = 0 is outside [1, 64]"},
        {"a7 sSXP V i1 sw1 i1 srt i65", "HELLO: field 'slots' = 65 is outside [1, 64]"},
        {"a7 sSXP V i2 i-1 a0 a0 f",
         "ASSIGN: field 'shard_id' is not a non-negative integer"},
        {"a7 sSXP V i2 u1 i0 a0 f", "ASSIGN: field 'tasks' is not an array"},
        {"a7 sSXP V i2 u1 a0 i0 f", "ASSIGN: field 'files' is not an array"},
        {"a7 sSXP V i2 u1 a0 a0 i0", "ASSIGN: field 'no_cache' is not a boolean"},
        {ASSIGN_TASK("a4 sm1 st1 n i1"),
         "ASSIGN: task 0: field 'task' has 4 items, expected 5 to 6"},
        {ASSIGN_TASK("a6 sm1 st1 n i1 u1 i-1"),
         "ASSIGN: task 0: field 'sample' = -1 is outside [0, 9999]"},
        {ASSIGN_TASK("a6 sm1 st1 n i1 u1 s1"),
         "ASSIGN: task 0: field 'sample' is not an integer"},
        {ASSIGN_TASK("a5 s.. st1 n i1 u1"),
         "ASSIGN: task 0: field 'method' is not a safe name: '..'"},
        {ASSIGN_TASK("a5 sm1 i1 n i1 u1"),
         "ASSIGN: task 0: field 'task_id' is not a string"},
        {ASSIGN_TASK("a5 sm1 st1 i1 i1 u1"),
         "ASSIGN: task 0: field 'sql' is not a string"},
        {ASSIGN_TASK("a5 sm1 st1 n i0 u1"),
         "ASSIGN: task 0: field 'attempt' = 0 is outside [1, 1000]"},
        {ASSIGN_TASK("a5 sm1 st1 n i1 i-1"),
         "ASSIGN: task 0: field 'token' is not a non-negative integer"},
        {ASSIGN_FILE("a2 sa s" HASH),
         "ASSIGN: file 0: field 'file' has 2 items, expected 3"},
        {ASSIGN_FILE("a3 i1 s" HASH " u1"),
         "ASSIGN: file 0: field 'path' is not a string"},
        {ASSIGN_FILE("a3 sa sabc u1"),
         "ASSIGN: file 0: field 'hash' is not a SHA-1 in hex"},
        {ASSIGN_FILE("a3 sa s" HASH "0 u1"),
         "ASSIGN: file 0: field 'hash' is longer than 40 bytes"},
        {ASSIGN_FILE("a3 sa i1 u1"), "ASSIGN: file 0: field 'hash' is not a string"},
        {ASSIGN_FILE("a3 sa s" HASH " i-1"),
         "ASSIGN: file 0: field 'size' is not a non-negative integer"},
        {ASSIGN_FILE("a3 s/etc/x s" HASH " u1"),
         "ASSIGN: file 0: file path '/etc/x' is not a safe relative path"},
        {"a17 sSXP V i3 " RESULT_OK_UNTIL_SECONDS " d1 sw1 " TIMINGS " n i0 f n i-1",
         "RESULT: field 'sample' = -1 is outside [0, 9999]"},
        {"a17 sSXP V i3 " RESULT_OK_UNTIL_SECONDS " d1 sw1 " TIMINGS " n i0 f n s1",
         "RESULT: field 'sample' is not an integer"},
        {"a18 sSXP V i3 " RESULT_OK_UNTIL_SECONDS " d1 sw1 " TIMINGS " n i0 f n i1 i1",
         "RESULT has 15 fields, expected 13 to 14"},
        {RESULT("u7 s.. st1 smatch swhy i1 d1 sw1 " TIMINGS " n"),
         "RESULT: field 'method' is not a safe name: '..'"},
        {RESULT("u7 sm1 st1 i1 swhy i1 d1 sw1 " TIMINGS " n"),
         "RESULT: field 'status' is not a string"},
        {RESULT("u7 sm1 st1 smatch i1 i1 d1 sw1 " TIMINGS " n"),
         "RESULT: field 'detail' is not a string"},
        {RESULT(RESULT_OK_UNTIL_SECONDS " s1 sw1 " TIMINGS " n"),
         "RESULT: field 'seconds' is not a number"},
        {RESULT(RESULT_OK_UNTIL_SECONDS " d1 i1 " TIMINGS " n"),
         "RESULT: field 'worker' is not a string"},
        {RESULT(RESULT_OK_UNTIL_SECONDS " d1 sw1 a7 d0 d0 d0 s0 d0 d0 d0 n"),
         "RESULT: field 'timings' is not a number"},
        {"a16 sSXP V i3 " RESULT_OK_UNTIL_SECONDS " d1 sw1 " TIMINGS
         " n i0 f a6 u1 u0 u0 "
         "u0 u0 d1",
         "RESULT: field 'changelog' is not a non-negative integer"},
        {"a16 sSXP V i3 " RESULT_OK_UNTIL_SECONDS " d1 sw1 " TIMINGS " n i0 f i1",
         "RESULT: field 'changelog' is not an array"},
        {"a7 sSXP V i5 s.. st1 i1 u1", "ACK: field 'method' is not a safe name: '..'"},
        {"a7 sSXP V i5 sm1 i1 i1 u1", "ACK: field 'task_id' is not a string"},
        {"a7 sSXP V i5 sm1 st1 i0 u1", "ACK: field 'attempt' = 0 is outside [1, 1000]"},
        {"a7 sSXP V i5 sm1 st1 i1 sx",
         "ACK: field 'token' is not a non-negative integer"},
        {"a5 sSXP V i6 i1 t", "GOODBYE: field 'reason' is not a string"},
        {"a5 sSXP V i6 sdone i1", "GOODBYE: field 'final' is not a boolean"},
        {"a4 sSXP V i7 sabc", "FILE_REQUEST: field 'hash' is not a SHA-1 in hex"},
        {"a5 sSXP V i8 s" HASH " sdata", "FILE: field 'data' is not binary"},
        {"a5 sSXP V i8 s" HASH "X bdata", "FILE: field 'hash' is longer than 40 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t size = 0;
        char *data = forge_spec(&size, bad[i][0]);
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, &err) == NULL);
        if (strcmp(err.msg, bad[i][1]) != 0)
            fprintf(stderr, "'%s': '%s' is not '%s'\n", bad[i][0], err.msg, bad[i][1]);
        SX_CHECK(strcmp(err.msg, bad[i][1]) == 0);
        free(data);
    }
    /* Seconds may come as a float or, whole, as an integer. */
    const char *float_seconds = RESULT(RESULT_OK_UNTIL_SECONDS " F1.5 sw1 " TIMINGS " n");
    size_t size = 0;
    char *data =
        forge_spec(&size, RESULT(RESULT_OK_UNTIL_SECONDS " u2 sw1 " TIMINGS " n"));
    sx_msg_t *m = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL);
    SX_CHECK(m && m->result.seconds == 2 && m->result.status == SX_STATUS_MATCH &&
             m->data == NULL);
    sx_msg_destroy(&m);
    free(data);
    data = forge_spec(&size, float_seconds);
    m = sx_msg_decode(data, size, SX_PROTO_MAX_BYTES, NULL);
    SX_CHECK(m && m->result.seconds == 1.5);
    sx_msg_destroy(&m);
    free(data);
}

/* The encoder refuses what the decoder would, naming the message; absent
 * texts and data travel as empty ones. */
static void test_encoding_checks_fields(void)
{
    struct {
        sx_msg_t *msg;
        const char *error;
    } bad[] = {
        {sx_msg_hello("w1", 0, 1, "rt"), "HELLO: bad worker name or capacity 0"},
        {sx_msg_hello("w1", 1025, 1, "rt"), "HELLO: bad worker name or capacity 1025"},
        {sx_msg_hello("w1", 1, 0, "rt"), "HELLO: slots 0 is not between 1 and 64"},
        {sx_msg_hello("w1", 1, 65, "rt"), "HELLO: slots 65 is not between 1 and 64"},
        {sx_msg_hello("w1", 1, 1, "\x7f"),
         "HELLO: the runtime is no printable text of at most 256 bytes"},
        {sx_msg_hello("w1", 1, 1, "rt"),
         "HELLO: the runtime is no printable text of at most 256 bytes"},
        {sx_msg_new(SX_MSG_ASSIGN), "ASSIGN: bad task 0"},
        {sx_msg_new(SX_MSG_ASSIGN), "ASSIGN: bad task 0"},
        {sx_msg_new(SX_MSG_ASSIGN), "ASSIGN: bad task 1"},
        {sx_msg_new(SX_MSG_ASSIGN), "ASSIGN: bad file 'tasks/x'"},
        {sx_msg_new(SX_MSG_RESULT), "RESULT: bad method or task ID"},
        {sx_msg_new(SX_MSG_ACK), "ACK: bad method or task ID"},
        {sx_msg_new(SX_MSG_FILE_REQUEST), "FILE_REQUEST: bad hash"},
        {sx_msg_new(SX_MSG_FILE_REQUEST), "FILE_REQUEST: bad hash"},
        {sx_msg_new(SX_MSG_FILE_REQUEST), "FILE_REQUEST: bad hash"},
        {sx_msg_new(SX_MSG_FILE_REQUEST), "FILE_REQUEST: bad hash"},
        {sx_msg_new(SX_MSG_FILE), "FILE: bad hash"},
        {sx_msg_new((sx_msg_type_t)99), "cannot encode message of unknown type 99"},
    };
    free(bad[5].msg->runtime); /* none at all */
    bad[5].msg->runtime = NULL;
    sx_msg_add_task(bad[6].msg, "..", "t1", NULL, 1, 1);
    sx_msg_add_task(bad[7].msg, "m1", "a/b", NULL, 1, 1);
    sx_msg_add_task(bad[8].msg, "m1", "t1", NULL, 1, 1);
    sx_msg_add_task(bad[8].msg, "m1", "t2", NULL, 0, 1);
    sx_msg_add_file(bad[9].msg, "tasks/x", "0123", 1);
    bad[10].msg->method = sx_strdup("m1"); /* and no task ID */
    bad[11].msg->method = sx_strdup("..");
    bad[11].msg->result.task_id = sx_strdup("t1");
    /* hash: none, too short, upper case, a character between '9' and 'a' */
    bad[13].msg->hash = sx_strdup("0123");
    bad[14].msg->hash = sx_strdup("0123456789ABCDEF0123456789abcdef01234567");
    bad[15].msg->hash = sx_strdup("0123456789:bcdef0123456789abcdef01234567");
    bad[16].msg->hash = sx_strdup("g123456789abcdef0123456789abcdef01234567");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t size = 0;
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_msg_encode(bad[i].msg, &size, &err) == NULL);
        if (strcmp(err.msg, bad[i].error) != 0)
            fprintf(stderr, "case %zu: '%s' is not '%s'\n", i, err.msg, bad[i].error);
        SX_CHECK(strcmp(err.msg, bad[i].error) == 0);
        sx_msg_destroy(&bad[i].msg);
    }
    SX_CHECK(strcmp(sx_msg_type_name((sx_msg_type_t)0), "unknown") == 0);
    SX_CHECK(strcmp(sx_msg_type_name((sx_msg_type_t)99), "unknown") == 0);
    SX_CHECK(strcmp(sx_msg_type_name(SX_MSG_FILE), "FILE") == 0);

    sx_msg_t *m = sx_msg_new(SX_MSG_RESULT);
    m->method = sx_strdup("m1");
    m->result.task_id = sx_strdup("t1");
    m->result.attempts = 1;
    sx_msg_t *back = roundtrip(m);
    SX_CHECK(strcmp(back->result.detail, "") == 0 &&
             strcmp(back->result.worker, "") == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&m);
    m = sx_msg_new(SX_MSG_GOODBYE);
    back = roundtrip(m);
    SX_CHECK(strcmp(back->reason, "") == 0 && !back->final);
    sx_msg_destroy(&back);
    sx_msg_destroy(&m);
    m = sx_msg_new(SX_MSG_FILE);
    m->hash = sx_strdup(HASH);
    back = roundtrip(m);
    SX_CHECK(strcmp(back->hash, HASH) == 0 && back->size == 0);
    sx_msg_destroy(&back);
    sx_msg_set_data(m, "a,b\n", 4);
    back = roundtrip(m);
    SX_CHECK(back->size == 4 && memcmp(back->data, "a,b\n", 4) == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&m);
    m = sx_msg_new(SX_MSG_FILE_REQUEST);
    m->hash = sx_strdup(HASH);
    back = roundtrip(m);
    SX_CHECK(back->type == SX_MSG_FILE_REQUEST && strcmp(back->hash, HASH) == 0);
    sx_msg_destroy(&back);
    m->hash[39] = '/'; /* below '0' */
    size_t size = 0;
    sx_error_t err;
    SX_CHECK(sx_msg_encode(m, &size, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "FILE_REQUEST: bad hash") == 0);
    sx_msg_destroy(&m);
}
#undef HASH
#undef ASSIGN_TASK
#undef ASSIGN_FILE
#undef RESULT
#undef RESULT_OK_UNTIL_SECONDS
#undef TIMINGS

static void test_names_and_hashes(void)
{
    SX_CHECK(sx_name_is_safe("t0001") && !sx_name_is_safe("a/b"));
    SX_CHECK(!sx_name_is_safe("..") && !sx_name_is_safe(""));
    SX_CHECK(sx_proto_safe_path("tasks/t1/sources/bids.csv"));
    SX_CHECK(!sx_proto_safe_path("/etc/passwd") && !sx_proto_safe_path("a//b"));
    SX_CHECK(!sx_proto_safe_path("tasks/../x") && !sx_proto_safe_path("a/"));
    char longest[4 * 256 + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    SX_CHECK(!sx_proto_safe_path(NULL) && !sx_proto_safe_path("") &&
             !sx_proto_safe_path("/") && !sx_proto_safe_path(longest));
    char hex[41];
    sx_hash_bytes("abc", 3, hex);
    SX_CHECK(strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
    /* Who may send what: every type has exactly its sides. */
    static const char sides[] = "?WCWBCBWC"; /* by type: Worker, Coordinator, Both */
    for (int type = SX_MSG_HELLO; type <= SX_MSG_FILE; type++) {
        SX_CHECK(sx_msg_from_worker((sx_msg_type_t)type) == (sides[type] != 'C'));
        SX_CHECK(sx_msg_from_coordinator((sx_msg_type_t)type) == (sides[type] != 'W'));
    }
    static const char *const loopback[] = {"tcp://127.0.0.1:5555",
                                           "tcp://127.0.0.1:*",
                                           "tcp://127.8.9.10:1",
                                           "ipc:///tmp/x",
                                           "inproc://sx",
                                           "tcp://[::1]:5555",
                                           "tcp://[::ffff:127.0.0.1]:5555",
                                           "tcp://127.0.0.1:0;127.0.0.1:5555",
                                           "tcp://127.0.0.1;[::1]:5555",
                                           "tcp://[::1]"};
    static const char *const elsewhere[] = {
        "tcp://*:5555",
        "tcp://10.0.0.1:5555",
        "tcp://127.0.0.1:0;192.0.2.2:5555",
        "tcp://192.0.2.2:0;127.0.0.1:5555",
        "tcp://localhost:5555",
        "tcp://127.0.0.1.example.com:5555",
        "tcp://lo:5555",
        "tcp://[::2]:5555",
        "tcp://[::1]x:5555",
        "tcp://::1:5555",
        "tcp://127.0.0.1:1;127.0.0.1:2;10.0.0.1:3",
        "tcp://",
        "udp://127.0.0.1:5555",
        "tcp://[fe80::1%lo]:5555",
        "tcp://;127.0.0.1:1",
        "tcp://:5555",
        "tcp://[::1:5555",
        "tcp://[::ffff:10.0.0.1]:5555",
        "tcp://127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1."
        "127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0."
        "1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1:1"};
    for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++)
        SX_CHECK(sx_endpoint_is_loopback(loopback[i]));
    for (size_t i = 0; i < sizeof elsewhere / sizeof elsewhere[0]; i++)
        SX_CHECK(!sx_endpoint_is_loopback(elsewhere[i]));
}

static void test_sockets(void)
{
    zsock_t *router = zsock_new_router("inproc://sx-proto-test");
    zsock_t *dealer = zsock_new_dealer(">inproc://sx-proto-test");
    sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
    SX_CHECK(sx_msg_send(beat, dealer, NULL, NULL) == 0);
    zframe_t *who = NULL;
    sx_msg_t *got = sx_msg_recv(router, &who, NULL);
    SX_CHECK(got && got->type == SX_MSG_HEARTBEAT && who);
    SX_CHECK(sx_msg_send(beat, router, who, NULL) == 0);
    sx_msg_destroy(&got);
    got = sx_msg_recv(dealer, NULL, NULL);
    SX_CHECK(got && got->type == SX_MSG_HEARTBEAT);
    sx_msg_destroy(&got);
    /* Two payload frames: rejected, but the sender is still known. */
    zstr_sendm(dealer, "x");
    zstr_send(dealer, "y");
    zframe_destroy(&who);
    sx_error_t err;
    SX_CHECK(sx_msg_recv(router, &who, &err) == NULL && who);
    SX_CHECK(strstr(err.msg, "2 frames"));
    zframe_destroy(&who);
    /* A message that cannot be encoded is not sent; nothing arriving in
     * time is an interrupted receive. */
    sx_msg_t *nameless = sx_msg_new(SX_MSG_ACK);
    SX_CHECK(sx_msg_send(nameless, dealer, NULL, &err) == -1);
    SX_CHECK(strcmp(err.msg, "ACK: bad method or task ID") == 0);
    sx_msg_destroy(&nameless);
    zsock_set_rcvtimeo(router, 10);
    SX_CHECK(sx_msg_recv(router, &who, &err) == NULL && who == NULL);
    SX_CHECK(strcmp(err.msg, "interrupted") == 0);
    sx_msg_destroy(&beat);
    zsock_destroy(&dealer);
    zsock_destroy(&router);
}

/* The sample of an ASSIGN task, a RESULT and a RELEASE task travels as an
 * optional last item, written only when it is not 0: a message of sample 0
 * is the one-sample protocol's, byte for byte. */
static void test_samples_on_the_wire(void)
{
    size_t plain = 0, sampled = 0;
    sx_error_t err;
    sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
    sx_msg_add_task(assign, "m1", "t0001", "SELECT 1", 1, 7);
    char *data = sx_msg_encode(assign, &plain, &err);
    SX_CHECK(data && memmem(data, plain, "\x95\xa2m1", 4)); /* a task of 5 items */
    free(data);
    sx_msg_add_task(assign, "m1", "t0001", "SELECT 2", 1, 8)->sample = 3;
    sx_msg_t *back = roundtrip(assign);
    SX_CHECK(back->task_count == 2 && back->tasks[0].sample == 0 &&
             back->tasks[1].sample == 3 && strcmp(back->tasks[1].sql, "SELECT 2") == 0);
    sx_msg_destroy(&back);
    data = sx_msg_encode(assign, &sampled, &err);
    SX_CHECK(data && memmem(data, sampled, "\x96\xa2m1", 4)); /* 6 items */
    free(data);
    assign->tasks[1].sample = SX_SAMPLES_LIMIT;
    SX_CHECK(sx_msg_encode(assign, &sampled, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "ASSIGN: bad task 1") == 0);
    sx_msg_destroy(&assign);

    sx_msg_t *result = sx_msg_new(SX_MSG_RESULT);
    result->method = sx_strdup("m1");
    sx_result_init(&result->result, "t0001", SX_STATUS_MATCH, "", NULL);
    result->result.attempts = 1;
    data = sx_msg_encode(result, &plain, &err);
    SX_CHECK(data && memcmp(data, "\xdc\x00\x10", 3) == 0); /* 3 + 13 items */
    free(data);
    result->result.sample = 2;
    data = sx_msg_encode(result, &sampled, &err);
    SX_CHECK(data && memcmp(data, "\xdc\x00\x11", 3) == 0 && sampled == plain + 1);
    free(data);
    back = roundtrip(result);
    SX_CHECK(back->result.sample == 2 && back->result.status == SX_STATUS_MATCH);
    sx_msg_destroy(&back);
    result->result.sample = -1;
    SX_CHECK(sx_msg_encode(result, &sampled, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "RESULT: bad sample -1") == 0);
    sx_msg_destroy(&result);

    sx_msg_t *release = sx_msg_new(SX_MSG_RELEASE);
    sx_msg_add_task(release, "m1", "t0001", NULL, 0, 9)->sample = 4;
    sx_msg_add_task(release, "m1", "t0001", NULL, 0, 10);
    back = roundtrip(release);
    SX_CHECK(back->task_count == 2 && back->tasks[0].sample == 4 &&
             back->tasks[0].token == 9 && back->tasks[1].sample == 0);
    sx_msg_destroy(&back);
    sx_msg_destroy(&release);
}

void sx_proto_test(bool verbose)
{
    (void)verbose;
    test_roundtrips();
    test_samples_on_the_wire();
    test_malformed();
    test_every_msgpack_format_passes_the_precheck();
    test_result_fields();
    test_decoding_names_the_field();
    test_encoding_checks_fields();
    test_names_and_hashes();
    test_recall_release();
    test_sockets();
}
