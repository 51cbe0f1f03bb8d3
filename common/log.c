/* log.c: timestamped, levelled log lines on stderr (see log.h). */
#include "common/log.h"

#include "common/selftest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static sx_log_level_t s_level = SX_LOG_INFO;
static char s_component[64] = "streamex";
/* The live line and whether it is on screen; the lock keeps a log line of
 * one thread from landing in the middle of another's redraw. */
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static char s_live[1024];
static bool s_live_shown = false;
/* Set by the first live line: the process talks to a person from then on. */
static bool s_terminal = false;

static const char *level_name(sx_log_level_t level)
{
    static const char *names[] = {"debug", "info", "note", "warn", "error", "off"};
    return names[level];
}

void sx_log_set_level(sx_log_level_t level)
{
    s_level = level;
}

sx_log_level_t sx_log_level(void)
{
    return s_level;
}

void sx_log_set_component(const char *component)
{
    snprintf(s_component, sizeof s_component, "%s", component);
}

/* Once a live line was drawn, routine lines are held back. Called with
 * s_lock held. */
static bool held_back(sx_log_level_t level)
{
    return s_terminal && level < SX_LOG_NOTE;
}

void sx_log(sx_log_level_t level, const char *fmt, ...)
{
    if (level < s_level || level >= SX_LOG_OFF)
        return;
    char stamp[32];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s_lock);
    if (held_back(level)) {
        pthread_mutex_unlock(&s_lock);
        return;
    }
    if (s_live_shown) {
        fputs("\r\033[K", stdout);
        fflush(stdout);
    }
    fprintf(stderr, "%s.%03ldZ %-5s [%s] %s\n", stamp, now.tv_nsec / 1000000L,
            level_name(level), s_component, line);
    if (s_live_shown) {
        fputs(s_live, stdout);
        fflush(stdout);
    }
    pthread_mutex_unlock(&s_lock);
}

void sx_log_live_set(const char *line)
{
    pthread_mutex_lock(&s_lock);
    snprintf(s_live, sizeof s_live, "%s", line);
    printf("\r\033[K%s", s_live);
    fflush(stdout);
    s_live_shown = true;
    s_terminal = true;
    pthread_mutex_unlock(&s_lock);
}

void sx_log_live_end(void)
{
    pthread_mutex_lock(&s_lock);
    if (s_live_shown)
        fputs("\n", stdout);
    fflush(stdout);
    s_live_shown = false;
    pthread_mutex_unlock(&s_lock);
}

void sx_log_test(bool verbose)
{
    sx_log_level_t saved = sx_log_level();
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    sx_log_set_component("selftest");
    sx_info("log line %d", 1);
    sx_log_set_level(SX_LOG_WARN);
    SX_CHECK(sx_log_level() == SX_LOG_WARN);
    /* Under a live line, routine lines are held back, notable ones not. */
    SX_CHECK(!held_back(SX_LOG_DEBUG) && !held_back(SX_LOG_INFO));
    s_terminal = true;
    SX_CHECK(held_back(SX_LOG_INFO) && !held_back(SX_LOG_NOTE) &&
             !held_back(SX_LOG_ERROR));
    s_terminal = false;
    sx_log_set_level(saved);
    sx_log_set_component("streamex");
}
