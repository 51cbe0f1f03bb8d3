/* crash.h: a last word from a dying process. On a fatal signal (the abort
 * of a heap that glibc found corrupted, a segfault) the stack of the thread
 * that took it goes to stderr before the process dies as it would have:
 * a crash seen once in many CI runs then says where it was found. */
#ifndef SX_CRASH_H
#define SX_CRASH_H

#include <stdbool.h>

/* Installs the handler for SIGABRT, and for SIGSEGV, SIGBUS, SIGFPE and
 * SIGILL unless AddressSanitizer (which reports those itself) is built in.
 * Call once, early in main. */
void sx_crash_report_install(void);

void sx_crash_test(bool verbose);

#endif
