/*
 * Instruction counter for QEMU's TCG plugin interface (API version 1, QEMU 7.2).
 *
 * Counts every executed guest instruction (an inline add per translated block) and, each
 * time the block at address `mark=0x...` starts executing, records the running count. At
 * exit it prints "icount total=N marks=A,B,..." through qemu_plugin_outs. The difference
 * of two consecutive marks is the exact number of instructions executed between them.
 *
 * Debian ships QEMU with plugin support but without qemu-plugin.h, so the few functions
 * used here are declared by hand from the plugin API.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_MARKS 64

static uint64_t executed;
static uint64_t mark_addr = UINT64_MAX;
static uint64_t marks[MAX_MARKS];
static int n_marks;

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    (void)userdata;
    if (n_marks < MAX_MARKS) {
        marks[n_marks++] = executed;
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed,
                                             qemu_plugin_tb_n_insns(tb));
    if (qemu_plugin_tb_vaddr(tb) == mark_addr) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    char line[64 + MAX_MARKS * 24];
    int len = snprintf(line, sizeof line, "icount total=%" PRIu64 " marks=", executed);
    for (int i = 0; i < n_marks && len < (int)sizeof line - 24; i++) {
        len += snprintf(line + len, sizeof line - len, "%s%" PRIu64, i ? "," : "", marks[i]);
    }
    snprintf(line + len, sizeof line - len, "\n");
    qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info, int argc,
                                                               char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mark=", 5) == 0) {
            mark_addr = strtoull(argv[i] + 5, NULL, 0);
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
