/* utf8.h: where a byte string stops being UTF-8. One definition of a
 * well-formed sequence (RFC 3629: no overlong form, no surrogate, nothing
 * above U+10FFFF), the one Python's strict decoder and jansson both apply,
 * for the three readers that need it: the EX frame (a CSV pandas would
 * refuse), prepare (a row jansson would refuse) and the report (text from
 * a CSV shown in an HTML page that says charset=utf-8). */
#ifndef SX_UTF8_H
#define SX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length (1-4) of the well-formed UTF-8 sequence at s, of at most
 * `left` bytes (left >= 1), or 0 when the bytes there are not one. */
size_t sx_utf8_length(const unsigned char *s, size_t left);

void sx_utf8_test(bool verbose);

#endif
