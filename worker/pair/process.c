/* process.c: the JVM processes of one pair (see pair_int.h). Every JVM
 * runs in its own session with stdout/stderr in the pair's logs/ folder and
 * a pid file in pids/; its command line carries -Dsx.pair=DIR
 * -Dsx.component=NAME (and -Dsx.engine=LABEL, which engine it runs), so a
 * pid file is only ever trusted for the process it was written for, and the kernel's
 * start time of a process tells it from a later one that got the same pid. Stopping
 * signals a component's whole session: SIGTERM, then SIGKILL after the grace period. */
#include "worker/pair/pair_int.h"

#include "common/log.h"
#include "common/mem.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a component may take to die after SIGKILL. */
#define KILL_WAIT_S 10

/* ---- spawning --------------------------------------------------------- */

pid_t sx_pair_spawn(const sx_pair_t *self, char *const *argv, const char *log,
                    bool truncate, sx_error_t *err)
{
    sx_pair_argv_t env = {0};
    sx_pair_env(self, &env);
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND);
    int out = open(log, flags, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = {-1, -1};
    if (out == -1 || in == -1 || pipe2(report, O_CLOEXEC) == -1) {
        sx_error_set(err, "cannot open %s: %s", log, strerror(errno));
        if (out != -1)
            close(out);
        if (in != -1)
            close(in);
        sx_pair_argv_free(&env);
        return -1;
    }
    pid_t parent = getpid();
    bool tie = !self->config.detached;
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (tie && (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != parent))
            _exit(127);
        /* A blocked or ignored SIGTERM would survive exec and make the JVM
         * deaf to `runtime down`; our callers may have set either. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        static const int reset[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
        for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
            signal(reset[i], SIG_DFL);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        if (chdir(self->pair_dir) == 0)
            execvpe(argv[0], argv, env.items);
        int code = errno;
        if (write(report[1], &code, sizeof code) < 0)
            code = 0;
        _exit(127);
    }
    int fork_errno = errno;
    close(report[1]);
    close(out);
    close(in);
    sx_pair_argv_free(&env);
    if (pid == -1) {
        close(report[0]);
        sx_error_set(err, "cannot fork: %s", strerror(fork_errno));
        return -1;
    }
    /* The pipe closes on exec; a number on it means exec failed. */
    int code = 0;
    ssize_t n = read(report[0], &code, sizeof code);
    close(report[0]);
    if (n == (ssize_t)sizeof code) {
        waitpid(pid, NULL, 0);
        sx_error_set(err, "cannot run %s: %s", argv[0], strerror(code));
        return -1;
    }
    return pid;
}

/* ---- which process is which ------------------------------------------ */

/* Our own dead children are reaped here. */
bool sx_pair_alive(pid_t pid)
{
    if (pid <= 0)
        return false;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
        return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *stat = sx_pair_read_text(path);
    if (!stat)
        return false;
    const char *end = strrchr(stat, ')');
    bool alive = end && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
    free(stat);
    return alive;
}

/* The kernel's start time of `pid` (clock ticks since boot), 0 when unknown. */
static unsigned long long process_start_time(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *stat = sx_pair_read_text(path);
    const char *p = stat ? strrchr(stat, ')') : NULL;
    /* Field 22, counted from field 3 (the state) right after the ") ". */
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    unsigned long long started = p ? strtoull(p + 1, NULL, 10) : 0;
    free(stat);
    return started;
}

/* Calls seen(arg, ctx) for each argument of pid's command line until it
 * returns true; false when none did (or pid is gone). */
static bool scan_cmdline(pid_t pid, bool (*seen)(const char *arg, void *ctx), void *ctx)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool found = false;
    char *arg = NULL;
    size_t cap = 0;
    while (!found && getdelim(&arg, &cap, '\0', f) > 0)
        found = seen(arg, ctx);
    free(arg);
    fclose(f);
    return found;
}

typedef struct {
    const char *pair, *comp;
    bool pair_seen, comp_seen;
} markers_t;

static bool see_markers(const char *arg, void *ctx)
{
    markers_t *m = ctx;
    m->pair_seen = m->pair_seen || strcmp(arg, m->pair) == 0;
    m->comp_seen = m->comp_seen || strcmp(arg, m->comp) == 0;
    return m->pair_seen && m->comp_seen;
}

bool sx_pair_process_is(const sx_pair_t *self, pid_t pid, const char *name)
{
    char *pair = sx_format("-Dsx.pair=%s", self->pair_dir);
    char *comp = sx_format("-Dsx.component=%s", name);
    markers_t markers = {pair, comp, false, false};
    bool is = scan_cmdline(pid, see_markers, &markers);
    free(pair);
    free(comp);
    return is;
}

typedef struct {
    char *out;
    size_t size;
} engine_arg_t;

static bool see_engine(const char *arg, void *ctx)
{
    engine_arg_t *e = ctx;
    if (strncmp(arg, "-Dsx.engine=", 12) != 0)
        return false;
    snprintf(e->out, e->size, "%s", arg + 12);
    return true;
}

void sx_pair_process_engine(pid_t pid, char *out, size_t size)
{
    engine_arg_t e = {out, size};
    if (!scan_cmdline(pid, see_engine, &e))
        snprintf(out, size, "unknown");
}

/* Ours, or the one its pid file names (either checked against its command
 * line, in case the pid was reused). */
pid_t sx_pair_find(const sx_pair_t *self, component_t c)
{
    if (self->pids[c] > 0 && sx_pair_alive(self->pids[c]) &&
        sx_pair_process_is(self, self->pids[c], sx_pair_names[c]))
        return self->pids[c];
    char path[PATH_MAX];
    sx_pair_pid_path(self, c, path, sizeof path);
    char *text = sx_pair_read_text(path);
    long pid = text ? strtol(text, NULL, 10) : 0;
    free(text);
    if (pid > 0 && sx_pair_alive((pid_t)pid) &&
        sx_pair_process_is(self, (pid_t)pid, sx_pair_names[c]))
        return (pid_t)pid;
    return 0;
}

/* ---- starting and stopping ------------------------------------------- */

int sx_pair_launch(sx_pair_t *self, component_t c, bool fresh_log, sx_error_t *err)
{
    sx_pair_argv_t argv = {0};
    int rc = 0;
    if (c == KAFKA)
        sx_pair_kafka_command(self, &argv, NULL);
    else
        rc = sx_pair_flink_command(self, c, &argv, err);
    char log[PATH_MAX], pidfile[PATH_MAX];
    sx_pair_log_path(self, c, log, sizeof log);
    sx_pair_pid_path(self, c, pidfile, sizeof pidfile);
    pid_t pid = rc == 0 ? sx_pair_spawn(self, argv.items, log, fresh_log, err) : -1;
    sx_pair_argv_free(&argv);
    if (pid <= 0) {
        sx_error_prefix(err, "pair %d: starting %s", self->config.index,
                        sx_pair_names[c]);
        return -1;
    }
    self->pids[c] = pid;
    self->started = true;
    char text[32];
    snprintf(text, sizeof text, "%d\n", (int)pid);
    sx_debug("pair %d: %s started, pid %d", self->config.index, sx_pair_names[c],
             (int)pid);
    return sx_pair_write_text(pidfile, text, err);
}

int sx_pair_terminate(sx_pair_t *self, sx_error_t *err)
{
    pid_t pids[SX_PAIR_COMPONENTS];
    for (int c = SX_PAIR_COMPONENTS - 1; c >= 0; c--) {
        pids[c] = sx_pair_find(self, (component_t)c);
        /* Each JVM leads its own session: signal all of it. */
        if (pids[c] > 0 && kill(-pids[c], SIGTERM) == -1)
            kill(pids[c], SIGTERM);
    }
    int64_t deadline = zclock_usecs() + (int64_t)self->config.stop_grace_s * 1000000;
    bool killed = false;
    for (;;) {
        int alive = 0;
        for (int c = 0; c < SX_PAIR_COMPONENTS; c++)
            alive += pids[c] > 0 && sx_pair_alive(pids[c]);
        if (alive == 0)
            break;
        if (zclock_usecs() > deadline) {
            if (killed)
                return sx_error_set(err, "pair %d: %d JVM(s) survived SIGKILL",
                                    self->config.index, alive);
            for (int c = 0; c < SX_PAIR_COMPONENTS; c++)
                if (pids[c] > 0 && sx_pair_alive(pids[c])) {
                    sx_warn("pair %d: %s ignored SIGTERM for %d s: killing it",
                            self->config.index, sx_pair_names[c],
                            self->config.stop_grace_s);
                    kill(-pids[c], SIGKILL);
                    kill(pids[c], SIGKILL);
                }
            killed = true;
            deadline = zclock_usecs() + (int64_t)KILL_WAIT_S * 1000000;
        }
        zclock_sleep(100);
    }
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++) {
        char path[PATH_MAX];
        sx_pair_pid_path(self, (component_t)c, path, sizeof path);
        unlink(path);
        self->pids[c] = 0;
    }
    return 0;
}

/* ---- what a process is ------------------------------------------------ */

void sx_pair_identify(sx_pair_t *self, sx_pair_identity_t *identity)
{
    memset(identity, 0, sizeof *identity);
    pthread_mutex_lock(&self->lock);
    for (int c = 0; c < SX_PAIR_COMPONENTS && !self->external; c++) {
        identity->pid[c] = sx_pair_find(self, (component_t)c);
        identity->started[c] =
            identity->pid[c] > 0 ? process_start_time(identity->pid[c]) : 0;
    }
    pthread_mutex_unlock(&self->lock);
}

long sx_pair_resident_kb(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *text = sx_pair_read_text(path);
    const char *line = text ? strstr(text, "VmRSS:") : NULL;
    long kb = line ? strtol(line + 6, NULL, 10) : 0;
    free(text);
    return kb;
}
