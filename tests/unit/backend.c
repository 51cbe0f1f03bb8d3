/* tests/unit/backend.c: self-test of the executor behind an agent
 * (worker/backend.c) with the simulated executor, and of the slots fitted
 * to the TaskManager slots of a fake Flink; the real pair behind it is
 * exercised by the cli_ and e2e_ tests of run and worker. */
#include "worker/backend.h"

#include "common/selftest.h"
#include "tests/kit/fakeflink.h"
#include "tests/kit/logfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the fit of `wanted` tasks gave against a fake Flink whose /overview
 * answers `slots` in turn (see sx_fakeflink_script_t), waiting wait_ms. */
typedef struct {
    int slots;      /* sx_backend_fit_slots' value */
    int polls;      /* GET /overview requests */
    char *warned;   /* what it warned (freed by fit_clear) */
    sx_error_t err; /* why, when slots is -1 */
} fit_t;

static fit_t fit(const char *slots, int wanted, int wait_ms)
{
    sx_fakeflink_script_t script = {.slots = slots};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    char log[] = "/tmp/sx-test-backend-XXXXXX";
    int fd = mkstemp(log);
    SX_CHECK(fd >= 0);
    close(fd);
    fit_t got = {0};
    sx_logfile_t caught;
    sx_logfile_start(&caught, log, SX_LOG_WARN);
    got.slots =
        sx_backend_fit_slots(sx_fakeflink_url(fake), wanted, 7, wait_ms, &got.err);
    sx_logfile_stop(&caught);
    got.polls = sx_fakeflink_count(fake, "GET /overview");
    got.warned = sx_logfile_messages(&caught);
    unlink(log);
    sx_fakeflink_destroy(&fake);
    return got;
}

static void fit_clear(fit_t *f)
{
    free(f->warned);
}

static const char s_taken[] = "are taken by other jobs";

/* A slot the pair's own warm-up job held a moment ago is waited for, not
 * warned about; one held past the wait is. */
static void test_slot_released_after_warm_up(void)
{
    fit_t f = fit("4/3,4/3,4/4", 4, 5000);
    SX_CHECK(f.slots == 4 && f.polls == 3 && strcmp(f.warned, "") == 0);
    fit_clear(&f);
    f = fit("4/3", 4, 300);
    SX_CHECK(f.slots == 4 && f.polls >= 2);
    SX_CHECK(strstr(f.warned,
                    "pair 7: 1 of Flink's 4 TaskManager slots are taken by other "
                    "jobs: a task whose job waits for a slot past its timeout "
                    "ends infra_error\n"));
    fit_clear(&f);
}

/* Fewer slots than tasks: capped, said once; free slots enough for the
 * tasks asked: no wait, no warning, however many others hold. */
static void test_slots_capped_or_enough(void)
{
    fit_t f = fit("2/2", 4, 5000);
    SX_CHECK(f.slots == 2 && f.polls == 1);
    SX_CHECK(strstr(f.warned,
                    "pair 7: Flink has 2 TaskManager slot(s): 2 task(s) at once, "
                    "not 4 (one slot per task's job;"));
    SX_CHECK(!strstr(f.warned, s_taken));
    fit_clear(&f);
    f = fit("4/2,4/4", 2, 5000);
    SX_CHECK(f.slots == 2 && f.polls == 1 && strcmp(f.warned, "") == 0);
    fit_clear(&f);
    f = fit("4/1", 2, 0);
    SX_CHECK(f.slots == 2 && f.polls == 1);
    SX_CHECK(strstr(f.warned, "pair 7: 3 of Flink's 4 TaskManager slots "));
    SX_CHECK(strstr(f.warned, s_taken));
    fit_clear(&f);
}

/* A Flink with no slot, or that does not say: the pair cannot run tasks. */
static void test_slots_unknown(void)
{
    fit_t f = fit("0/0", 2, 5000);
    SX_CHECK(f.slots == -1 &&
             strcmp(f.err.msg, "pair 7: Flink has no TaskManager slot") == 0);
    fit_clear(&f);
    f = fit(NULL, 2, 5000);
    static const char prefix[] = "pair 7: TaskManager slots: ";
    SX_CHECK(f.slots == -1 && f.polls == 1);
    SX_CHECK(strncmp(f.err.msg, prefix, strlen(prefix)) == 0);
    fit_clear(&f);
}

int main(void)
{
    sx_backend_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_slot_released_after_warm_up();
    test_slots_capped_or_enough();
    test_slots_unknown();
    printf("test_backend: OK\n");
    return 0;
}
