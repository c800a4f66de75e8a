/* Firmware kit: the cipher peripheral's driver (see cipher.h). */
#include "cipher.h"
#include "soc.h"

#define REG(offset) (SOC_PERIPHERAL_BASE + (offset))

static uint32_t block_words = 4;      /* from INFO, set by cipher_init */
static uint32_t has_dma;              /* INFO.DMA, set by cipher_init */
static uint32_t key_sizes[4];

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

static void wait_idle(void)
{
    while (soc_read(REG(CIPHER_STATUS)) & CIPHER_STATUS_BUSY_MASK)
        ;
}

/* An error the peripheral flagged: returned, and cleared (write 1 to clear). */
static int take_error(void)
{
    uint32_t error = soc_read(REG(CIPHER_ERROR));
    if (error)
        soc_write(REG(CIPHER_ERROR), error);
    return (int)error;
}

int cipher_init(cipher_info *info)
{
    soc_write(REG(CIPHER_CTRL), CIPHER_CTRL_CLEAR_MASK);
    wait_idle();
    uint32_t built = soc_read(REG(CIPHER_INFO)), sizes = soc_read(REG(CIPHER_KEYSIZES));
    block_words = (built & CIPHER_INFO_BLOCK_WORDS_MASK) >> CIPHER_INFO_BLOCK_WORDS_SHIFT;
    has_dma = (built & CIPHER_INFO_DMA_MASK) != 0;
    for (unsigned k = 0; k < 4; k++)
        key_sizes[k] = (sizes >> (8u * k)) & 0xffu;
    if (info) {
        info->block_bytes = 4u * block_words;
        info->modes = (built & CIPHER_INFO_MODES_MASK) >> CIPHER_INFO_MODES_SHIFT;
        info->decrypts = (built & CIPHER_INFO_DECRYPTS_MASK) >> CIPHER_INFO_DECRYPTS_SHIFT;
        info->fifo_words = (built & CIPHER_INFO_FIFO_WORDS_MASK) >> CIPHER_INFO_FIFO_WORDS_SHIFT;
        info->dma = has_dma;
        for (unsigned k = 0; k < 4; k++)
            info->key_bytes[k] = key_sizes[k];
    }
    return take_error();
}

static int keysel_of(uint32_t key_bytes)
{
    for (int k = 0; k < 4; k++)
        if (key_sizes[k] && key_sizes[k] == key_bytes)
            return k;
    return CIPHER_E_KEY_SIZE;
}

static uint32_t current_keysel;

/* Bits 32i+31..32i of the big-endian number `bytes` of `length` bytes (the layout of the KEY
 * and IV registers: the last four bytes go into word 0; an 80-bit key fills 2.5 words). */
static uint32_t number_word(const uint8_t *bytes, uint32_t length, uint32_t i)
{
    uint32_t word = 0;
    for (uint32_t k = 0; k < 4u; k++) {
        uint32_t from_end = 4u * i + k;
        if (from_end < length)
            word |= (uint32_t)bytes[length - 1u - from_end] << (8u * k);
    }
    return word;
}

static int write_key(const uint8_t *key, uint32_t key_bytes)
{
    int keysel = keysel_of(key_bytes);
    if (keysel < 0)
        return keysel;
    for (uint32_t i = 0; i < (key_bytes + 3u) / 4u; i++)
        soc_write(REG(CIPHER_KEY_WORD(i)), number_word(key, key_bytes, i));
    current_keysel = (uint32_t)keysel;
    return CIPHER_OK;
}

/* Keep the input FIFO fed and the output FIFO drained, a block at a time, until `count` words
 * have come back. Pointers step by a block; an AES block's four words are copied without a
 * loop. (Every instruction counts here: the CPU, not the core, sets the pace.) */
static void copy_words(const uint32_t *from, uint32_t *to, uint32_t count)
{
    const uint32_t words = block_words;
    const uint32_t *const in_end = from + count;
    uint32_t *const out_end = to + count;
    volatile uint32_t *const din = (volatile uint32_t *)(uintptr_t)REG(CIPHER_DIN);
    volatile uint32_t *const dout = (volatile uint32_t *)(uintptr_t)REG(CIPHER_DOUT);
    while (to != out_end) {
        uint32_t status = soc_read(REG(CIPHER_STATUS));
        if (from != in_end && (status & CIPHER_STATUS_IN_SPACE_MASK)) {
            if (words == 4u) {
                din[0] = from[0];
                din[0] = from[1];
                din[0] = from[2];
                din[0] = from[3];
                from += 4;
            } else {
                for (uint32_t j = 0; j < words; j++)
                    din[0] = *from++;
            }
        }
        if (status & CIPHER_STATUS_OUT_READY_MASK) {
            if (words == 4u) {
                to[0] = dout[0];
                to[1] = dout[0];
                to[2] = dout[0];
                to[3] = dout[0];
                to += 4;
            } else {
                for (uint32_t j = 0; j < words; j++)
                    *to++ = dout[0];
            }
        }
    }
}

/* blocks * block_words without a multiplication where a shift does (RV32I multiplies in
 * software). */
static uint32_t words_in(uint32_t blocks)
{
    switch (block_words) {
    case 4u: return blocks << 2;
    case 2u: return blocks << 1;
    default: return blocks * block_words;
    }
}

/* The same for buffers that are not word-aligned, in the peripheral's big-endian order. */
static void copy_bytes(const uint8_t *from, uint8_t *to, uint32_t blocks)
{
    const uint32_t words = block_words;
    uint32_t to_write = blocks, to_read = blocks;
    while (to_read) {
        uint32_t status = soc_read(REG(CIPHER_STATUS));
        if (to_write && (status & CIPHER_STATUS_IN_SPACE_MASK)) {
            for (uint32_t j = 0; j < words; j++, from += 4)
                soc_write(REG(CIPHER_DIN), load_be32(from));
            to_write--;
        }
        if (status & CIPHER_STATUS_OUT_READY_MASK) {
            for (uint32_t j = 0; j < words; j++, to += 4)
                store_be32(to, soc_read(REG(CIPHER_DOUT)));
            to_read--;
        }
    }
}

/* What a message through DIN/DOUT and one through the DMA both begin with: the length
 * checked, the peripheral idle, the key (if given) and the IV (if given) written. */
static int prepare(const uint8_t *key, uint32_t key_bytes, const uint8_t *iv, uint32_t blocks)
{
    const uint32_t words = block_words, bytes = 4u * words;
    if (blocks > 0xffffu)
        return CIPHER_E_LENGTH;
    wait_idle();
    if (key) {
        int status = write_key(key, key_bytes);
        if (status != CIPHER_OK)
            return status;
    }
    if (iv)
        for (uint32_t i = 0; i < words; i++)
            soc_write(REG(CIPHER_IV_WORD(i)), number_word(iv, bytes, i));
    return CIPHER_OK;
}

int cipher_run(uint32_t mode, const uint8_t *key, uint32_t key_bytes, const uint8_t *iv,
               const uint8_t *in, uint8_t *out, uint32_t blocks)
{
    int status = prepare(key, key_bytes, iv, blocks);
    if (status != CIPHER_OK)
        return status;
    /* Word-aligned buffers are copied a word at a time, the peripheral ordering the bytes
     * (CTRL.LITTLE_ENDIAN); others a byte at a time. */
    int aligned = (((uintptr_t)in | (uintptr_t)out) & 3u) == 0;
    soc_write(REG(CIPHER_LENGTH), blocks);
    soc_write(REG(CIPHER_CTRL), (mode & (CIPHER_CTRL_MODE_MASK | CIPHER_CTRL_DECRYPT_MASK))
                                | (current_keysel << CIPHER_CTRL_KEYSEL_SHIFT)
                                | (aligned ? CIPHER_CTRL_LITTLE_ENDIAN_MASK : 0u)
                                | CIPHER_CTRL_START_MASK);
    int error = take_error();
    if (error & CIPHER_ERROR_UNSUPPORTED_MASK)
        return CIPHER_E_MODE;
    if (error)
        return error;
    if (aligned)
        copy_words((const uint32_t *)(const void *)in, (uint32_t *)(void *)out,
                   words_in(blocks));
    else
        copy_bytes(in, out, blocks);
    return take_error();
}

int cipher_run_dma(uint32_t mode, const uint8_t *key, uint32_t key_bytes, const uint8_t *iv,
                   const uint8_t *in, uint8_t *out, uint32_t blocks)
{
    if (!has_dma)
        return CIPHER_E_MODE;
    if (blocks == 0)        /* nothing to move: a key load, say */
        return cipher_run(mode, key, key_bytes, iv, in, out, 0);
    int status = prepare(key, key_bytes, iv, blocks);
    if (status != CIPHER_OK)
        return status;
    soc_write(REG(CIPHER_LENGTH), blocks);
    /* RAM addresses are the CPU's (the DMA sees the same bus); the peripheral checks their
     * alignment. Memory words hold the bytes as a little-endian CPU loads them. */
    soc_write(REG(CIPHER_DMA_SOURCE), (uint32_t)(uintptr_t)in);
    soc_write(REG(CIPHER_DMA_DESTINATION), (uint32_t)(uintptr_t)out);
    /* Whatever the compiler keeps of `in` in registers must be in RAM before the DMA reads. */
    __asm__ volatile("" ::: "memory");
    soc_write(REG(CIPHER_CTRL), (mode & (CIPHER_CTRL_MODE_MASK | CIPHER_CTRL_DECRYPT_MASK))
                                | (current_keysel << CIPHER_CTRL_KEYSEL_SHIFT)
                                | CIPHER_CTRL_LITTLE_ENDIAN_MASK | CIPHER_CTRL_DMA_MASK
                                | CIPHER_CTRL_START_MASK);
    int error = take_error();
    if (error & CIPHER_ERROR_DMA_ALIGN_MASK)
        return CIPHER_E_DMA_ALIGN;
    if (error & CIPHER_ERROR_UNSUPPORTED_MASK)
        return CIPHER_E_MODE;
    if (error)
        return error;
    /* DONE rises as the last result reaches RAM; a failed access leaves the peripheral busy
     * with ERROR.DMA_BUS until CLEAR. */
    for (;;) {
        uint32_t status = soc_read(REG(CIPHER_STATUS));
        if (status & CIPHER_STATUS_DONE_MASK)
            break;
        if ((status & CIPHER_STATUS_ERROR_MASK) &&
            (soc_read(REG(CIPHER_ERROR)) & CIPHER_ERROR_DMA_BUS_MASK)) {
            soc_write(REG(CIPHER_CTRL), CIPHER_CTRL_CLEAR_MASK);
            wait_idle();
            return CIPHER_E_DMA_BUS;
        }
    }
    __asm__ volatile("" ::: "memory");  /* `out` was written behind the compiler's back */
    return take_error();
}

/* Word j of 16-byte block `block` of `data` (`length` bytes), zero past the end. */
static uint32_t padded_word(const uint8_t *data, uint32_t length, uint32_t block, uint32_t j)
{
    uint32_t at = 16u * block + 4u * j;
    if (at + 4u <= length)
        return load_be32(data + at);
    uint32_t word = 0;
    for (uint32_t k = 0; k < 4u; k++, at++)
        word = (word << 8) | (at < length ? data[at] : 0u);
    return word;
}

static int gcm(const uint8_t *key, uint32_t key_bytes, const uint8_t iv[12], const uint8_t *aad,
               uint32_t aad_length, const uint8_t *in, uint8_t *out, uint32_t length,
               int decrypt, const uint8_t *expected, uint32_t tag_length, uint8_t *tag)
{
    uint32_t aad_blocks = (aad_length + 15u) / 16u, text_blocks = (length + 15u) / 16u;
    uint32_t written = 0, read = 0, status;
    if (!(soc_read(REG(CIPHER_INFO)) & (1u << (CIPHER_INFO_MODES_SHIFT + CIPHER_CTRL_MODE_GCM))))
        return CIPHER_E_MODE;
    if (tag_length < 4u || tag_length > 16u)
        return CIPHER_E_LENGTH;
    wait_idle();
    if (key) {
        int result = write_key(key, key_bytes);
        if (result != CIPHER_OK)
            return result;
    }
    /* The 96-bit IV in IV3..IV1 (IV bytes 0..3 in IV3); IV0 is not used. */
    for (uint32_t i = 0; i < 3u; i++)
        soc_write(REG(CIPHER_IV_WORD(3u - i)), load_be32(iv + 4u * i));
    soc_write(REG(CIPHER_AAD_BYTES), aad_length);
    soc_write(REG(CIPHER_TEXT_BYTES), length);
    if (decrypt)
        for (uint32_t i = 0; i < 4u; i++)
            soc_write(REG(CIPHER_TAG_EXPECTED_WORD(3u - i)),
                      padded_word(expected, tag_length, 0, i));
    soc_write(REG(CIPHER_CTRL), (CIPHER_CTRL_MODE_GCM << CIPHER_CTRL_MODE_SHIFT)
                                | (decrypt ? CIPHER_CTRL_DECRYPT_MASK : 0u)
                                | (current_keysel << CIPHER_CTRL_KEYSEL_SHIFT)
                                | ((tag_length % 16u) << CIPHER_CTRL_TAG_BYTES_SHIFT)
                                | CIPHER_CTRL_START_MASK);
    int error = take_error();
    if (error)
        return error;

    while (read < text_blocks || written < aad_blocks + text_blocks) {
        status = soc_read(REG(CIPHER_STATUS));
        if (written < aad_blocks + text_blocks && (status & CIPHER_STATUS_IN_SPACE_MASK)) {
            for (uint32_t j = 0; j < 4u; j++)
                soc_write(REG(CIPHER_DIN), written < aad_blocks
                          ? padded_word(aad, aad_length, written, j)
                          : padded_word(in, length, written - aad_blocks, j));
            written++;
        }
        if (read < text_blocks && (status & CIPHER_STATUS_OUT_READY_MASK)) {
            for (uint32_t j = 0; j < 4u; j++) {
                uint32_t word = soc_read(REG(CIPHER_DOUT));
                for (uint32_t k = 0, at = 16u * read + 4u * j; k < 4u; k++, at++)
                    if (at < length)
                        out[at] = (uint8_t)(word >> (24u - 8u * k));
            }
            read++;
        }
    }
    while (!((status = soc_read(REG(CIPHER_STATUS))) & CIPHER_STATUS_TAG_READY_MASK))
        ;
    if (decrypt) {
        if (status & CIPHER_STATUS_AUTHENTIC_MASK)
            return take_error();
        take_error();                   /* AUTH_FAIL: cleared, reported as CIPHER_E_AUTH */
        for (uint32_t i = 0; i < length; i++)
            out[i] = 0;
        return CIPHER_E_AUTH;
    }
    for (uint32_t i = 0; i < 4u; i++)
        store_be32(tag + 4u * i, soc_read(REG(CIPHER_TAG_WORD(3u - i))));
    return take_error();
}

int cipher_gcm_seal(const uint8_t *key, uint32_t key_bytes, const uint8_t iv[12],
                    const uint8_t *aad, uint32_t aad_length, const uint8_t *in, uint8_t *out,
                    uint32_t length, uint8_t tag[16])
{
    return gcm(key, key_bytes, iv, aad, aad_length, in, out, length, 0, 0, 16u, tag);
}

int cipher_gcm_open(const uint8_t *key, uint32_t key_bytes, const uint8_t iv[12],
                    const uint8_t *aad, uint32_t aad_length, const uint8_t *in, uint8_t *out,
                    uint32_t length, const uint8_t *tag, uint32_t tag_length)
{
    return gcm(key, key_bytes, iv, aad, aad_length, in, out, length, 1, tag, tag_length, 0);
}
