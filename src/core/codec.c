/* SPDX-License-Identifier: BSD-2-Clause */
/* codec.c: snapshot framing, checksum and little-endian fields. */
#include "core/codec.h"

#include <string.h>

#include "core/hash.h"

static const uint8_t magic[4] = {0x45, 0x42, 0x42, 0x53}; /* "EBBS" */

static uint64_t load_le(const uint8_t *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = bytes; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

static void store_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

size_t ebb_frame_size(size_t param_len, size_t payload_len)
{
    size_t fixed = EBB_FRAME_HEADER + EBB_FRAME_TRAILER;
    if (param_len > SIZE_MAX - fixed)
        return 0;
    if (payload_len > SIZE_MAX - fixed - param_len)
        return 0;
    return fixed + param_len + payload_len;
}

ebb_writer ebb_frame_begin(void *buf, uint16_t family, uint32_t param_len,
                           size_t total, uint64_t seed)
{
    ebb_writer w = {buf, buf, (uint8_t *)buf + total};
    memcpy(w.at, magic, sizeof magic);
    w.at += sizeof magic;
    ebb_put_u16(&w, EBB_FORMAT_VERSION);
    ebb_put_u16(&w, family);
    ebb_put_u32(&w, 0); /* flags */
    ebb_put_u32(&w, param_len);
    ebb_put_u64(&w, (uint64_t)total);
    ebb_put_u64(&w, seed);
    return w;
}

void ebb_frame_end(ebb_writer *w)
{
    uint64_t sum = XXH3_64bits(w->start, (size_t)(w->at - w->start));
    ebb_put_u64(w, sum);
}

static ebb_status check_magic(const uint8_t *p, size_t len)
{
    size_t n = len < sizeof magic ? len : sizeof magic;
    if (memcmp(p, magic, n) != 0)
        return EBB_EMAGIC;
    return len < sizeof magic ? EBB_ETRUNCATED : EBB_OK;
}

ebb_status ebb_frame_open(const void *buf, size_t len, uint16_t family,
                          uint32_t param_len, ebb_frame *out)
{
    const uint8_t *p = buf;
    if (p == NULL)
        return len ? EBB_EINVAL : EBB_ETRUNCATED;
    ebb_status st = check_magic(p, len);
    if (st != EBB_OK)
        return st;
    if (len < EBB_FRAME_HEADER + EBB_FRAME_TRAILER)
        return EBB_ETRUNCATED;

    uint64_t version = load_le(p + 4, 2);
    if (version > EBB_FORMAT_VERSION)
        return EBB_EVERSION;
    if (version == 0)
        return EBB_ECORRUPT;
    if (load_le(p + 6, 2) != family)
        return EBB_EFAMILY;

    uint64_t total = load_le(p + 16, 8);
    if (total > len)
        return EBB_ETRUNCATED;
    if (total < len || total < EBB_FRAME_HEADER + EBB_FRAME_TRAILER)
        return EBB_ECORRUPT;
    size_t body = len - EBB_FRAME_TRAILER;
    if (XXH3_64bits(p, body) != load_le(p + body, 8))
        return EBB_ECHECKSUM;

    if (load_le(p + 8, 4) != 0)
        return EBB_ECORRUPT; /* no flags are defined in version 1 */
    if (load_le(p + 12, 4) != param_len ||
        param_len > body - EBB_FRAME_HEADER)
        return EBB_ECORRUPT;

    out->seed = load_le(p + 24, 8);
    out->params.at = p + EBB_FRAME_HEADER;
    out->params.end = out->params.at + param_len;
    out->payload.at = out->params.end;
    out->payload.end = p + body;
    return EBB_OK;
}

static void put(ebb_writer *w, uint64_t v, unsigned bytes)
{
    store_le(w->at, v, bytes);
    w->at += bytes;
}

void ebb_put_u16(ebb_writer *w, uint16_t v) { put(w, v, 2); }
void ebb_put_u32(ebb_writer *w, uint32_t v) { put(w, v, 4); }
void ebb_put_u64(ebb_writer *w, uint64_t v) { put(w, v, 8); }

void ebb_put_words(ebb_writer *w, const uint64_t *words, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(w->at, words, count * 8u);
    w->at += count * 8u;
#else
    for (size_t i = 0; i < count; i++)
        put(w, words[i], 8);
#endif
}

size_t ebb_reader_left(const ebb_reader *r)
{
    return (size_t)(r->end - r->at);
}

static bool get(ebb_reader *r, uint64_t *v, unsigned bytes)
{
    if (ebb_reader_left(r) < bytes)
        return false;
    *v = load_le(r->at, bytes);
    r->at += bytes;
    return true;
}

bool ebb_get_u16(ebb_reader *r, uint16_t *v)
{
    uint64_t x;
    if (!get(r, &x, 2))
        return false;
    *v = (uint16_t)x;
    return true;
}

bool ebb_get_u32(ebb_reader *r, uint32_t *v)
{
    uint64_t x;
    if (!get(r, &x, 4))
        return false;
    *v = (uint32_t)x;
    return true;
}

bool ebb_get_u64(ebb_reader *r, uint64_t *v)
{
    return get(r, v, 8);
}

bool ebb_get_words(ebb_reader *r, uint64_t *words, size_t count)
{
    if (count > ebb_reader_left(r) / 8u)
        return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(words, r->at, count * 8u);
    r->at += count * 8u;
#else
    for (size_t i = 0; i < count; i++)
        get(r, &words[i], 8);
#endif
    return true;
}
