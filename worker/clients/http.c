/* http.c: one HTTP request through libcurl (see http.h). The body grows in
 * memory as curl hands it over; nothing about Flink is known here. */
#include "worker/clients/http.h"

#include "common/mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURL *sx_http_handle(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    return curl_easy_init();
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    sx_http_answer_t *answer = userdata;
    size_t n = size * nmemb;
    answer->body = sx_realloc(answer->body, answer->size + n + 1, 1);
    memcpy(answer->body + answer->size, ptr, n);
    answer->size += n;
    answer->body[answer->size] = '\0';
    return n;
}

int sx_http_request(CURL *curl, const char *method, const char *url, const char *json,
                    long timeout_ms, sx_http_answer_t *answer, sx_error_t *err)
{
    *answer = (sx_http_answer_t){0};
    struct curl_slist *headers =
        curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (json)
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (code != CURLE_OK) {
        free(answer->body);
        *answer = (sx_http_answer_t){0};
        return sx_error_set(err, "%s %s: %s", method, url, curl_easy_strerror(code));
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer->status);
    if (!answer->body)
        answer->body = sx_strdup("");
    return 0;
}

int sx_http_get(const char *url, long timeout_ms, sx_http_answer_t *answer,
                sx_error_t *err)
{
    CURL *curl = sx_http_handle();
    if (!curl) {
        *answer = (sx_http_answer_t){0};
        return sx_error_set(err, "GET %s: cannot make a curl handle", url);
    }
    int rc = sx_http_request(curl, "GET", url, NULL, timeout_ms, answer, err);
    curl_easy_cleanup(curl);
    return rc;
}
