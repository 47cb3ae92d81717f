/* SPDX-License-Identifier: BSD-2-Clause */
/* codec.c: snapshot framing, checksum and little-endian fields. */
#include "core/codec.h"

#include <assert.h>
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

/* ---- Writing ------------------------------------------------------------ */

/* A streaming save: the sink, its first refusal, the checksum so far. */
struct ebb_stream {
    ebb_save_sink sink;
    void *user;
    ebb_status status;
    uint64_t sent; /* bytes handed to the sink, checksum included */
    XXH3_state_t hash;
};

/* Hands bytes to the sink (nothing more once it has refused); hashed ones
 * are the body, the checksum itself is not. */
static void stream_emit(ebb_stream *s, const uint8_t *bytes, size_t len,
                        bool hashed)
{
    if (s->status != EBB_OK || len == 0)
        return;
    if (hashed)
        (void)XXH3_64bits_update(&s->hash, bytes, len);
    s->status = s->sink(s->user, bytes, len);
    s->sent += len;
}

/* Empties the stage into the sink. Only a streaming writer ever runs out of
 * room: an in-memory one was given the whole snapshot's size. */
static void writer_drain(ebb_writer *w)
{
    assert(w->stream != NULL);
    stream_emit(w->stream, w->start, (size_t)(w->at - w->start), true);
    w->at = w->start;
}

static void put(ebb_writer *w, uint64_t v, unsigned bytes)
{
    if ((size_t)(w->end - w->at) < bytes)
        writer_drain(w);
    store_le(w->at, v, bytes);
    w->at += bytes;
}

void ebb_put_u16(ebb_writer *w, uint16_t v) { put(w, v, 2); }
void ebb_put_u32(ebb_writer *w, uint32_t v) { put(w, v, 4); }
void ebb_put_u64(ebb_writer *w, uint64_t v) { put(w, v, 8); }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Words already in the format's byte order: a run that does not fit the
 * stage goes to the sink straight from the filter, in pieces no larger than
 * the stage, with no copy. */
static void stream_words(ebb_writer *w, const uint8_t *bytes, size_t len)
{
    writer_drain(w);
    size_t piece = (size_t)(w->end - w->start);
    for (size_t done = 0; done < len && w->stream->status == EBB_OK;) {
        size_t n = len - done < piece ? len - done : piece;
        stream_emit(w->stream, bytes + done, n, true);
        done += n;
    }
}

void ebb_put_words(ebb_writer *w, const uint64_t *words, size_t count)
{
    size_t len = count * 8u;
    if ((size_t)(w->end - w->at) < len) {
        stream_words(w, (const uint8_t *)words, len);
        return;
    }
    memcpy(w->at, words, len);
    w->at += len;
}
#else
void ebb_put_words(ebb_writer *w, const uint64_t *words, size_t count)
{
    for (size_t i = 0; i < count; i++)
        put(w, words[i], 8);
}
#endif

static void put_header(ebb_writer *w, const ebb_frame_head *head)
{
    put(w, load_le(magic, sizeof magic), sizeof magic);
    ebb_put_u16(w, EBB_FORMAT_VERSION);
    ebb_put_u16(w, head->family);
    ebb_put_u32(w, 0); /* flags */
    ebb_put_u32(w, head->param_len);
    ebb_put_u64(w, (uint64_t)head->total);
    ebb_put_u64(w, head->seed);
}

void ebb_frame_save(const ebb_frame_head *head, ebb_put_fields put_fields,
                    const void *filter, void *buf)
{
    ebb_writer w = {buf, buf, (uint8_t *)buf + head->total, NULL};
    put_header(&w, head);
    put_fields(&w, filter);
    /* The fields filled everything but the checksum. */
    assert((size_t)(w.end - w.at) == EBB_FRAME_TRAILER);
    ebb_put_u64(&w, XXH3_64bits(w.start, (size_t)(w.at - w.start)));
}

ebb_status ebb_frame_stream(const ebb_frame_head *head,
                            ebb_put_fields put_fields, const void *filter,
                            ebb_save_sink sink, void *user)
{
    uint8_t stage[EBB_SAVE_PIECE_MAX];
    ebb_stream stream;
    stream.sink = sink;
    stream.user = user;
    stream.status = EBB_OK;
    stream.sent = 0;
    XXH3_INITSTATE(&stream.hash);
    (void)XXH3_64bits_reset(&stream.hash);
    ebb_writer w = {stage, stage, stage + sizeof stage, &stream};
    put_header(&w, head);
    put_fields(&w, filter);
    writer_drain(&w);
    uint8_t sum[EBB_FRAME_TRAILER];
    store_le(sum, XXH3_64bits_digest(&stream.hash), sizeof sum);
    stream_emit(&stream, sum, sizeof sum, false);
    assert(stream.status != EBB_OK || stream.sent == head->total);
    return stream.status;
}

/* ---- Reading ------------------------------------------------------------ */

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
