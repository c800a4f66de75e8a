/* Firmware kit: a driver for the cipher peripheral (registers in cipher_wishbone.h and
 * docs/wishbone.md), by polling.
 *
 * Byte order: keys, IVs and blocks are byte strings as the standards print them (FIPS-197,
 * SP 800-38A, the GCM specification; for PRESENT the block b63..b0 and key k79..k0 as big-endian
 * bytes). The driver turns them into the peripheral's words.
 *
 * Return values: CIPHER_OK (0); a negative CIPHER_E_* code; or, if the peripheral refused a
 * command, its ERROR register (positive: CIPHER_ERROR_*_MASK bits), cleared afterwards. */
#ifndef CIPHER_H
#define CIPHER_H

#include <stddef.h>
#include <stdint.h>

#include "cipher_wishbone.h"
#include "soc_map.h"

#define CIPHER_OK            0
#define CIPHER_E_AUTH      (-1)   /* GCM decryption: the tag did not match (output discarded) */
#define CIPHER_E_KEY_SIZE  (-2)   /* no KEYSEL has this key size */
#define CIPHER_E_MODE      (-3)   /* this peripheral was built without the mode or direction */
#define CIPHER_E_LENGTH    (-4)   /* too many blocks for LENGTH, or a bad tag length */
#define CIPHER_E_DMA_ALIGN (-5)   /* DMA: a buffer not word-aligned (ERROR.DMA_ALIGN) */
#define CIPHER_E_DMA_BUS   (-6)   /* DMA: an access ended with err (ERROR.DMA_BUS); the
                                   * peripheral was cleared: the key must be given again */

/* `mode` of cipher_run: a CTRL.MODE value, with CIPHER_DECRYPT added to decrypt. */
#define CIPHER_ECB      CIPHER_CTRL_MODE_ECB
#define CIPHER_CBC      CIPHER_CTRL_MODE_CBC
#define CIPHER_CFB      CIPHER_CTRL_MODE_CFB
#define CIPHER_OFB      CIPHER_CTRL_MODE_OFB
#define CIPHER_CTR      CIPHER_CTRL_MODE_CTR
#define CIPHER_DECRYPT  CIPHER_CTRL_DECRYPT_MASK

/* What the peripheral was built with (INFO and KEYSIZES). */
typedef struct {
    uint32_t block_bytes;      /* 16 (AES) or 8 (PRESENT) */
    uint32_t modes;            /* bit m set: CTRL.MODE m is available (bit 5: GCM) */
    uint32_t decrypts;         /* bit k set: KEYSEL k decrypts in ECB and CBC */
    uint32_t fifo_words;       /* depth of each data FIFO */
    uint32_t dma;              /* 1: built with the DMA master (cipher_run_dma) */
    uint32_t key_bytes[4];     /* key size of each KEYSEL, 0 if none */
} cipher_info;

/* Zeroize the peripheral (CTRL.CLEAR: key, IV, data) and read what it was built with into
 * `info` (may be NULL). Call once before the others. */
int cipher_init(cipher_info *info);

/* Encrypt or decrypt `blocks` blocks from `in` to `out` (may be the same buffer) in `mode`
 * (CIPHER_ECB ... CIPHER_CTR, plus CIPHER_DECRYPT). `key` holds `key_bytes` bytes, or is NULL
 * to keep the key of the last call (no key load). `iv` is the IV or initial counter block
 * (ignored in ECB; may be NULL there). At most 65535 blocks a call. */
int cipher_run(uint32_t mode, const uint8_t *key, uint32_t key_bytes, const uint8_t *iv,
               const uint8_t *in, uint8_t *out, uint32_t blocks);

/* The same through the peripheral's DMA master (a peripheral built with it: info.dma): the
 * peripheral reads the message from RAM at `in` and writes the results to RAM at `out` (both
 * word-aligned, else CIPHER_E_DMA_ALIGN; they may be equal: in place) while the CPU polls
 * STATUS.DONE. Returns CIPHER_E_MODE without a DMA; CIPHER_E_DMA_BUS if an access failed. */
int cipher_run_dma(uint32_t mode, const uint8_t *key, uint32_t key_bytes, const uint8_t *iv,
                   const uint8_t *in, uint8_t *out, uint32_t blocks);

/* AES-GCM (a peripheral built with GCM: info.modes bit 5), any lengths, 96-bit IV.
 * seal: encrypt `length` bytes from `in` to `out` with `aad_length` bytes of AAD; the 16-byte
 * tag goes to `tag`. open: decrypt and check the first `tag_length` bytes (4 to 16) of `tag`;
 * returns CIPHER_E_AUTH on a mismatch, after overwriting `out` with zeros. `key` may be NULL
 * to keep the last key. */
int cipher_gcm_seal(const uint8_t *key, uint32_t key_bytes, const uint8_t iv[12],
                    const uint8_t *aad, uint32_t aad_length, const uint8_t *in, uint8_t *out,
                    uint32_t length, uint8_t tag[16]);
int cipher_gcm_open(const uint8_t *key, uint32_t key_bytes, const uint8_t iv[12],
                    const uint8_t *aad, uint32_t aad_length, const uint8_t *in, uint8_t *out,
                    uint32_t length, const uint8_t *tag, uint32_t tag_length);

#endif
