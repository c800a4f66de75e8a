/* Firmware kit: the few library routines a compiler may call on its own in freestanding code
 * (memory copies and fills for structure assignments and initialisers) and, for an RV32I CPU
 * without the M extension, integer multiplication and division. Written for size, not speed:
 * time-critical code should avoid division on RV32I. */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *destination, const void *source, size_t length)
{
    uint8_t *to = destination;
    const uint8_t *from = source;
    while (length--)
        *to++ = *from++;
    return destination;
}

void *memmove(void *destination, const void *source, size_t length)
{
    uint8_t *to = destination;
    const uint8_t *from = source;
    if (to < from) {
        while (length--)
            *to++ = *from++;
    } else {
        while (length--)
            to[length] = from[length];
    }
    return destination;
}

void *memset(void *destination, int value, size_t length)
{
    uint8_t *to = destination;
    while (length--)
        *to++ = (uint8_t)value;
    return destination;
}

int memcmp(const void *left, const void *right, size_t length)
{
    const uint8_t *a = left, *b = right;
    for (; length; length--, a++, b++)
        if (*a != *b)
            return *a < *b ? -1 : 1;
    return 0;
}

#ifndef __riscv_mul
/* Shift-and-add multiplication and restoring division (what RV32M does in one instruction). */
uint32_t __mulsi3(uint32_t a, uint32_t b)
{
    uint32_t product = 0;
    for (; b; b >>= 1, a <<= 1)
        if (b & 1u)
            product += a;
    return product;
}

static uint32_t divide(uint32_t dividend, uint32_t divisor, uint32_t *remainder)
{
    uint32_t quotient = 0, rest = 0;
    if (divisor == 0) {             /* RISC-V's results for division by zero */
        *remainder = dividend;
        return 0xffffffffu;
    }
    for (int bit = 31; bit >= 0; bit--) {
        rest = (rest << 1) | ((dividend >> bit) & 1u);
        if (rest >= divisor) {
            rest -= divisor;
            quotient |= 1u << bit;
        }
    }
    *remainder = rest;
    return quotient;
}

uint32_t __udivsi3(uint32_t a, uint32_t b)
{
    uint32_t rest;
    return divide(a, b, &rest);
}

uint32_t __umodsi3(uint32_t a, uint32_t b)
{
    uint32_t rest;
    divide(a, b, &rest);
    return rest;
}

int32_t __divsi3(int32_t a, int32_t b)
{
    uint32_t rest;
    uint32_t quotient = divide(a < 0 ? 0u - (uint32_t)a : (uint32_t)a,
                               b < 0 ? 0u - (uint32_t)b : (uint32_t)b, &rest);
    if (b == 0)
        return -1;
    return (a < 0) != (b < 0) ? (int32_t)(0u - quotient) : (int32_t)quotient;
}

int32_t __modsi3(int32_t a, int32_t b)
{
    uint32_t rest;
    divide(a < 0 ? 0u - (uint32_t)a : (uint32_t)a, b < 0 ? 0u - (uint32_t)b : (uint32_t)b, &rest);
    if (b == 0)
        return a;
    return a < 0 ? (int32_t)(0u - rest) : (int32_t)rest;
}
#endif
