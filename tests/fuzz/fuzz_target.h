/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_target.h: the libFuzzer entry point, declared once so that both the
 * harness and the replay driver see the same prototype.
 */
#ifndef EBB_TESTS_FUZZ_TARGET_H
#define EBB_TESTS_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* Checks the snapshot decoder's properties on one input; abort()s on a
 * violation, returns 0 otherwise (libFuzzer's convention). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* EBB_TESTS_FUZZ_TARGET_H */
