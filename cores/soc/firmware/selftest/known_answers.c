/* The smallest self-test: the known answers and CBC vectors of selftest_vectors.h (built with
 * the small set) through the cipher peripheral, one PASS or FAIL line each and a summary, in
 * under 2 KiB of RAM (no printf, no benchmarks). The SoC's pass LED lights if all pass. */
#include "../cipher.h"
#include "../soc.h"
#include "selftest_vectors.h"

static uint8_t buffer[SELFTEST_BUFFER_BYTES];

int main(void)
{
    unsigned failed = 0;
    soc_puts("SoC known-answer test: " SELFTEST_CORE "\n");
    cipher_init(0);
    for (unsigned i = 0; i < SELFTEST_CASE_COUNT; i++) {
        const selftest_case *c = &SELFTEST_CASES[i];
        int ok = cipher_run(c->mode, c->key, c->key_bytes, c->iv, c->in, buffer,
                            c->length / SELFTEST_BLOCK_BYTES) == CIPHER_OK;
        for (uint32_t j = 0; j < c->length; j++)
            ok &= buffer[j] == c->expected[j];
        failed += !ok;
        soc_puts(ok ? "PASS " : "FAIL ");
        soc_puts(c->name);
        soc_puts("\n");
    }
    soc_puts(failed ? "SUMMARY " SELFTEST_CORE ": FAIL\n" : "SUMMARY " SELFTEST_CORE ": PASS\n");
    return failed ? 1 : 0;
}
