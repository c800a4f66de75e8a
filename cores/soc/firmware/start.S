/* Start-up code of the firmware kit (amaranth-cipher-cores RISC-V SoC, PicoRV32 CPU).
 *
 * 0x00  _start: the CPU's reset address. Sets the stack pointer to the end of the RAM (read
 *       from SYSCTL_RAM_BYTES, so one image runs on any RAM size it fits), zeroes .bss, calls
 *       main(), and writes main's return value to SYSCTL_EXIT: in simulation the run ends with
 *       it (0: success), on a board the pass or fail LED lights. Then it waits forever.
 * 0x10  the interrupt entry (PicoRV32's PROGADDR_IRQ). PicoRV32 interrupts are its own, not
 *       the RISC-V privileged ones: on entry q0 holds the return address and q1 the bit mask of
 *       the interrupts being served, and further interrupts wait until retirq. The entry saves
 *       the caller-saved registers on the interrupted code's stack, calls
 *       soc_irq_handler(pending) (a C function; the default does nothing), restores them and
 *       returns. Interrupts start masked: soc_irq_unmask() in soc.h enables them.
 *
 * PicoRV32's custom instructions, which assemblers do not know, are written with .insn:
 * opcode 0x0b (custom-0), funct7 selects the instruction, q-registers are numbered in the
 * register fields (x1 stands for q1). */
#include "soc_map.h"

#define SETQ(q, rs)  .insn r 0x0b, 2, 1, q, rs, x0   /* q <- rs */
#define GETQ(rd, q)  .insn r 0x0b, 4, 0, rd, q, x0   /* rd <- q */
#define RETIRQ       .insn r 0x0b, 0, 2, x0, x0, x0  /* return from interrupt */

    .section .text.start, "ax"
    .globl _start
_start:
    j       reset

    .balign 16                      /* = SOC_IRQ_HANDLER_ADDRESS */
irq_entry:
    SETQ(x2, sp)                    /* q2 <- sp */
    SETQ(x3, ra)                    /* q3 <- ra */
    addi    sp, sp, -64
    sw      a0, 0(sp)
    sw      a1, 4(sp)
    sw      a2, 8(sp)
    sw      a3, 12(sp)
    sw      a4, 16(sp)
    sw      a5, 20(sp)
    sw      a6, 24(sp)
    sw      a7, 28(sp)
    sw      t0, 32(sp)
    sw      t1, 36(sp)
    sw      t2, 40(sp)
    sw      t3, 44(sp)
    sw      t4, 48(sp)
    sw      t5, 52(sp)
    sw      t6, 56(sp)
    GETQ(a0, x1)                    /* a0 <- the interrupts being served */
    call    soc_irq_handler
    lw      a0, 0(sp)
    lw      a1, 4(sp)
    lw      a2, 8(sp)
    lw      a3, 12(sp)
    lw      a4, 16(sp)
    lw      a5, 20(sp)
    lw      a6, 24(sp)
    lw      a7, 28(sp)
    lw      t0, 32(sp)
    lw      t1, 36(sp)
    lw      t2, 40(sp)
    lw      t3, 44(sp)
    lw      t4, 48(sp)
    lw      t5, 52(sp)
    lw      t6, 56(sp)
    GETQ(ra, x3)
    GETQ(sp, x2)
    RETIRQ

reset:
    li      t0, SOC_SYSCTL_BASE
    lw      sp, SOC_SYSCTL_RAM_BYTES(t0)    /* RAM_BASE is 0: the end of RAM */
    la      a0, __bss_start
    la      a1, __bss_end
1:  bgeu    a0, a1, 2f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       1b
2:  call    main
    li      t0, SOC_SYSCTL_BASE
    sw      a0, SOC_SYSCTL_EXIT(t0)
3:  j       3b

    .text
    .weak   soc_irq_handler
soc_irq_handler:
    ret
