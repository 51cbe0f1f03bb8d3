/* signals.h: how streamex hears SIGINT, SIGTERM and SIGHUP.
 *
 * CZMQ's default handler sets zsys_interrupted in whatever thread the signal
 * lands on, and every blocking ZeroMQ call it interrupts returns early: an
 * early Ctrl-C then cut zactor set-up or tear-down in half and aborted inside
 * libzmq (issue 20). So streamex blocks the three signals in every thread from
 * the first line of main, and one listener thread takes them with sigwait()
 * and only records which came. No ZeroMQ, curl or librdkafka call ever sees
 * EINTR; each loop that can last asks sx_signals_caught() and winds down by
 * itself. Child processes get their signals back before exec (worker/pair/process.c). */
#ifndef SX_SIGNALS_H
#define SX_SIGNALS_H

#include <stdbool.h>

/* Blocks the stop signals in the calling thread (and so in every thread it
 * starts later) and starts the listener. Call before anything starts a
 * thread. Returns 0, or -1 if the listener could not start. */
int sx_signals_start(void);

/* The first stop signal received (SIGINT, SIGTERM or SIGHUP), or 0. */
int sx_signals_caught(void);

/* The conventional exit status of a process stopped by the signal caught:
 * 128 + its number (130 for SIGINT, 143 for SIGTERM). */
int sx_signals_exit_code(void);

void sx_signals_test(bool verbose);

#endif
