/* tests/unit/http.c: the worker's HTTP request (worker/clients/http.c) against the
 * scripted fake Flink of tests/kit/fakeflink.h: an answer of any status, a
 * reused handle with a JSON body, and no answer at all. */
#include "worker/clients/http.h"

#include "common/selftest.h"
#include "tests/kit/fakeflink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_request(void)
{
    sx_fakeflink_script_t script = {0};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    char url[256];
    sx_error_t err;
    sx_http_answer_t answer;

    /* An answer of any status is an answer, with its body. */
    snprintf(url, sizeof url, "%s/jobs/overview", sx_fakeflink_url(fake));
    SX_CHECK(sx_http_get(url, 2000, &answer, &err) == 0);
    SX_CHECK(answer.status == 200 && strstr(answer.body, "\"jobs\"") != NULL);
    SX_CHECK(answer.size == strlen(answer.body));
    free(answer.body);
    snprintf(url, sizeof url, "%s/nowhere", sx_fakeflink_url(fake));
    SX_CHECK(sx_http_get(url, 2000, &answer, &err) == 0);
    SX_CHECK(answer.status == 404 && answer.body != NULL);
    free(answer.body);

    /* A reused handle, another method and a JSON body. */
    CURL *curl = sx_http_handle();
    SX_CHECK(curl);
    snprintf(url, sizeof url, "%s/v1/sessions", sx_fakeflink_url(fake));
    SX_CHECK(sx_http_request(curl, "POST", url, "{}", 2000, &answer, &err) == 0);
    SX_CHECK(answer.status == 200 && strstr(answer.body, "fake-session") != NULL);
    free(answer.body);
    SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions") == 1);
    curl_easy_cleanup(curl);
    sx_fakeflink_destroy(&fake);

    /* No answer at all: curl's reason, after the method and the URL. */
    SX_CHECK(sx_http_get("http://127.0.0.1:1/v1/info", 2000, &answer, &err) == -1);
    SX_CHECK(strstr(err.msg, "GET http://127.0.0.1:1/v1/info: ") == err.msg);
    SX_CHECK(answer.body == NULL && answer.status == 0);
}

int main(void)
{
    test_request();
    printf("test_http: OK\n");
    return 0;
}
