#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# gen-code-tables.py: prints the skip tables of src/core/codes.c (a reference
# decoder of each code run on every byte); run it and compare with the
# tables in codes.c after changing a code.
# Generates codes.c's skip tables: byte -> (complete codes << 4) | bits.
class Short(Exception): pass
def rd(bits, p):
    if p >= len(bits): raise Short
    return bits[p]
def gamma(bits, p):
    z = 0
    while rd(bits, p + z) == 0: z += 1
    v = 0
    for i in range(z + 1): v = v * 2 + rd(bits, p + z + i)
    return v - 1, 2 * z + 1
def delta(bits, p):
    lm1, h = gamma(bits, p); L = lm1 + 1
    v = 1
    for i in range(L - 1): v = v * 2 + rd(bits, p + h + i)
    return v - 1, h + L - 1
def steps(bits, p):
    if rd(bits, p) == 0: return 0, 1
    if rd(bits, p + 1) == 0: return 1, 2
    t, l = gamma(bits, p + 2); return t + 2, l + 2
# GAMMA skips by ctz (codes.c: skip_gamma), without a table.
for name, dec in (("delta", delta), ("steps", steps)):
    out = []
    for b in range(256):
        bits = [(b >> i) & 1 for i in range(8)]
        p = c = 0
        ends = 0
        try:
            while True:
                _, l = dec(bits, p); p += l; ends |= p << (4 * c); c += 1
        except Short:
            pass
        out.append(p | c << 4 | ends << 8)
    print("static const uint64_t %s_skip_table[256] = {" % name)
    for r in range(0, 256, 4):
        print("    " + ", ".join("0x%010x" % x for x in out[r:r + 4]) + ",")
    print("};")
