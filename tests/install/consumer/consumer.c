/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * consumer.c: a program that uses an installed libebb the way an outside
 * project would: only <ebb/ebb.h>, found through pkg-config or find_package.
 * Silent; exits 0 when the header and the linked library agree and a filter
 * works, a distinct non-zero code for each failure.
 */
#include <stdbool.h>
#include <string.h>

#include <ebb/ebb.h>

enum {
    CONSUMER_OK = 0,
    CONSUMER_VERSION_MISMATCH = 1,
    CONSUMER_PARAMS_FAILED = 2,
    CONSUMER_CREATE_FAILED = 3,
    CONSUMER_KEY_MISSING = 4
};

int main(void)
{
    if (ebb_version_number() != EBB_VERSION_NUMBER ||
        strcmp(ebb_version_string(), EBB_VERSION_STRING) != 0) {
        return CONSUMER_VERSION_MISMATCH;
    }
    ebb_apbf_params params;
    if (ebb_apbf_params_from_kl(4, 8, 1000, &params) != EBB_OK) {
        return CONSUMER_PARAMS_FAILED;
    }
    ebb_apbf *filter = NULL;
    if (ebb_apbf_create(&params, 42, &filter) != EBB_OK) {
        return CONSUMER_CREATE_FAILED;
    }
    ebb_apbf_add(filter, "installed", strlen("installed"));
    bool found = ebb_apbf_contains(filter, "installed", strlen("installed"));
    ebb_apbf_destroy(filter);
    return found ? CONSUMER_OK : CONSUMER_KEY_MISSING;
}
