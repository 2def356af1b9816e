/*
 * crucible_impl.c - an example third-party implementation of the crucible-spec wire protocol.
 *
 * It reads one JSON request per line on stdin and writes exactly one JSON response per line on
 * stdout (flushed after each), and exits 0 at end of input:
 *
 *   {"id": 1, "op": "hash.fmix64", "args": {"x": "0x1"}}
 *   {"id":1,"ok":true,"result":{"out":"0xb456bcfc34c2cb2c"}}
 *
 * It implements the chapter 2 / chapter 8 ops listed in OPS below, in plain C11 with no
 * dependency beyond libc. Build:
 *
 *   cc -std=c11 -O2 -Wall -Wextra -pedantic -o crucible_impl crucible_impl.c
 *
 * Build with -DPLANTED_BUG to get a deliberately wrong FNV prime, which the conformance runner
 * should catch (fnv1a, schema, scope and shape hashes then differ from the spec).
 *
 * The file reads top to bottom: constants, hash primitives, line input, a small JSON reader
 * (validate once, then walk the validated text), argument decoding, the ops, the main loop.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Constants of the spec (all arithmetic is modulo 2^64). */

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#ifdef PLANTED_BUG
#define FNV_PRIME UINT64_C(0x100000001b5) /* deliberately wrong: the spec says ...1b3 */
#else
#define FNV_PRIME UINT64_C(0x100000001b3)
#endif
#define PHI UINT64_C(0x9e3779b97f4a7c15)
#define FMIX64_C1 UINT64_C(0xff51afd7ed558ccd)
#define FMIX64_C2 UINT64_C(0xc4ceb9fe1a85ec53)
#define KDIMMIX_COUNT 16
#define MAX_SHAPE_NDIM 255 /* the C API carries each tensor's ndim as one byte */
#define MAX_DEPTH 1000     /* deeper JSON nesting is refused as bad_request */

static const char BAD_REQUEST[] = "bad_request";
static const char INVALID_INPUT[] = "invalid_input";
static const char UNSUPPORTED[] = "unsupported";

/* ==== Hash primitives. */

/* MurmurHash3's 64-bit finalizer. */
static uint64_t fmix64(uint64_t k) {
    k ^= k >> 33; k *= FMIX64_C1;
    k ^= k >> 33; k *= FMIX64_C2;
    return k ^ (k >> 33);
}

/* High 64 bits of the 128-bit product a * b, from 32-bit limbs (no __int128 in ISO C). */
static uint64_t mul_hi64(uint64_t a, uint64_t b) {
    const uint64_t mask = UINT64_C(0xffffffff);
    uint64_t a_lo = a & mask, a_hi = a >> 32;
    uint64_t b_lo = b & mask, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, lo_hi = a_lo * b_hi;
    uint64_t hi_lo = a_hi * b_lo, hi_hi = a_hi * b_hi;
    uint64_t middle = (lo_lo >> 32) + (lo_hi & mask) + (hi_lo & mask); /* cannot overflow */
    return hi_hi + (lo_hi >> 32) + (hi_lo >> 32) + (middle >> 32);
}

/* wyhash's 'mum' step: low and high halves of the full product, XORed. */
static uint64_t wymix(uint64_t a, uint64_t b) {
    return (a * b) ^ mul_hi64(a, b);
}

/* FNV-1a 64 of n bytes, continuing from state h. */
static uint64_t fnv1a(uint64_t h, const unsigned char *bytes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* ==== A growable byte buffer, for input lines and decoded JSON strings. */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static void buf_push(Buf *b, char c) {
    if (b->len + 1 >= b->cap) { /* always keep room for a terminating NUL */
        size_t cap = b->cap ? 2 * b->cap : 256;
        char *data = realloc(b->data, cap);
        if (!data) {
            fputs("crucible_impl: out of memory\n", stderr);
            exit(1);
        }
        b->data = data;
        b->cap = cap;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

/* Empties b (allocating it if needed), leaving it a NUL-terminated empty string. */
static void buf_clear(Buf *b) {
    buf_push(b, '\0');
    b->len = 0;
}

/* Reads one line (without its '\n') into `line`; false at end of input. */
static bool read_line(Buf *line) {
    int c;
    buf_clear(line);
    while ((c = getchar()) != EOF) {
        if (c == '\n')
            return true;
        buf_push(line, (char)c);
    }
    return line->len > 0; /* a last line without '\n' still counts */
}

/* ==== UTF-8: a line must be valid UTF-8 (as strict as Python's decoder), and is stripped of
 * leading and trailing whitespace the way the reference server does it (Python str.strip). */

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 if it is not valid. */
static size_t utf8_sequence(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;       /* no overlong forms */
        if (c == 0xed) hi = 0x9f;       /* no UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;       /* no overlong forms */
        if (c == 0xf4) hi = 0x8f;       /* nothing past U+10FFFF */
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

static bool utf8_valid(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence(p + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

/* The code point of the (valid) UTF-8 sequence at p. */
static uint32_t utf8_decode(const unsigned char *p, size_t *len) {
    static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    size_t n = p[0] < 0x80 ? 1 : p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
    uint32_t cp = p[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        cp = (cp << 6) | (p[i] & 0x3f);
    *len = n;
    return cp;
}

/* Whitespace as Python's str.isspace() sees it. */
static bool is_py_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
           cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Narrows [*start, *end) of valid UTF-8 to drop leading and trailing whitespace. */
static void strip(unsigned char **start, unsigned char **end) {
    size_t len;
    while (*start < *end && is_py_space(utf8_decode(*start, &len)))
        *start += len;
    while (*start < *end) {
        unsigned char *last = *end - 1;
        while ((*last & 0xc0) == 0x80) /* back to the first byte of the last character */
            last--;
        if (!is_py_space(utf8_decode(last, &len)))
            break;
        *end = last;
    }
}

/* ==== JSON, part 1: validation. The whole request is checked once against the JSON grammar
 * (RFC 8259); afterwards the code walks the text, which it can then trust. The text is
 * NUL-terminated, and a NUL is never valid JSON, so an embedded NUL simply fails. */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Each parse_* takes p at the start of a token and returns the end of it, or NULL. */
static const char *parse_value(const char *p, int depth);

static const char *parse_string(const char *p) {
    for (p++; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) /* raw control character, or the end of the text */
            return NULL;
        if (*p != '\\')
            continue;
        p++;
        if (*p == 'u') {
            for (int i = 1; i <= 4; i++)
                if (hex_value(p[i]) < 0)
                    return NULL;
            p += 4;
        } else if (*p == '\0' || !strchr("\"\\/bfnrt", *p))
            return NULL;
    }
    return p + 1;
}

static const char *parse_digits(const char *p) {
    if (!is_digit(*p))
        return NULL;
    while (is_digit(*p))
        p++;
    return p;
}

static const char *parse_number(const char *p) {
    if (*p == '-')
        p++;
    if (*p == '0')
        p++; /* no leading zeros */
    else if (!(p = parse_digits(p)))
        return NULL;
    if (*p == '.' && !(p = parse_digits(p + 1)))
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = parse_digits(p);
    }
    return p;
}

/* Object or array: open, then values (objects: "key": value) separated by ',', then close. */
static const char *parse_container(const char *p, int depth) {
    char close = *p == '{' ? '}' : ']';
    if (depth >= MAX_DEPTH)
        return NULL;
    p = skip_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (*p != '"' || !(p = parse_string(p)))
                return NULL;
            p = skip_ws(p);
            if (*p != ':')
                return NULL;
            p = skip_ws(p + 1);
        }
        if (!(p = parse_value(p, depth + 1)))
            return NULL;
        p = skip_ws(p);
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = skip_ws(p + 1);
    }
}

static const char *parse_value(const char *p, int depth) {
    switch (*p) {
    case '{':
    case '[': return parse_container(p, depth);
    case '"': return parse_string(p);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return parse_number(p);
    }
}

/* True if [text, end) is exactly one JSON value (with optional whitespace around it). */
static bool json_valid(const char *text, const char *end) {
    const char *p = parse_value(skip_ws(text), 0);
    return p && skip_ws(p) == end;
}

/* ==== JSON, part 2: walking validated text. A "value" is a pointer to its first character. */

typedef enum { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STRING, J_ARRAY, J_OBJECT } Kind;

static const char *skip_value(const char *v) { return parse_value(v, 0); }

static Kind kind_of(const char *v) {
    switch (*v) {
    case '{': return J_OBJECT;
    case '[': return J_ARRAY;
    case '"': return J_STRING;
    case 't':
    case 'f': return J_BOOL;
    case 'n': return J_NULL;
    default:
        for (const char *end = parse_number(v); v < end; v++)
            if (*v == '.' || *v == 'e' || *v == 'E')
                return J_FLOAT;
        return J_INT;
    }
}

/* Next item of an array: start with *cur at '['; false when there are no more. */
static bool next_item(const char **cur, const char **item) {
    const char *p = skip_ws(*cur);
    if (*p == ']' || *(p = skip_ws(p + 1)) == ']') /* p + 1: past '[' or ',' */
        return false;
    *item = p;
    *cur = skip_value(p);
    return true;
}

/* Next member of an object: start with *cur at '{'; false when there are no more. */
static bool next_member(const char **cur, const char **key, const char **value) {
    const char *p = skip_ws(*cur);
    if (*p == '}' || *(p = skip_ws(p + 1)) == '}') /* p + 1: past '{' or ',' */
        return false;
    *key = p;
    p = skip_ws(parse_string(p)); /* at ':' */
    *value = skip_ws(p + 1);
    *cur = skip_value(*value);
    return true;
}

/* A decoded JSON string: UTF-8 bytes, with what a text argument must refuse flagged. */
typedef struct {
    Buf bytes;
    bool has_nul;        /* contains U+0000 */
    bool lone_surrogate; /* contains an unpaired \uD800-\uDFFF escape */
} Text;

/* Appends code point cp as UTF-8 (a lone surrogate too: it is flagged, never hashed). */
static void push_utf8(Buf *b, uint32_t cp) {
    static const unsigned char lead[] = {0, 0x00, 0xc0, 0xe0, 0xf0};
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    buf_push(b, (char)(lead[n] | cp >> (6 * (n - 1))));
    for (int i = n - 2; i >= 0; i--)
        buf_push(b, (char)(0x80 | ((cp >> (6 * i)) & 0x3f)));
}

static uint32_t hex4(const char *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 4 | (uint32_t)hex_value(p[i]);
    return v;
}

/* Decodes the validated string at p (at its opening quote) into t, resolving all escapes. */
static void decode_string(const char *p, Text *t) {
    static const char plain[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";
    buf_clear(&t->bytes);
    t->has_nul = t->lone_surrogate = false;
    for (p++; *p != '"'; p++) {
        if (*p != '\\') {
            buf_push(&t->bytes, *p);
        } else if (*++p != 'u') {
            buf_push(&t->bytes, meant[strchr(plain, *p) - plain]);
        } else {
            uint32_t cp = hex4(p + 1);
            p += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && p[1] == '\\' && p[2] == 'u' &&
                hex4(p + 3) >= 0xdc00 && hex4(p + 3) <= 0xdfff) { /* a surrogate pair */
                cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(p + 3) - 0xdc00);
                p += 6;
            } else if (cp >= 0xd800 && cp <= 0xdfff) {
                t->lone_surrogate = true;
            }
            t->has_nul |= cp == 0;
            push_utf8(&t->bytes, cp);
        }
    }
}

static Text key_text, value_text; /* scratch buffers, reused for every request */

/* True if the string at `key` decodes to exactly `name`. */
static bool key_is(const char *key, const char *name) {
    decode_string(key, &key_text);
    return key_text.bytes.len == strlen(name) && memcmp(key_text.bytes.data, name,
                                                        key_text.bytes.len) == 0;
}

/* The value of member `name` of an object (the last one if repeated), or NULL. */
static const char *member(const char *object, const char *name) {
    const char *cur = object, *key, *value, *found = NULL;
    while (next_member(&cur, &key, &value))
        if (key_is(key, name))
            found = value;
    return found;
}

/* ==== Errors: a code from the spec's taxonomy and a short message. */

typedef struct {
    const char *code;
    char message[160];
} Error;

/* Records an error about `what` (e.g. "args.x") and returns false, for `return fail(...)`. */
static bool fail(Error *e, const char *code, const char *what, const char *problem) {
    e->code = code;
    snprintf(e->message, sizeof e->message, "%s: %s", what, problem);
    return false;
}

/* ==== Argument decoding. Integers come as a JSON integer (any size) or as a "0x" hex string;
 * the wrong form is bad_request, a value that does not fit the width is invalid_input. */

/* An integer read from the wire: sign and magnitude, or 'too big' if |value| >= 2^64. */
typedef struct {
    bool negative, too_big, from_hex;
    uint64_t magnitude;
} Wide;

static void wide_add_digit(Wide *w, unsigned base, unsigned digit) {
    if (w->magnitude > (UINT64_MAX - digit) / base)
        w->too_big = true;
    else
        w->magnitude = w->magnitude * base + digit;
}

/* Reads an integer value; false (bad_request) if it is not one of the two integer forms. */
static bool read_wide(const char *v, const char *what, Wide *w, Error *e) {
    memset(w, 0, sizeof *w);
    if (kind_of(v) == J_INT) {
        w->negative = *v == '-';
        for (const char *p = v + w->negative; is_digit(*p); p++)
            wide_add_digit(w, 10, (unsigned)(*p - '0'));
        w->negative &= w->magnitude != 0 || w->too_big; /* -0 is 0 */
        return true;
    }
    if (kind_of(v) != J_STRING)
        return fail(e, BAD_REQUEST, what, "expected an integer or a '0x' hex string");
    decode_string(v, &value_text);
    const char *s = value_text.bytes.data;
    size_t n = value_text.bytes.len;
    if (n < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return fail(e, BAD_REQUEST, what, "expected an integer or a '0x' hex string");
    for (size_t i = 2; i < n; i++) {
        if (hex_value(s[i]) < 0)
            return fail(e, BAD_REQUEST, what, "not a hex digit after '0x'");
        wide_add_digit(w, 16, (unsigned)hex_value(s[i]));
    }
    w->from_hex = true;
    return true;
}

/* An unsigned integer of `bits` (8..64) bits. */
static bool decode_unsigned(const char *v, const char *what, unsigned bits, uint64_t *out,
                            Error *e) {
    Wide w;
    uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    if (!read_wide(v, what, &w, e))
        return false;
    if (w.negative || w.too_big || w.magnitude > max)
        return fail(e, INVALID_INPUT, what, "does not fit the unsigned width");
    *out = w.magnitude;
    return true;
}

/* A signed integer of `bits` (8..64) bits; a hex string is its two's-complement pattern. */
static bool decode_signed(const char *v, const char *what, unsigned bits, int64_t *out,
                          Error *e) {
    Wide w;
    uint64_t half = UINT64_C(1) << (bits - 1); /* 2^(bits-1) */
    if (!read_wide(v, what, &w, e))
        return false;
    if (w.from_hex) {
        if (w.too_big || (bits < 64 && w.magnitude >> bits) != 0)
            return fail(e, INVALID_INPUT, what, "hex pattern wider than the signed width");
        if (w.magnitude < half)
            *out = (int64_t)w.magnitude;
        else if (bits == 64) /* 2^64 - m, computed without overflow */
            *out = -(int64_t)(~w.magnitude) - 1;
        else
            *out = (int64_t)w.magnitude - (int64_t)(half << 1);
        return true;
    }
    if (w.too_big || w.magnitude > (w.negative ? half : half - 1))
        return fail(e, INVALID_INPUT, what, "does not fit the signed width");
    if (!w.negative)
        *out = (int64_t)w.magnitude;
    else /* -magnitude, where magnitude may be 2^63 */
        *out = w.magnitude == half && bits == 64 ? INT64_MIN : -(int64_t)w.magnitude;
    return true;
}

/* A text argument: a string (decoded to UTF-8, no NUL, no lone surrogate) or null. */
static bool decode_text(const char *v, const char *what, bool *is_null, Error *e) {
    *is_null = kind_of(v) == J_NULL;
    if (*is_null)
        return true;
    if (kind_of(v) != J_STRING)
        return fail(e, BAD_REQUEST, what, "expected a string or null");
    decode_string(v, &value_text);
    if (value_text.has_nul)
        return fail(e, INVALID_INPUT, what, "a C string cannot contain NUL");
    if (value_text.lone_surrogate)
        return fail(e, INVALID_INPUT, what, "not encodable as UTF-8 (lone surrogate)");
    return true;
}

/* A byte string: hex digits, two per byte, optionally after "0x". Decoded in place. */
static bool decode_bytes(const char *v, const char *what, Buf *out, Error *e) {
    if (kind_of(v) != J_STRING)
        return fail(e, BAD_REQUEST, what, "expected a hex byte string");
    decode_string(v, &value_text);
    char *s = value_text.bytes.data;
    size_t n = value_text.bytes.len;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2, n -= 2;
    if (n % 2 != 0)
        return fail(e, BAD_REQUEST, what, "hex byte string must have two digits per byte");
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return fail(e, BAD_REQUEST, what, "not a hex byte string");
        value_text.bytes.data[i / 2] = (char)(hi << 4 | lo); /* overwrites what was read */
    }
    *out = value_text.bytes;
    out->len = n / 2;
    return true;
}

/* Checks the args object has no member outside `names` (a NULL-terminated list). */
static bool only_fields(const char *args, const char *const *names, Error *e) {
    const char *cur = args, *key, *value;
    while (next_member(&cur, &key, &value)) {
        bool known = false;
        for (const char *const *name = names; *name && !known; name++)
            known = key_is(key, *name);
        if (!known)
            return fail(e, BAD_REQUEST, "args", "unknown field");
    }
    return true;
}

/* The value of a required field, or bad_request. */
static bool field(const char *args, const char *name, const char **value, Error *e) {
    static char what[64];
    snprintf(what, sizeof what, "args.%s", name);
    *value = member(args, name);
    return *value ? true : fail(e, BAD_REQUEST, what, "missing field");
}

/* ==== The ops. Each checks its args (fields in the listed order) and writes its result object. */

typedef bool (*OpFn)(const char *args, char *result, size_t cap, Error *e);

static bool hash_result(uint64_t h, char *result, size_t cap) {
    snprintf(result, cap, "{\"out\":\"0x%016" PRIx64 "\"}", h);
    return true;
}

/* Bytes per element of a ScalarType ordinal (int8); -1 is Undefined. */
static bool op_element_size(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"dtype", NULL};
    static const struct { int ordinal, size; } table[] = {
        {0, 1}, {1, 1}, {2, 2}, {3, 4}, {4, 8}, {5, 2}, {6, 4}, {7, 8}, {8, 4}, {9, 8},
        {10, 16}, {11, 1}, {15, 2}, {23, 1}, {24, 1}, {25, 1}, {26, 1}, {-1, 0},
    };
    const char *v;
    int64_t dtype;
    if (!only_fields(args, names, e) || !field(args, "dtype", &v, e) ||
        !decode_signed(v, "args.dtype", 8, &dtype, e))
        return false;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].ordinal == dtype) {
            snprintf(result, cap, "{\"element_size\":%d}", table[i].size);
            return true;
        }
    }
    return fail(e, INVALID_INPUT, "args.dtype", "not a ScalarType ordinal");
}

static bool op_fmix64(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"x", NULL};
    const char *v;
    uint64_t x;
    if (!only_fields(args, names, e) || !field(args, "x", &v, e) ||
        !decode_unsigned(v, "args.x", 64, &x, e))
        return false;
    return hash_result(fmix64(x), result, cap);
}

static bool op_wymix(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"a", "b", NULL};
    const char *va, *vb;
    uint64_t a, b;
    if (!only_fields(args, names, e) || !field(args, "a", &va, e) ||
        !decode_unsigned(va, "args.a", 64, &a, e) || !field(args, "b", &vb, e) ||
        !decode_unsigned(vb, "args.b", 64, &b, e))
        return false;
    return hash_result(wymix(a, b), result, cap);
}

static bool op_fnv1a(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"data", NULL};
    const char *v;
    Buf data;
    if (!only_fields(args, names, e) || !field(args, "data", &v, e) ||
        !decode_bytes(v, "args.data", &data, e))
        return false;
    return hash_result(fnv1a(FNV_OFFSET, (const unsigned char *)data.data, data.len), result, cap);
}

/* kDimMix[index] = (index + 1) * PHI, for index 0..15. */
static bool op_kdimmix(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"index", NULL};
    const char *v;
    uint64_t index;
    if (!only_fields(args, names, e) || !field(args, "index", &v, e) ||
        !decode_unsigned(v, "args.index", 8, &index, e))
        return false;
    if (index >= KDIMMIX_COUNT)
        return fail(e, INVALID_INPUT, "args.index", "kDimMix has 16 entries");
    return hash_result((index + 1) * PHI, result, cap);
}

/* SchemaHash and ScopeHash: FNV-1a of the UTF-8 text, or 0 for null. */
static bool text_hash(const char *args, const char *name, char *result, size_t cap, Error *e) {
    const char *names[] = {name, NULL}, *v;
    char what[32];
    bool is_null;
    snprintf(what, sizeof what, "args.%s", name);
    if (!only_fields(args, names, e) || !field(args, name, &v, e) ||
        !decode_text(v, what, &is_null, e))
        return false;
    if (is_null)
        return hash_result(0, result, cap);
    Buf *b = &value_text.bytes;
    return hash_result(fnv1a(FNV_OFFSET, (const unsigned char *)b->data, b->len), result, cap);
}

static bool op_schema(const char *args, char *result, size_t cap, Error *e) {
    return text_hash(args, "name", result, cap, e);
}

static bool op_scope(const char *args, char *result, size_t cap, Error *e) {
    return text_hash(args, "path", result, cap, e);
}

/* Folds one tensor's sizes into the ShapeHash chain: ndim as one byte, then int64 LE sizes. */
static bool fold_tensor(const char *sizes, uint64_t *h, Error *e) {
    const char *cur = sizes, *item;
    size_t ndim = 0;
    if (kind_of(sizes) != J_ARRAY)
        return fail(e, BAD_REQUEST, "args.shapes[]", "expected a list of sizes");
    while (next_item(&cur, &item))
        ndim++;
    if (ndim > MAX_SHAPE_NDIM)
        return fail(e, INVALID_INPUT, "args.shapes[]", "more than 255 dimensions");
    unsigned char byte = (unsigned char)ndim;
    *h = fnv1a(*h, &byte, 1);
    for (cur = sizes; next_item(&cur, &item);) {
        int64_t size;
        unsigned char le[8];
        if (!decode_signed(item, "args.shapes[][]", 64, &size, e))
            return false;
        for (int i = 0; i < 8; i++)
            le[i] = (unsigned char)((uint64_t)size >> (8 * i));
        *h = fnv1a(*h, le, sizeof le);
    }
    return true;
}

/* ShapeHash: one FNV-1a chain over every input tensor, in argument order. */
static bool op_shape(const char *args, char *result, size_t cap, Error *e) {
    static const char *const names[] = {"shapes", NULL};
    const char *v, *cur, *sizes;
    uint64_t h = FNV_OFFSET;
    if (!only_fields(args, names, e) || !field(args, "shapes", &v, e))
        return false;
    if (kind_of(v) != J_ARRAY)
        return fail(e, BAD_REQUEST, "args.shapes", "expected a list of lists");
    for (cur = v; next_item(&cur, &sizes);)
        if (!fold_tensor(sizes, &h, e))
            return false;
    return hash_result(h, result, cap);
}

static const struct {
    const char *name;
    OpFn fn;
} OPS[] = {
    {"types.element_size", op_element_size},
    {"hash.fmix64", op_fmix64},
    {"hash.wymix", op_wymix},
    {"hash.fnv1a", op_fnv1a},
    {"hash.kdimmix", op_kdimmix},
    {"hash.schema", op_schema},
    {"hash.shape", op_shape},
    {"hash.scope", op_scope},
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

/* The hello result: who we are and which ops we answer. */
static void hello_result(char *result, size_t cap) {
    size_t n = (size_t)snprintf(result, cap, "{\"impl\":\"c-example\",\"profile\":\"crucible\","
                                "\"spec_version\":\"0.1.0\",\"ops\":[\"hello\"");
    for (size_t i = 0; i < N_OPS; i++)
        n += (size_t)snprintf(result + n, cap - n, ",\"%s\"", OPS[i].name);
    snprintf(result + n, cap - n, "],\"device\":\"cpu (c11)\"}");
}

/* ==== Requests and responses. */

/* Writes the id: the integer literal from the request (canonical: "-0" is 0), or null. */
static void print_id(const char *id) {
    if (!id)
        fputs("null", stdout);
    else if (strncmp(id, "-0", 2) == 0 && !is_digit(id[2]))
        fputs("0", stdout);
    else
        fwrite(id, 1, (size_t)(parse_number(id) - id), stdout);
}

static void respond_ok(const char *id, const char *result) {
    fputs("{\"id\":", stdout);
    print_id(id);
    printf(",\"ok\":true,\"result\":%s}\n", result);
    fflush(stdout);
}

/* Messages are our own ASCII text without quotes or backslashes, so need no escaping. */
static void respond_error(const char *id, const char *code, const char *message) {
    fputs("{\"id\":", stdout);
    print_id(id);
    printf(",\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", code, message);
    fflush(stdout);
}

/* Runs the op named by the decoded text in value_text on `args`. */
static void dispatch(const char *id, const char *args) {
    static char result[1024];
    Error e = {NULL, ""};
    const char *op = value_text.bytes.data;
    size_t len = value_text.bytes.len;
    if (len == 5 && memcmp(op, "hello", 5) == 0) {
        hello_result(result, sizeof result);
        respond_ok(id, result);
        return;
    }
    for (size_t i = 0; i < N_OPS; i++) {
        if (len == strlen(OPS[i].name) && memcmp(op, OPS[i].name, len) == 0) {
            if (OPS[i].fn(args, result, sizeof result, &e))
                respond_ok(id, result);
            else
                respond_error(id, e.code, e.message);
            return;
        }
    }
    respond_error(id, UNSUPPORTED, "this implementation does not have that op");
}

/* Checks the request envelope, in the order the protocol lists the rules. On success returns
 * NULL, with *id, *args set and the op name decoded into value_text; otherwise returns the
 * bad_request message, with *id set only once the id is known. */
static const char *check_request(const char *request, const char *end, const char **id,
                                 const char **args) {
    const char *op, *the_id;
    *id = NULL;
    if (!json_valid(request, end))
        return "not JSON";
    if (kind_of(request) != J_OBJECT)
        return "a request is a JSON object";
    the_id = member(request, "id");
    if (!the_id || kind_of(the_id) != J_INT)
        return "missing or non-integer 'id'";
    *id = the_id;
    op = member(request, "op");
    if (!op || kind_of(op) != J_STRING)
        return "missing or non-string 'op'";
    *args = member(request, "args");
    if (!*args || kind_of(*args) != J_OBJECT)
        return "missing 'args' object";
    decode_string(op, &value_text);
    return NULL;
}

/* Answers one input line (NUL-terminated at line[len]); blank lines get no answer. */
static void answer(char *line, size_t len) {
    unsigned char *start = (unsigned char *)line, *end = start + len;
    const char *id, *args, *problem;
    if (!utf8_valid(start, len)) {
        respond_error(NULL, BAD_REQUEST, "request is not UTF-8");
        return;
    }
    strip(&start, &end);
    if (start == end)
        return;
    *end = '\0';
    problem = check_request((const char *)start, (const char *)end, &id, &args);
    if (problem)
        respond_error(id, BAD_REQUEST, problem);
    else
        dispatch(id, args);
}

int main(void) {
    Buf line = {NULL, 0, 0};
    while (read_line(&line))
        answer(line.data, line.len);
    free(line.data);
    free(key_text.bytes.data);
    free(value_text.bytes.data);
    return 0;
}
