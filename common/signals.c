/* signals.c: stop signals blocked everywhere, taken by one listener thread
 * that only records them (see signals.h for why). */
#include "common/signals.h"

#include "common/log.h"
#include "common/selftest.h"

#include <czmq.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int s_caught = 0;
static atomic_int s_received = 0; /* every stop signal taken, for the self-test */

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

/* The listener: the first signal is the one that counts; later ones (a
 * second Ctrl-C) are taken too, so they cannot kill a process that is
 * already stopping cleanly. */
static void *listen_for_signals(void *arg)
{
    (void)arg;
    sigset_t set;
    stop_set(&set);
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        int none = 0;
        if (atomic_compare_exchange_strong(&s_caught, &none, sig))
            sx_info("signal %d: stopping", sig);
        else
            sx_warn("signal %d: already stopping after signal %d", sig, none);
        atomic_fetch_add(&s_received, 1);
    }
    return NULL;
}

static int s_listener_rc = -1;

static void start_listener(void)
{
    pthread_t listener;
    s_listener_rc = pthread_create(&listener, NULL, listen_for_signals, NULL);
    if (s_listener_rc == 0)
        pthread_detach(listener);
}

int sx_signals_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    sigset_t set;
    stop_set(&set);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    pthread_once(&once, start_listener);
    return s_listener_rc == 0 ? 0 : -1;
}

int sx_signals_caught(void)
{
    return atomic_load(&s_caught);
}

int sx_signals_exit_code(void)
{
    int sig = sx_signals_caught();
    return sig ? 128 + sig : 0;
}

/* Waits up to ten seconds for the listener to have taken `count` signals. */
static bool wait_received(int count)
{
    for (int i = 0; i < 10000 && atomic_load(&s_received) < count; i++)
        zclock_sleep(1);
    return atomic_load(&s_received) >= count;
}

void sx_signals_test(bool verbose)
{
    (void)verbose;
    SX_CHECK(sx_signals_caught() == 0);
    SX_CHECK(sx_signals_exit_code() == 0);
    SX_CHECK(sx_signals_start() == 0);
    SX_CHECK(sx_signals_start() == 0); /* a second call starts no second listener */
    /* Sent to the process, the signal is blocked in this thread: it must
     * neither kill the test nor interrupt a sleep, only be recorded. */
    kill(getpid(), SIGTERM);
    SX_CHECK(wait_received(1));
    SX_CHECK(sx_signals_caught() == SIGTERM);
    SX_CHECK(sx_signals_exit_code() == 143);
    kill(getpid(), SIGINT); /* a second signal does not replace the first */
    SX_CHECK(wait_received(2));
    SX_CHECK(sx_signals_caught() == SIGTERM);
}
