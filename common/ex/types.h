/* types.h: the EX comparison's shared types: how a task is compared
 * (sx_evaluation_t, BENCH/evaluation/ID.json) and under which upstream
 * profile. The files of common/ex/ include this, not score.h, so imports
 * inside the room run one way: score.c -> tie.c -> strict.c -> compare.c. */
#ifndef SX_EX_TYPES_H
#define SX_EX_TYPES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SX_ANSWER_ORDINARY = 0,
    SX_ANSWER_ANY_ONE_ARGMAX,
    SX_ANSWER_ANY_K_FROM_TIE_SET,
} sx_answer_kind_t;

typedef struct {
    long *condition_cols; /* gold column indexes; NULL/0 = all gold columns */
    size_t condition_count;
    bool ignore_order;
    sx_answer_kind_t kind;
    long k;              /* any_k_from_tie_set */
    long mandatory_rows; /* any_k_from_tie_set */
} sx_evaluation_t;

typedef enum {
    SX_PROFILE_SPIDER2_LITE_2025_11 = 0, /* default: NaN replaced by 0 */
    SX_PROFILE_SPIDER2_LITE_2025_03,     /* NaN pairs equal, NaN kept */
} sx_profile_t;

#endif
