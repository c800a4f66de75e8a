/*
 * aes_soft.c - software AES-128 encryption (FIPS-197), 32-bit T-table implementation.
 *
 * The software baseline for the speed comparison with the AES hardware peripheral, so it is the
 * classic fast formulation rather than a byte-by-byte one: a round is 16 look-ups in four
 * 256-entry word tables plus the round key, the state held as four big-endian column words
 * (FIPS-197 5.1, column c is in[4c..4c+3] with in[4c] in the top byte).
 *
 * NOT constant-time: the look-ups are indexed by secret-dependent bytes. A benchmark only.
 *
 * The tables are not typed in: aes128_soft_init() derives them from the definitions.
 *   - S-box (FIPS-197 5.1.1): S(b) = A(b^-1) + 0x63, the multiplicative inverse in GF(2^8) modulo
 *     x^8 + x^4 + x^3 + x + 1 (0 maps to 0), then the affine map A, which XORs b with its four
 *     left rotations.
 *   - Te0[x] is the MixColumns matrix column (2, 1, 1, 3) times S(x): the contribution of byte x
 *     in row 0 to a whole output column after SubBytes and MixColumns. Rows 1..3 use the same
 *     products rotated, so Te1..Te3 are Te0 rotated right by 8, 16 and 24 bits.
 * They live in .bss (4 KiB + 256 bytes) instead of .rodata because they are computed at run time;
 * init cost does not matter for the per-block benchmark.
 */
#include "aes_soft.h"

static uint8_t sbox[256];
static uint32_t te0[256], te1[256], te2[256], te3[256];

/* Multiplication by x in GF(2^8): shift, and reduce by x^8 = x^4 + x^3 + x + 1 (0x1b). */
static uint8_t xtime(uint8_t a)
{
    return (uint8_t)((a << 1) ^ ((a & 0x80u) ? 0x1bu : 0x00u));
}

/* Multiplication in GF(2^8), shift-and-add over the bits of b (FIPS-197 4.2). */
static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    uint8_t product = 0;
    while (b != 0) {
        if (b & 1u)
            product ^= a;
        a = xtime(a);
        b >>= 1;
    }
    return product;
}

/* The multiplicative inverse: a^254, since a^255 = 1 for a != 0; and 0^254 = 0, the value
 * FIPS-197 assigns to the inverse of 0. */
static uint8_t gf_inverse(uint8_t a)
{
    uint8_t result = 1;
    uint8_t power = a;               /* a^(2^i) */
    unsigned exponent = 254;
    while (exponent != 0) {
        if (exponent & 1u)
            result = gf_mul(result, power);
        power = gf_mul(power, power);
        exponent >>= 1;
    }
    return result;
}

static uint8_t rotl8(uint8_t b, unsigned n)
{
    return (uint8_t)((b << n) | (b >> (8 - n)));
}

static uint32_t rotr32(uint32_t w, unsigned n)
{
    return (w >> n) | (w << (32 - n));
}

void aes128_soft_init(void)
{
    unsigned x;
    for (x = 0; x < 256; x++) {
        uint8_t inv = gf_inverse((uint8_t)x);
        uint8_t s = (uint8_t)(inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^ rotl8(inv, 3) ^ rotl8(inv, 4)
                              ^ 0x63u);
        uint8_t s2 = xtime(s);
        uint8_t s3 = (uint8_t)(s2 ^ s);
        uint32_t t = ((uint32_t)s2 << 24) | ((uint32_t)s << 16) | ((uint32_t)s << 8) | s3;
        sbox[x] = s;
        te0[x] = t;
        te1[x] = rotr32(t, 8);
        te2[x] = rotr32(t, 16);
        te3[x] = rotr32(t, 24);
    }
}

/* Byte string <-> big-endian word, byte by byte: the source may be unaligned and the CPU is
 * little-endian, so a plain word access would be neither legal nor in the right order. */
static uint32_t load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void store_be32(uint8_t *p, uint32_t w)
{
    p[0] = (uint8_t)(w >> 24);
    p[1] = (uint8_t)(w >> 16);
    p[2] = (uint8_t)(w >> 8);
    p[3] = (uint8_t)w;
}

/* SubWord(RotWord(w)) of FIPS-197 5.2 in one step: the S-box applied to w rotated left by 8. */
static uint32_t sub_rot_word(uint32_t w)
{
    return ((uint32_t)sbox[(w >> 16) & 0xff] << 24) | ((uint32_t)sbox[(w >> 8) & 0xff] << 16)
         | ((uint32_t)sbox[w & 0xff] << 8) | sbox[w >> 24];
}

void aes128_soft_expand_key(aes128_soft_key *ks, const uint8_t key[16])
{
    uint32_t *w = ks->round_key;
    uint8_t rcon = 0x01;             /* x^(i-1) in GF(2^8) for round i */
    unsigned i;
    for (i = 0; i < 4; i++)
        w[i] = load_be32(key + 4 * i);
    for (i = 4; i < 44; i += 4) {
        w[i] = w[i - 4] ^ sub_rot_word(w[i - 1]) ^ ((uint32_t)rcon << 24);
        w[i + 1] = w[i - 3] ^ w[i];
        w[i + 2] = w[i - 2] ^ w[i + 1];
        w[i + 3] = w[i - 1] ^ w[i + 2];
        rcon = xtime(rcon);
    }
}

/* One inner round (SubBytes, ShiftRows, MixColumns, AddRoundKey) for output column c: ShiftRows
 * takes row r of the output column from input column c + r, so each table reads its byte from
 * the next column along. */
#define ROUND_COLUMN(s0, s1, s2, s3, k) \
    (te0[(s0) >> 24] ^ te1[((s1) >> 16) & 0xff] ^ te2[((s2) >> 8) & 0xff] ^ te3[(s3) & 0xff] ^ (k))

/* The last round has no MixColumns: the plain S-box bytes, in the same ShiftRows pattern. */
#define FINAL_COLUMN(s0, s1, s2, s3, k) \
    ((((uint32_t)sbox[(s0) >> 24] << 24) | ((uint32_t)sbox[((s1) >> 16) & 0xff] << 16) \
      | ((uint32_t)sbox[((s2) >> 8) & 0xff] << 8) | (uint32_t)sbox[(s3) & 0xff]) ^ (k))

/* The cipher on a state already XORed with round key 0; shared by ECB and CBC so that CBC keeps
 * its chaining value in registers instead of going through bytes. */
static void encrypt_state(const uint32_t *rk, uint32_t s[4])
{
    uint32_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
    uint32_t t0, t1, t2, t3;
    unsigned round;
    for (round = 1; round < 10; round++) {
        rk += 4;
        t0 = ROUND_COLUMN(s0, s1, s2, s3, rk[0]);
        t1 = ROUND_COLUMN(s1, s2, s3, s0, rk[1]);
        t2 = ROUND_COLUMN(s2, s3, s0, s1, rk[2]);
        t3 = ROUND_COLUMN(s3, s0, s1, s2, rk[3]);
        s0 = t0; s1 = t1; s2 = t2; s3 = t3;
    }
    rk += 4;
    s[0] = FINAL_COLUMN(s0, s1, s2, s3, rk[0]);
    s[1] = FINAL_COLUMN(s1, s2, s3, s0, rk[1]);
    s[2] = FINAL_COLUMN(s2, s3, s0, s1, rk[2]);
    s[3] = FINAL_COLUMN(s3, s0, s1, s2, rk[3]);
}

void aes128_soft_encrypt(const aes128_soft_key *ks, const uint8_t in[16], uint8_t out[16])
{
    uint32_t s[4];
    unsigned c;
    /* All of `in` is read before `out` is written, so in == out works. */
    for (c = 0; c < 4; c++)
        s[c] = load_be32(in + 4 * c) ^ ks->round_key[c];
    encrypt_state(ks->round_key, s);
    for (c = 0; c < 4; c++)
        store_be32(out + 4 * c, s[c]);
}

void aes128_soft_cbc_encrypt(const aes128_soft_key *ks, const uint8_t iv[16],
                             const uint8_t *in, uint8_t *out, size_t blocks)
{
    uint32_t chain[4];               /* the previous ciphertext block, C[-1] = IV */
    unsigned c;
    for (c = 0; c < 4; c++)
        chain[c] = load_be32(iv + 4 * c);
    while (blocks-- != 0) {
        for (c = 0; c < 4; c++)
            chain[c] ^= load_be32(in + 4 * c) ^ ks->round_key[c];
        encrypt_state(ks->round_key, chain);
        for (c = 0; c < 4; c++)
            store_be32(out + 4 * c, chain[c]);
        in += 16;
        out += 16;
    }
}
