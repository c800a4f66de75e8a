/* Firmware example for the Wishbone cipher peripheral (amaranth-cipher-cores).
 *
 * Encrypts a message with AES-128 in CBC mode by polling, then shows an interrupt handler that
 * drains results, then AES-GCM (a peripheral built with gcm=True): encryption with its tag, and
 * decryption checked against an expected tag. Uses only the generated header; compile-checked by tests/test_regmap.py with
 * `gcc -fsyntax-only`. Byte order: KEY and IV word i hold bits 32i+31..32i of the big-endian
 * integer (so KEY3 holds key bytes 0..3 for AES-128); DIN/DOUT carry a block most significant
 * word first (bytes 4j..4j+3 in word j, big-endian). */

#include <stddef.h>
#include <stdint.h>

#include "cipher_wishbone.h"

#define CIPHER_BASE 0x80000000u   /* where the SoC maps the peripheral */

#ifndef CIPHER_HOST_REGISTERS   /* a host test (tests/test_wishbone_gcm.py) brings its own */
static inline void reg_write(uint32_t offset, uint32_t value)
{
    *(volatile uint32_t *)(uintptr_t)(CIPHER_BASE + offset) = value;
}

static inline uint32_t reg_read(uint32_t offset)
{
    return *(volatile uint32_t *)(uintptr_t)(CIPHER_BASE + offset);
}
#endif

static uint32_t load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Write an n_words-word big-endian value (key or IV) into consecutive registers. */
static void write_words(uint32_t first_register, const uint8_t *bytes, unsigned n_words)
{
    for (unsigned i = 0; i < n_words; i++)
        reg_write(first_register + 4u * i, load_be32(bytes + 4u * (n_words - 1u - i)));
}

/* Encrypt `blocks` 16-byte blocks from `in` to `out` with AES-128-CBC. Returns 0, or the ERROR
 * register if the peripheral refused something. */
int cipher_cbc_encrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in,
                       uint8_t *out, size_t blocks)
{
    uint32_t words = (reg_read(CIPHER_INFO) & CIPHER_INFO_BLOCK_WORDS_MASK)
                     >> CIPHER_INFO_BLOCK_WORDS_SHIFT;      /* 4 for AES */
    size_t written = 0, read = 0;

    while (reg_read(CIPHER_STATUS) & CIPHER_STATUS_BUSY_MASK)
        ;
    write_words(CIPHER_KEY, key, 4);                     /* any order: key, IV, length... */
    write_words(CIPHER_IV, iv, 4);
    reg_write(CIPHER_LENGTH, (uint32_t)blocks);
    reg_write(CIPHER_CTRL, (CIPHER_CTRL_MODE_CBC << CIPHER_CTRL_MODE_SHIFT)
                           | (0u << CIPHER_CTRL_KEYSEL_SHIFT)
                           | CIPHER_CTRL_START_MASK);     /* ...START last */
    if (reg_read(CIPHER_ERROR) != 0)
        return (int)reg_read(CIPHER_ERROR);

    while (read < blocks) {
        uint32_t status = reg_read(CIPHER_STATUS);
        if (written < blocks && (status & CIPHER_STATUS_IN_SPACE_MASK)) {
            for (uint32_t j = 0; j < words; j++)
                reg_write(CIPHER_DIN, load_be32(in + 16u * written + 4u * j));
            written++;
        }
        if (status & CIPHER_STATUS_OUT_READY_MASK) {
            for (uint32_t j = 0; j < words; j++)
                store_be32(out + 16u * read + 4u * j, reg_read(CIPHER_DOUT));
            read++;
        }
    }
    return 0;
}

/* Interrupt-driven draining: enable "output ready", and read a block per interrupt. */
static uint8_t *volatile irq_out;
static volatile size_t irq_left;

void cipher_irq_handler(void)
{
    uint32_t pending = reg_read(CIPHER_IRQ_PENDING);
    if (pending & CIPHER_IRQ_PENDING_OUT_READY_MASK) {
        for (unsigned j = 0; j < 4; j++)
            store_be32(irq_out + 4u * j, reg_read(CIPHER_DOUT));
        irq_out += 16;
        if (--irq_left == 0)
            reg_write(CIPHER_IRQ_ENABLE, 0);
    }
    if (pending & CIPHER_IRQ_PENDING_ERROR_MASK)
        reg_write(CIPHER_ERROR, reg_read(CIPHER_ERROR));   /* write 1 to clear */
}

void cipher_start_irq(uint8_t *out, size_t blocks)
{
    irq_out = out;
    irq_left = blocks;
    reg_write(CIPHER_IRQ_ENABLE, CIPHER_IRQ_ENABLE_OUT_READY_MASK | CIPHER_IRQ_ENABLE_ERROR_MASK);
}

/* Forget the key, IV and all data (zeroize), e.g. before handing the peripheral to another task. */
void cipher_zeroize(void)
{
    reg_write(CIPHER_CTRL, CIPHER_CTRL_CLEAR_MASK);
    while (reg_read(CIPHER_STATUS) & CIPHER_STATUS_BUSY_MASK)
        ;
}

/* --- AES-GCM (peripheral built with gcm=True: INFO.MODES bit 5) --------------------------- */

/* Word j (0..3) of 16-byte block `block` of `data` (`length` bytes): big-endian, zero beyond the
 * end (the peripheral ignores the bytes past AAD_BYTES or TEXT_BYTES). */
static uint32_t padded_word(const uint8_t *data, uint32_t length, uint32_t block, uint32_t j)
{
    uint32_t word = 0;
    for (uint32_t k = 0; k < 4u; k++) {
        uint32_t at = 16u * block + 4u * j + k;
        word = (word << 8) | (at < length ? data[at] : 0u);
    }
    return word;
}

/* One GCM message with the key already in KEY0..KEY3: `aad_length` bytes of AAD and `length`
 * bytes of text from `in` to `out` (any lengths; both go through DIN in whole blocks, AAD first).
 * Encrypting, `tag` receives the 16-byte tag. Decrypting, `tag` holds the expected tag's first
 * `tag_length` bytes (4 to 16); the plaintext is written to `out` before the tag can be checked,
 * so on a mismatch (return -1) the caller must discard it. Returns 0, -1 (tag mismatch) or the
 * ERROR register if the peripheral refused something. */
int cipher_gcm(const uint8_t iv[12], const uint8_t *aad, uint32_t aad_length,
               const uint8_t *in, uint8_t *out, uint32_t length, int decrypt,
               uint8_t tag[16], uint32_t tag_length)
{
    uint32_t aad_blocks = (aad_length + 15u) / 16u, text_blocks = (length + 15u) / 16u;
    uint32_t written = 0, read = 0, status;

    if (!(reg_read(CIPHER_INFO) & (1u << (CIPHER_INFO_MODES_SHIFT + CIPHER_CTRL_MODE_GCM))))
        return (int)CIPHER_ERROR_UNSUPPORTED_MASK;                  /* built without GCM */
    while (reg_read(CIPHER_STATUS) & CIPHER_STATUS_BUSY_MASK)
        ;
    /* The 96-bit IV in IV3..IV1 (IV bytes 0..3 in IV3); IV0 is not used. */
    for (uint32_t i = 0; i < 3u; i++)
        reg_write(CIPHER_IV_WORD(3u - i), load_be32(iv + 4u * i));
    reg_write(CIPHER_AAD_BYTES, aad_length);
    reg_write(CIPHER_TEXT_BYTES, length);
    if (decrypt)
        for (uint32_t i = 0; i < 4u; i++)
            reg_write(CIPHER_TAG_EXPECTED_WORD(3u - i), padded_word(tag, tag_length, 0, i));
    reg_write(CIPHER_CTRL, (CIPHER_CTRL_MODE_GCM << CIPHER_CTRL_MODE_SHIFT)
                           | (decrypt ? CIPHER_CTRL_DECRYPT_MASK : 0u)
                           | ((tag_length % 16u) << CIPHER_CTRL_TAG_BYTES_SHIFT)   /* 0: 16 */
                           | CIPHER_CTRL_START_MASK);
    if (reg_read(CIPHER_ERROR) != 0)
        return (int)reg_read(CIPHER_ERROR);

    /* AAD blocks then text blocks in; a result block out per text block. */
    while (read < text_blocks || written < aad_blocks + text_blocks) {
        status = reg_read(CIPHER_STATUS);
        if (written < aad_blocks + text_blocks && (status & CIPHER_STATUS_IN_SPACE_MASK)) {
            for (uint32_t j = 0; j < 4u; j++)
                reg_write(CIPHER_DIN, written < aad_blocks
                          ? padded_word(aad, aad_length, written, j)
                          : padded_word(in, length, written - aad_blocks, j));
            written++;
        }
        if (read < text_blocks && (status & CIPHER_STATUS_OUT_READY_MASK)) {
            for (uint32_t j = 0; j < 4u; j++) {
                uint32_t word = reg_read(CIPHER_DOUT);
                for (uint32_t k = 0; k < 4u; k++)
                    if (16u * read + 4u * j + k < length)
                        out[16u * read + 4u * j + k] = (uint8_t)(word >> (24u - 8u * k));
            }
            read++;
        }
    }
    while (!((status = reg_read(CIPHER_STATUS)) & CIPHER_STATUS_TAG_READY_MASK))
        ;                                    /* or enable IRQ_ENABLE.TAG_READY and sleep */
    if (decrypt) {
        if (status & CIPHER_STATUS_AUTHENTIC_MASK)
            return 0;
        reg_write(CIPHER_ERROR, CIPHER_ERROR_AUTH_FAIL_MASK);       /* write 1 to clear */
        return -1;
    }
    for (uint32_t i = 0; i < 4u; i++)
        store_be32(tag + 4u * i, reg_read(CIPHER_TAG_WORD(3u - i)));
    return 0;
}
