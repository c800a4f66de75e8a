/* Firmware kit of the amaranth-cipher-cores RISC-V SoC: access to the system controller (UART,
 * cycle counter, exit) and to PicoRV32's interrupts. Addresses come from soc_map.h, the cipher
 * peripheral's registers from cipher_wishbone.h, its driver from cipher.h.
 *
 * Build (no system tool chain needed; see the README's "RISC-V SoC" section):
 *   python -m ziglang cc -target riscv32-freestanding-none -mcpu=generic_rv32 -Os
 *       -ffreestanding -nostdlib -T link.ld start.S soc.c cipher.c main.c -o firmware.elf
 * (-mcpu=generic_rv32+m for an SoC built with isa="rv32im", -mcpu=generic_rv32+m+c, or no -mcpu,
 * with "rv32imc", the simulator's default.) */
#ifndef SOC_H
#define SOC_H

#include <stdint.h>

#include "soc_map.h"

static inline void soc_write(uint32_t address, uint32_t value)
{
    *(volatile uint32_t *)(uintptr_t)address = value;
}

static inline uint32_t soc_read(uint32_t address)
{
    return *(volatile uint32_t *)(uintptr_t)address;
}

/* Clock cycles since reset (wraps after 2**32: subtract two readings as uint32_t). */
static inline uint32_t soc_cycles(void)
{
    return soc_read(SOC_SYSCTL_BASE + SOC_SYSCTL_CYCLES);
}

static inline uint32_t soc_clock_hz(void)
{
    return soc_read(SOC_SYSCTL_BASE + SOC_SYSCTL_CLOCK_HZ);
}

static inline uint32_t soc_ram_bytes(void)
{
    return soc_read(SOC_SYSCTL_BASE + SOC_SYSCTL_RAM_BYTES);
}

/* Send one byte on the UART (waits while the transmitter is busy). */
static inline void soc_putc(char c)
{
    soc_write(SOC_SYSCTL_BASE + SOC_SYSCTL_UART_DATA, (uint8_t)c);
}

/* Send a string; "\n" is sent as "\r\n". */
void soc_puts(const char *text);

/* A small printf for the UART: %s %c %d %u %x and %%, with an optional field width and 0 flag
 * (%08x, %5u). Returns nothing; prints "?" for anything else. */
void soc_printf(const char *format, ...);

/* End the firmware with `status` (0: success): what returning it from main() does. */
__attribute__((noreturn)) void soc_exit(int status);

/* PicoRV32 interrupts. soc_irq_unmask(1u << SOC_PERIPHERAL_IRQ) lets the peripheral interrupt
 * the CPU; the firmware then defines
 *     void soc_irq_handler(uint32_t pending)
 * which start.S calls with the bit mask of the interrupts being served (a C function: it may
 * use the stack and call others). While it runs, further interrupts wait. */
void soc_irq_handler(uint32_t pending);

/* Set the mask of disabled interrupts (bit i set: IRQ i disabled); returns the previous mask.
 * After reset every interrupt is disabled. */
static inline uint32_t soc_irq_set_mask(uint32_t disabled)
{
    uint32_t previous;
    /* PicoRV32 maskirq rd, rs (custom-0, funct7 3). */
    __asm__ volatile (".insn r 0x0b, 6, 3, %0, %1, x0" : "=r"(previous) : "r"(disabled) : "memory");
    return previous;
}

static inline void soc_irq_unmask(uint32_t irqs)
{
    uint32_t disabled = soc_irq_set_mask(~0u);
    soc_irq_set_mask(disabled & ~irqs);
}

static inline void soc_irq_mask(uint32_t irqs)
{
    uint32_t disabled = soc_irq_set_mask(~0u);
    soc_irq_set_mask(disabled | irqs);
}

#endif
