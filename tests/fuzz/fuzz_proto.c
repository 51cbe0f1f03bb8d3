/* fuzz_proto.c: wire-message decoding (proto/proto.c). Any frame either
 * fails with a message or decodes; a decoded message must encode again (the
 * encoder accepts what the decoder does) and that encoding must decode and
 * re-encode to the same bytes. */
#include "proto/proto.h"

#include <stdlib.h>
#include <string.h>

/* Small enough to keep the fuzzer fast, large enough for every message. */
#define MAX_FRAME (1u << 20)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_msg_t *msg = sx_msg_decode(data, size, MAX_FRAME, &err);
    if (!msg) {
        if (!sx_error_is_set(&err))
            abort(); /* a refusal always says why */
        return 0;
    }
    size_t first_size = 0, second_size = 0;
    char *first = sx_msg_encode(msg, &first_size, &err);
    if (!first)
        abort(); /* decoded but not encodable: the two sides disagree */
    sx_msg_t *again = sx_msg_decode(first, first_size, MAX_FRAME, &err);
    if (!again)
        abort();
    char *second = sx_msg_encode(again, &second_size, &err);
    if (!second || second_size != first_size || memcmp(first, second, first_size) != 0)
        abort();
    free(first);
    free(second);
    sx_msg_destroy(&again);
    sx_msg_destroy(&msg);
    return 0;
}
