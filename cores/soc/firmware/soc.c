/* Firmware kit: UART output and exit (see soc.h). */
#include <stdarg.h>

#include "soc.h"

void soc_puts(const char *text)
{
    for (; *text; text++) {
        if (*text == '\n')
            soc_putc('\r');
        soc_putc(*text);
    }
}

/* Digits of `value` in `base` (10 or 16), most significant first, padded to `width` with
 * `pad`. Division by 10 is done by repeated subtraction of powers of ten, so that an RV32I
 * build needs no division routine. */
static void put_unsigned(uint32_t value, unsigned base, unsigned width, char pad)
{
    static const uint32_t powers[] = {1000000000u, 100000000u, 10000000u, 1000000u, 100000u,
                                      10000u, 1000u, 100u, 10u, 1u};
    char digits[10];
    unsigned count = 0;
    if (base == 16) {
        for (int shift = 28; shift >= 0; shift -= 4) {
            unsigned digit = (value >> shift) & 15u;
            if (digit || count || shift == 0)
                digits[count++] = (char)(digit < 10 ? '0' + digit : 'a' + digit - 10);
        }
    } else {
        for (unsigned i = 0; i < 10; i++) {
            unsigned digit = 0;
            while (value >= powers[i]) {
                value -= powers[i];
                digit++;
            }
            if (digit || count || i == 9)
                digits[count++] = (char)('0' + digit);
        }
    }
    for (; width > count; width--)
        soc_putc(pad);
    for (unsigned i = 0; i < count; i++)
        soc_putc(digits[i]);
}

void soc_printf(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    for (; *format; format++) {
        if (*format != '%') {
            if (*format == '\n')
                soc_putc('\r');
            soc_putc(*format);
            continue;
        }
        format++;
        char pad = ' ';
        unsigned width = 0;
        if (*format == '0') {
            pad = '0';
            format++;
        }
        while (*format >= '0' && *format <= '9')
            width = width * 10u + (unsigned)(*format++ - '0');
        switch (*format) {
        case 's': soc_puts(va_arg(arguments, const char *)); break;
        case 'c': soc_putc((char)va_arg(arguments, int)); break;
        case 'u': put_unsigned(va_arg(arguments, uint32_t), 10, width, pad); break;
        case 'x': put_unsigned(va_arg(arguments, uint32_t), 16, width, pad); break;
        case 'd': {
            int32_t value = va_arg(arguments, int32_t);
            if (value < 0) {
                soc_putc('-');
                put_unsigned(0u - (uint32_t)value, 10, width ? width - 1 : 0, pad);
            } else {
                put_unsigned((uint32_t)value, 10, width, pad);
            }
            break;
        }
        case '%': soc_putc('%'); break;
        case '\0': format--; break;
        default: soc_putc('?'); break;
        }
    }
    va_end(arguments);
}

void soc_exit(int status)
{
    soc_write(SOC_SYSCTL_BASE + SOC_SYSCTL_EXIT, (uint32_t)status);
    for (;;)
        ;
}
