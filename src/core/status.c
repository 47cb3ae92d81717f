/* SPDX-License-Identifier: BSD-2-Clause */
/* status.c: status codes and their sentences, library version. */
#include "ebb/ebb.h"

static const char *const messages[EBB_ESTATUS_COUNT_] = {
    [EBB_OK] = "success",
    [EBB_EINVAL] = "invalid argument",
    [EBB_ENOMEM] = "out of memory",
    [EBB_EOVERFLOW] = "requested size is too large to address",
    [EBB_EBUFSIZE] = "output buffer too small",
    [EBB_EMAGIC] = "not an ebb snapshot (bad magic)",
    [EBB_EVERSION] = "snapshot written by a newer format version",
    [EBB_EFAMILY] = "snapshot is of another filter family",
    [EBB_ETRUNCATED] = "snapshot is truncated",
    [EBB_ECHECKSUM] = "snapshot checksum mismatch",
    [EBB_ECORRUPT] = "snapshot is corrupt (inconsistent fields)",
    [EBB_ELIMIT] = "the configured memory limit would be exceeded",
    [EBB_EUNDERFLOW] = "a removal would take a count below zero",
};

const char *ebb_strerror(ebb_status status)
{
    if ((unsigned)status >= (unsigned)EBB_ESTATUS_COUNT_)
        return "unknown ebb status";
    return messages[status];
}

unsigned ebb_version_number(void)
{
    return EBB_VERSION_NUMBER;
}

const char *ebb_version_string(void)
{
    return EBB_VERSION_STRING;
}
