/* insn_count.c — a QEMU TCG plugin (built for the host) that counts the guest instructions a
 * run executes, per translated block: at exit it writes one line "ADDRESS INSTRUCTIONS EXECUTIONS"
 * per block to the file given as outfile=PATH (icount.sh adds them up per function). Only the few
 * entry points of QEMU's plugin API it calls are declared here (QEMU 7.2, plugin API version 1). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct block {
  uint64_t vaddr, insns, executions;
  struct block* next;
};
static struct block* blocks; /* one vCPU: translation and execution never race */
static char outfile[4096] = "insn_count.txt";

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  struct block* b = calloc(1, sizeof *b);
  if (!b) return;
  b->vaddr = qemu_plugin_tb_vaddr(tb);
  b->insns = qemu_plugin_tb_n_insns(tb);
  b->next = blocks;
  blocks = b;
  /* each execution of the block counts once: exact, and cheap (inline, no callback) */
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->executions, 1);
}

static void on_qemu_exit(qemu_plugin_id_t id, void* p) {
  (void)id;
  (void)p;
  FILE* f = fopen(outfile, "w");
  if (!f) return;
  for (struct block* b = blocks; b; b = b->next)
    if (b->executions) fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr, b->insns, b->executions);
  fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "outfile=", 8) == 0) snprintf(outfile, sizeof outfile, "%s", argv[i] + 8);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
