/*
 * aes_soft.h - software AES-128 encryption (FIPS-197), 32-bit T-table implementation.
 *
 * The software baseline the AES hardware peripheral is compared against: the same job done by
 * the CPU alone (PicoRV32, RV32IM). Portable C99 for a bare-metal target: it needs only
 * <stdint.h> and <stddef.h> and calls no library function.
 *
 * NOT constant-time: the round function indexes tables with secret-dependent bytes, so its
 * timing and cache footprint leak the key. It is a benchmark, not for protecting secrets.
 *
 * Byte order is that of FIPS-197: keys and blocks are byte strings, in[0] is the first byte of
 * the block (the top-left byte of the state).
 */
#ifndef AES_SOFT_H
#define AES_SOFT_H

#include <stddef.h>
#include <stdint.h>

/* The expanded key: the 44 words w[0..43] of FIPS-197 5.2, each a big-endian column. */
typedef struct { uint32_t round_key[44]; } aes128_soft_key;

/* Builds the S-box and the T-tables once; call before anything else (calling again is harmless). */
void aes128_soft_init(void);

/* Key expansion of FIPS-197 5.2 for a 16-byte key. */
void aes128_soft_expand_key(aes128_soft_key *ks, const uint8_t key[16]);

/* Encrypts one 16-byte block; `in` and `out` may be the same buffer. */
void aes128_soft_encrypt(const aes128_soft_key *ks, const uint8_t in[16], uint8_t out[16]);

/* CBC encryption (NIST SP 800-38A 6.2) of `blocks` 16-byte blocks; in place allowed (out == in). */
void aes128_soft_cbc_encrypt(const aes128_soft_key *ks, const uint8_t iv[16],
                             const uint8_t *in, uint8_t *out, size_t blocks);

#endif /* AES_SOFT_H */
