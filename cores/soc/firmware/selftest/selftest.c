/* The SoC self-test firmware: runs the official vectors through the cipher peripheral in every
 * mode it was built with, checks an interrupt-driven message, measures cycles per block through
 * the bus for each mode (CPU-driven, polling) and, for AES, the software AES-128 of aes_soft.c
 * on the same CPU, then prints a summary line and exits with 0 only if every check passed.
 * A peripheral built with its DMA master (INFO.DMA) also runs every known answer through the
 * DMA (in place, in RAM), checks a misaligned buffer is refused and a message whose end the
 * DONE interrupt signals, and measures CBC encryption and CTR through the DMA.
 *
 * selftest_vectors.h is generated for the SoC's core by `cipher-cores soc firmware` (from the
 * NIST and paper vectors; see scripts/flow/firmware.py). Output, one line each:
 *   PASS <test> | FAIL <test>
 *   BENCH <mode> <blocks> blocks <cycles> cycles <cycles per block> cycles/block
 *   (through the DMA: "PASS DMA <test>", "BENCH DMA-<mode> ...")
 *   SUMMARY <core>: <passed>/<tests> passed; ... speed-up ...x; PASS|FAIL */
#include "../cipher.h"
#include "../soc.h"
#include "selftest_vectors.h"
#if SELFTEST_SOFTWARE_AES
#include "../aes_soft.h"
#endif

static unsigned tests, passed;

static void report(const char *name, int ok)
{
    tests++;
    passed += ok ? 1u : 0u;
    soc_printf("%s %s\n", ok ? "PASS" : "FAIL", name);
}

static int same(const uint8_t *a, const uint8_t *b, uint32_t length)
{
    uint32_t difference = 0;
    for (uint32_t i = 0; i < length; i++)
        difference |= (uint32_t)(a[i] ^ b[i]);
    return difference == 0;
}

/* Word-aligned: the driver copies words (and the DMA moves nothing else). */
static uint8_t buffer[SELFTEST_BUFFER_BYTES] __attribute__((aligned(4)));

static void run_case(const selftest_case *c)
{
    int status;
    if (c->kind == SELFTEST_GCM_SEAL) {
        uint8_t tag[16];
        status = cipher_gcm_seal(c->key, c->key_bytes, c->iv, c->aad, c->aad_length, c->in,
                                 buffer, c->length, tag);
        report(c->name, status == CIPHER_OK && same(buffer, c->expected, c->length) &&
                        same(tag, c->tag, c->tag_length));
    } else if (c->kind == SELFTEST_GCM_OPEN) {
        status = cipher_gcm_open(c->key, c->key_bytes, c->iv, c->aad, c->aad_length, c->in,
                                 buffer, c->length, c->tag, c->tag_length);
        if (c->expected == 0)           /* a forged tag: must be refused */
            report(c->name, status == CIPHER_E_AUTH);
        else
            report(c->name, status == CIPHER_OK && same(buffer, c->expected, c->length));
    } else {
        status = cipher_run(c->mode, c->key, c->key_bytes, c->iv, c->in, buffer,
                            c->length / SELFTEST_BLOCK_BYTES);
        report(c->name, status == CIPHER_OK && same(buffer, c->expected, c->length));
    }
}

/* The same case through the DMA, in place: the message is copied into `buffer`, which the
 * peripheral reads and overwrites with the results. */
static void run_case_dma(const selftest_case *c)
{
    static char name[160];
    char *to = name;
    for (const char *from = "DMA "; *from; )
        *to++ = *from++;
    for (const char *from = c->name; *from && to < name + sizeof name - 1; )
        *to++ = *from++;
    *to = 0;
    for (uint32_t i = 0; i < c->length; i++)
        buffer[i] = c->in[i];
    int status = cipher_run_dma(c->mode, c->key, c->key_bytes, c->iv, buffer, buffer,
                                c->length / SELFTEST_BLOCK_BYTES);
    report(name, status == CIPHER_OK && same(buffer, c->expected, c->length));
}

/* --- an interrupt-driven message: the handler drains each result block --------------------- */

static volatile uint32_t irq_blocks, irq_calls, irq_done;
static uint8_t *volatile irq_out;

void soc_irq_handler(uint32_t pending)
{
    irq_calls++;
    if (!(pending & (1u << SOC_PERIPHERAL_IRQ)))
        return;
    if (soc_read(SOC_PERIPHERAL_BASE + CIPHER_IRQ_PENDING) & CIPHER_IRQ_PENDING_DONE_MASK) {
        /* a DMA message has ended: the condition stays until the next START, so mask it */
        soc_write(SOC_PERIPHERAL_BASE + CIPHER_IRQ_ENABLE, 0);
        irq_done = 1;
        return;
    }
    while (soc_read(SOC_PERIPHERAL_BASE + CIPHER_IRQ_PENDING) & CIPHER_IRQ_PENDING_OUT_READY_MASK) {
        for (uint32_t j = 0; j < SELFTEST_BLOCK_BYTES / 4u; j++) {
            uint32_t word = soc_read(SOC_PERIPHERAL_BASE + CIPHER_DOUT);
            uint8_t *to = irq_out + 4u * j;
            to[0] = (uint8_t)(word >> 24);
            to[1] = (uint8_t)(word >> 16);
            to[2] = (uint8_t)(word >> 8);
            to[3] = (uint8_t)word;
        }
        irq_out += SELFTEST_BLOCK_BYTES;
        if (--irq_blocks == 0)
            soc_write(SOC_PERIPHERAL_BASE + CIPHER_IRQ_ENABLE, 0);
    }
}

/* ECB encryption of the first case's message: the CPU writes the blocks, the interrupt handler
 * reads the results. */
static void interrupt_test(const selftest_case *c)
{
    uint32_t blocks = c->length / SELFTEST_BLOCK_BYTES, words = SELFTEST_BLOCK_BYTES / 4u;
    for (uint32_t i = 0; i < c->length; i++)
        buffer[i] = 0;
    irq_out = buffer;
    irq_blocks = blocks;
    irq_calls = 0;
    /* Load the key with an empty message, then start the real one with interrupts on. */
    cipher_run(c->mode, c->key, c->key_bytes, c->iv, c->in, buffer, 0);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_LENGTH, blocks);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_CTRL, c->mode | CIPHER_CTRL_START_MASK);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_IRQ_ENABLE, CIPHER_IRQ_ENABLE_OUT_READY_MASK);
    soc_irq_unmask(1u << SOC_PERIPHERAL_IRQ);
    for (uint32_t b = 0; b < blocks; b++) {
        while (!(soc_read(SOC_PERIPHERAL_BASE + CIPHER_STATUS) & CIPHER_STATUS_IN_SPACE_MASK))
            ;
        for (uint32_t j = 0; j < words; j++) {
            const uint8_t *from = c->in + SELFTEST_BLOCK_BYTES * b + 4u * j;
            soc_write(SOC_PERIPHERAL_BASE + CIPHER_DIN, ((uint32_t)from[0] << 24) |
                      ((uint32_t)from[1] << 16) | ((uint32_t)from[2] << 8) | from[3]);
        }
    }
    uint32_t start = soc_cycles();
    while (irq_blocks && soc_cycles() - start < 100000u)
        ;
    soc_irq_mask(1u << SOC_PERIPHERAL_IRQ);
    report("interrupt: ECB results drained by the interrupt handler",
           irq_blocks == 0 && irq_calls > 0 && same(buffer, c->expected, c->length));
}

/* The first case's message through the DMA, started by hand, its end signalled by the DONE
 * interrupt while the CPU waits on a flag. */
static void dma_interrupt_test(const selftest_case *c)
{
    for (uint32_t i = 0; i < c->length; i++)
        buffer[i] = c->in[i];
    irq_done = 0;
    irq_calls = 0;
    cipher_run(c->mode, c->key, c->key_bytes, c->iv, c->in, buffer, 0);   /* key load */
    while (soc_read(SOC_PERIPHERAL_BASE + CIPHER_STATUS) & CIPHER_STATUS_BUSY_MASK)
        ;
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_LENGTH, c->length / SELFTEST_BLOCK_BYTES);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_DMA_SOURCE, (uint32_t)(uintptr_t)buffer);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_DMA_DESTINATION, (uint32_t)(uintptr_t)buffer);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_CTRL, c->mode | CIPHER_CTRL_LITTLE_ENDIAN_MASK |
              CIPHER_CTRL_DMA_MASK | CIPHER_CTRL_START_MASK);
    soc_write(SOC_PERIPHERAL_BASE + CIPHER_IRQ_ENABLE, CIPHER_IRQ_ENABLE_DONE_MASK);
    soc_irq_unmask(1u << SOC_PERIPHERAL_IRQ);
    uint32_t start = soc_cycles();
    while (!irq_done && soc_cycles() - start < 100000u)
        ;
    soc_irq_mask(1u << SOC_PERIPHERAL_IRQ);
    __asm__ volatile("" ::: "memory");
    report("DMA interrupt: DONE signals the results in RAM",
           irq_done && irq_calls > 0 && same(buffer, c->expected, c->length));
}

/* --- cycles per block ------------------------------------------------------------------------ */

static uint8_t bench_in[SELFTEST_BENCH_BLOCKS * SELFTEST_BLOCK_BYTES] __attribute__((aligned(4)));
static uint8_t bench_out[SELFTEST_BENCH_BLOCKS * SELFTEST_BLOCK_BYTES] __attribute__((aligned(4)));

/* Print cycles / blocks with one decimal; returns tenths of a cycle per block. */
static uint32_t bench_line(const char *what, uint32_t blocks, uint32_t cycles)
{
    uint32_t tenths = (10u * cycles + blocks / 2u) / blocks;
    soc_printf("BENCH %s %u blocks %u cycles %u.%u cycles/block\n", what, blocks, cycles,
               tenths / 10u, tenths % 10u);
    return tenths;
}

typedef int (*runner)(uint32_t, const uint8_t *, uint32_t, const uint8_t *, const uint8_t *,
                      uint8_t *, uint32_t);

/* Cycles per block of a message run by `run` (cipher_run, or cipher_run_dma: from the write of
 * CTRL to STATUS.DONE). The key is loaded before the clock starts: the figure is the per-block
 * rate. */
static uint32_t bench_with(const char *what, uint32_t mode, runner run)
{
    static const uint8_t iv[16] = {0};
    cipher_run(mode, SELFTEST_BENCH_KEY, SELFTEST_BENCH_KEY_BYTES, iv, bench_in, bench_out, 1);
    uint32_t start = soc_cycles();
    int status = run(mode, 0, 0, iv, bench_in, bench_out, SELFTEST_BENCH_BLOCKS);
    uint32_t cycles = soc_cycles() - start;
    if (status != CIPHER_OK) {
        report(what, 0);
        return 0;
    }
    return bench_line(what, SELFTEST_BENCH_BLOCKS, cycles);
}

static uint32_t bench_mode(const char *what, uint32_t mode)
{
    return bench_with(what, mode, cipher_run);
}

static uint32_t bench_dma(const char *what, uint32_t mode)
{
    return bench_with(what, mode, cipher_run_dma);
}

#if SELFTEST_GCM
static uint32_t bench_gcm(void)
{
    static const uint8_t iv[12] = {0};
    uint8_t tag[16];
    cipher_gcm_seal(SELFTEST_BENCH_KEY, SELFTEST_BENCH_KEY_BYTES, iv, 0, 0, bench_in, bench_out,
                    16, tag);
    uint32_t start = soc_cycles();
    int status = cipher_gcm_seal(0, 0, iv, 0, 0, bench_in, bench_out,
                                 16u * SELFTEST_BENCH_BLOCKS, tag);
    uint32_t cycles = soc_cycles() - start;
    if (status != CIPHER_OK) {
        report("GCM-seal benchmark", 0);
        return 0;
    }
    return bench_line("GCM-seal", SELFTEST_BENCH_BLOCKS, cycles);
}
#endif

#if SELFTEST_SOFTWARE_AES
static uint32_t bench_software(void)
{
    static aes128_soft_key schedule;
    static const uint8_t iv[16] = {0};
    aes128_soft_init();
    aes128_soft_expand_key(&schedule, SELFTEST_BENCH_KEY);
    /* The software must agree with the peripheral before its speed means anything. */
    aes128_soft_cbc_encrypt(&schedule, iv, bench_in, buffer, SELFTEST_SOFTWARE_BLOCKS);
    cipher_run(CIPHER_CBC, SELFTEST_BENCH_KEY, 16, iv, bench_in, bench_out,
               SELFTEST_SOFTWARE_BLOCKS);
    report("software AES-128 CBC agrees with the peripheral",
           same(buffer, bench_out, 16u * SELFTEST_SOFTWARE_BLOCKS));
    uint32_t start = soc_cycles();
    aes128_soft_cbc_encrypt(&schedule, iv, bench_in, buffer, SELFTEST_SOFTWARE_BLOCKS);
    uint32_t cycles = soc_cycles() - start;
    return bench_line("software-AES-128-CBC-encrypt", SELFTEST_SOFTWARE_BLOCKS, cycles);
}
#endif

int main(void)
{
    cipher_info info;
    soc_printf("SoC self-test: %s, %u-byte blocks, RAM %u bytes, clock %u Hz\n",
               SELFTEST_CORE, SELFTEST_BLOCK_BYTES, soc_ram_bytes(), soc_clock_hz());
    cipher_init(&info);
    report("INFO matches the core", info.block_bytes == SELFTEST_BLOCK_BYTES &&
                                    info.modes == SELFTEST_MODES);
    for (unsigned i = 0; i < SELFTEST_CASE_COUNT; i++)
        run_case(&SELFTEST_CASES[i]);
    if (SELFTEST_IRQ)
        interrupt_test(&SELFTEST_CASES[SELFTEST_IRQ_CASE]);
    if (SELFTEST_DMA && info.dma) {
        for (unsigned i = 0; i < SELFTEST_CASE_COUNT; i++)
            if (SELFTEST_CASES[i].kind == SELFTEST_RUN)
                run_case_dma(&SELFTEST_CASES[i]);
        const selftest_case *c = &SELFTEST_CASES[SELFTEST_IRQ_CASE];
        report("DMA: a buffer that is not word-aligned is refused",
               cipher_run_dma(c->mode, c->key, c->key_bytes, c->iv, buffer + 1, buffer + 1,
                              1) == CIPHER_E_DMA_ALIGN);
        if (SELFTEST_IRQ)
            dma_interrupt_test(c);
    }

    for (uint32_t i = 0; i < sizeof bench_in; i++)
        bench_in[i] = (uint8_t)(i * 7u + 1u);
    bench_mode("ECB-encrypt", CIPHER_ECB);
    if (SELFTEST_DECRYPTS)
        bench_mode("ECB-decrypt", CIPHER_ECB | CIPHER_DECRYPT);
    uint32_t cbc = bench_mode("CBC-encrypt", CIPHER_CBC);
    if (SELFTEST_DECRYPTS)
        bench_mode("CBC-decrypt", CIPHER_CBC | CIPHER_DECRYPT);
    bench_mode("CFB-encrypt", CIPHER_CFB);
    bench_mode("OFB-encrypt", CIPHER_OFB);
    bench_mode("CTR-encrypt", CIPHER_CTR);
    uint32_t dma_cbc = 0;
    if (SELFTEST_DMA && info.dma) {
        dma_cbc = bench_dma("DMA-CBC-encrypt", CIPHER_CBC);
        bench_dma("DMA-CTR-encrypt", CIPHER_CTR);
    }
#if SELFTEST_GCM
    bench_gcm();
#endif

#if SELFTEST_SOFTWARE_AES
    uint32_t software = bench_software();
#endif

    soc_printf("SUMMARY %s: %u/%u passed; CBC %u.%u cycles/block", SELFTEST_CORE, passed,
               tests, cbc / 10u, cbc % 10u);
    if (SELFTEST_DMA && info.dma)
        soc_printf("; DMA CBC %u.%u cycles/block", dma_cbc / 10u, dma_cbc % 10u);
#if SELFTEST_SOFTWARE_AES
    /* the speed-up with one decimal */
    uint32_t speedup = cbc ? (10u * software + cbc / 2u) / cbc : 0;
    soc_printf("; software AES-128 CBC %u.%u cycles/block; speed-up %u.%ux", software / 10u,
               software % 10u, speedup / 10u, speedup % 10u);
#endif
    soc_printf("; %s\n", passed == tests ? "PASS" : "FAIL");
    return passed == tests ? 0 : 1;
}
