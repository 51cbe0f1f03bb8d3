/* crash.c: the stack of a thread that took a fatal signal, on stderr (see
 * crash.h). The handler only calls async-signal-safe functions, and
 * backtrace(), whose library is loaded at install time so that it does not
 * allocate inside the handler. Frames of streamex's own functions come as
 * streamex(+OFFSET): `addr2line -f -e streamex OFFSET` names them. */
#include "common/crash.h"

#include "common/selftest.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CRASH_FRAMES 64

static void say(const char *text)
{
    ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
    (void)ignored;
}

/* Writes the stack; returning lets the signal take its default course
 * (SA_RESETHAND): abort() raises it again, a fault happens again. */
static void on_fatal_signal(int sig)
{
    char number[8] = "";
    size_t n = sizeof number - 1;
    for (int value = sig; n > 0 && (value > 0 || n == sizeof number - 1); value /= 10)
        number[--n] = (char)('0' + value % 10);
    say("streamex: fatal signal ");
    say(number + n);
    say("; the stack of the thread that took it:\n");
    void *frames[CRASH_FRAMES];
    backtrace_symbols_fd(frames, backtrace(frames, CRASH_FRAMES), STDERR_FILENO);
}

static void handle(int sig)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_fatal_signal;
    action.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, NULL);
}

void sx_crash_report_install(void)
{
    void *warm[1];
    backtrace(warm, 1);
    handle(SIGABRT);
#ifndef __SANITIZE_ADDRESS__
    handle(SIGSEGV);
    handle(SIGBUS);
    handle(SIGFPE);
    handle(SIGILL);
#endif
}

/* ---- self-test ----------------------------------------------------------- */

/* A child that aborts with the report installed dies of SIGABRT all the
 * same, after writing the report and its own frames on stderr. */
void sx_crash_test(bool verbose)
{
    int pipe_fds[2];
    SX_CHECK(pipe(pipe_fds) == 0);
    pid_t child = fork();
    SX_CHECK(child >= 0);
    if (child == 0) {
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        sx_crash_report_install();
        abort();
    }
    close(pipe_fds[1]);
    char text[8192];
    size_t used = 0;
    ssize_t got;
    while (used < sizeof text - 1 &&
           (got = read(pipe_fds[0], text + used, sizeof text - 1 - used)) > 0)
        used += (size_t)got;
    text[used] = '\0';
    close(pipe_fds[0]);
    int status = 0;
    SX_CHECK(waitpid(child, &status, 0) == child);
    if (verbose)
        fprintf(stderr, "%s", text);
    SX_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    SX_CHECK(strstr(text, "streamex: fatal signal 6; the stack of the thread that took "
                          "it:\n") == text);
    SX_CHECK(strstr(text, "sx_crash_test"));
}
