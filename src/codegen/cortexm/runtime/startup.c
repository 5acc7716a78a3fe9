/* startup.c — boot code of RLX's Cortex-M programs on QEMU's MPS2/MPS3 boards: the vector
 * table, the reset handler (FPU/MVE on, .bss cleared, semihosting I/O opened) and fault handlers
 * that end the run with an error instead of hanging the emulator. .data is loaded by QEMU at its
 * address in RAM (the linker script keeps its load and run addresses equal), so nothing copies it. */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __stack_top[], __bss_start__[], __bss_end__[];
extern int main(void);
extern void initialise_monitor_handles(void);

void Reset_Handler(void) {
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10 and CP11 (FPU, and MVE on the M55) */
  __asm volatile("dsb\n\tisb");
  for (uint32_t* p = __bss_start__; p < __bss_end__; ++p) *p = 0;
  initialise_monitor_handles();
  exit(main());
}

/* Semihosting from a fault: SYS_WRITE0 the reason, then SYS_EXIT with "run-time error". */
static void semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm("r0") = op;
  register const void* r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

static void Fault_Handler(void) {
  semihost(0x04, "rlx: the program faulted (HardFault, MemManage, BusFault or UsageFault)\n");
  semihost(0x18, (const void*)0x20024u);
  for (;;) {
  }
}

static void Default_Handler(void) {
  semihost(0x04, "rlx: unexpected interrupt\n");
  semihost(0x18, (const void*)0x20024u);
  for (;;) {
  }
}

/* Newlib's stdio asks for these when crt0 is not linked (-nostartfiles). */
void _init(void) {}
void _fini(void) {}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top, Reset_Handler, Default_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0,
    Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler};
