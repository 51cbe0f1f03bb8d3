/* health.c: whether each component of a pair answers (see pair_int.h):
 * Kafka through a librdkafka metadata request, the JobManager and the
 * TaskManager through Flink REST /overview (which counts the registered
 * TaskManagers), the SQL Gateway through /v1/info. Each check is bounded
 * by HEALTH_TIMEOUT_MS, so a hung service cannot stall a start, the
 * watchdog or `runtime status`. */
#include "worker/pair/pair_int.h"

#include "worker/clients/http.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEALTH_TIMEOUT_MS 2000

/* GETs url; on HTTP 200 returns the body (caller frees), else NULL. */
static char *http_get_ok(const char *url)
{
    sx_http_answer_t answer;
    if (sx_http_get(url, HEALTH_TIMEOUT_MS, &answer, NULL) != 0)
        return NULL;
    if (answer.status != 200) {
        free(answer.body);
        return NULL;
    }
    return answer.body;
}

/* Flink REST /overview as JSON (caller decrefs); NULL when it does not answer. */
static json_t *flink_overview(const sx_pair_t *self)
{
    char url[512];
    snprintf(url, sizeof url, "%s/overview", self->rest_url);
    char *body = http_get_ok(url);
    json_t *root = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    return root;
}

/* Number of TaskManagers Flink REST /overview reports; -1 when it does not answer. */
static int registered_taskmanagers(const sx_pair_t *self)
{
    json_t *root = flink_overview(self);
    json_t *count = json_object_get(root, "taskmanagers");
    int n = json_is_integer(count) ? (int)json_integer_value(count) : -1;
    json_decref(root);
    return n;
}

void sx_pair_describe(const sx_pair_t *self, char *out, size_t out_size)
{
    if (self->external) {
        json_t *root = flink_overview(self);
        const char *flink = json_string_value(json_object_get(root, "flink-version"));
        snprintf(out, out_size, "flink-%s/external (Kafka at %s)",
                 flink ? flink : "unknown", self->bootstrap);
        json_decref(root);
        return;
    }
    sx_error_t err;
    if (sx_pair_need_engine(self, &err) != 0)
        snprintf(out, out_size, "unknown (%s)", err.msg);
    else
        snprintf(out, out_size, "%s", self->engine_label);
}

bool sx_pair_healthy(sx_pair_t *self, component_t c)
{
    switch (c) {
    case KAFKA:
        if (!self->kafka)
            self->kafka = sx_kafka_new(self->bootstrap, HEALTH_TIMEOUT_MS, NULL);
        return self->kafka && sx_kafka_check(self->kafka, NULL) == 0;
    case JOBMANAGER:
        return registered_taskmanagers(self) >= 0;
    case TASKMANAGER:
        /* A local pair has one TaskManager: two registered means the
         * JobManager still counts a killed one (until its heartbeat times
         * out) and may ask it for slots, which stalls the next job for
         * minutes. */
        return self->external ? registered_taskmanagers(self) >= 1
                              : registered_taskmanagers(self) == 1;
    case GATEWAY: {
        char url[512];
        snprintf(url, sizeof url, "%s/v1/info", self->gateway_url);
        char *body = http_get_ok(url);
        free(body);
        return body != NULL;
    }
    }
    return false;
}

const char *sx_pair_endpoint(const sx_pair_t *self, component_t c)
{
    return c == KAFKA     ? self->bootstrap
           : c == GATEWAY ? self->gateway_url
                          : self->rest_url;
}
