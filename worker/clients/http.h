/* http.h: the worker's one way to make an HTTP request (libcurl), shared by
 * the Flink SQL Gateway and REST client (worker/clients/gateway.c, one reused handle
 * per client) and the pair's health checks (worker/pair/health.c, a handle per
 * check). A request either gets an HTTP answer, whatever its status, with
 * the body on the heap, or fails with curl's reason. */
#ifndef SX_HTTP_H
#define SX_HTTP_H

#include "common/error.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    long status; /* the HTTP status, e.g. 200 */
    char *body;  /* the answer's body, NUL-terminated ("" when empty); caller frees */
    size_t size; /* its length */
} sx_http_answer_t;

/* A new curl handle, libcurl initialised first (once per process, which
 * curl_global_init needs before any thread uses it). NULL when curl cannot
 * make one. */
CURL *sx_http_handle(void);

/* One request on curl, reset first (a handle reused keeps its connections):
 * method ("GET", "POST", ...) to url, json (may be NULL) as the body, with
 * Content-Type application/json, bounded by timeout_ms for connecting and
 * for the whole request. 0 with *answer when an answer came, else -1 and err
 * "METHOD URL: curl's reason". */
int sx_http_request(CURL *curl, const char *method, const char *url, const char *json,
                    long timeout_ms, sx_http_answer_t *answer, sx_error_t *err);

/* A GET of url on a handle of its own, as sx_http_request. */
int sx_http_get(const char *url, long timeout_ms, sx_http_answer_t *answer,
                sx_error_t *err);

#endif
