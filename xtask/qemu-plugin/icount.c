/*
 * Instruction counter for QEMU's TCG plugin interface (API version 1, QEMU 7.2).
 *
 * Counts every executed guest instruction (an inline add per translated block) and, each
 * time the block at address `mark=0x...` starts executing, records the running count. At
 * exit it prints "icount total=N marks=A,B,..." through qemu_plugin_outs. The difference
 * of two consecutive marks is the exact number of instructions executed between them.
 *
 * With `cycles=armv7m` it also sums an estimate of Cortex-M cycles: each instruction is
 * weighed once, when its block is translated, by the published timings of the
 * Cortex-M4 (Technical Reference Manual, "Processor instructions" and the FPU's
 * "Instruction timing"; the Cortex-M3 manual gives the same integer timings): the block's
 * total is added inline at each execution, and the marks print it as `cycles=...`.
 * Assumptions, all in the estimate's favour of simplicity: memory without wait states;
 * every branch counted taken with the smallest pipeline refill (P = 1); a division at
 * its upper bound (12 cycles); no overlap of neighbouring loads.
 *
 * With `cycles=cv32e40p` the same for 32-bit RISC-V, by the cycle table of OpenHW Group's
 * CV32E40P user manual ("Pipeline Details"), a 4-stage in-order RV32IMC[F] core whose
 * timings are published (Espressif's for the ESP32-C3 are not), its FPU with the RTL's
 * default latencies (FPU_ADDMUL_LAT = FPU_OTHERS_LAT = 0). Assumptions as above: every
 * branch taken (3 cycles), a division at its upper bound (35; FDIV.S and FSQRT.S 19), no
 * load-use or FPU result stalls (the pipeline's one-cycle hazards), aligned jump targets.
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
struct qemu_plugin_insn;
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
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_MARKS 64

static uint64_t executed;
static uint64_t cycles;
/* The cycle model: none, or one of these. */
enum { MODEL_NONE, MODEL_ARMV7M, MODEL_CV32E40P };
static int model_cycles;
static uint64_t mark_addr = UINT64_MAX;
static uint64_t marks[MAX_MARKS];
static uint64_t cycle_marks[MAX_MARKS];
static int n_marks;

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Registers in a list such as "{r4, r5, r7, lr}" or "{s16-s23}" (a d register counts as
   two words); whether it holds pc. */
static unsigned list_words(const char *operands, int *has_pc)
{
    const char *p = strchr(operands, '{');
    unsigned n = 0;
    *has_pc = 0;
    if (!p) {
        return 1;
    }
    for (p++; *p && *p != '}';) {
        while (*p == ' ' || *p == ',') {
            p++;
        }
        if (!*p || *p == '}') {
            break;
        }
        char kind = *p;
        unsigned width = kind == 'd' ? 2 : 1;
        if (starts(p, "pc")) {
            *has_pc = 1;
        }
        long first = strtol(p + 1, (char **)&p, 10);
        long last = first;
        if (*p == '-') {
            p++;
            if (*p == kind) {
                last = strtol(p + 1, (char **)&p, 10);
            }
        }
        while (*p && *p != ',' && *p != '}') {
            p++;
        }
        n += width * (unsigned)(last >= first ? last - first + 1 : 1);
    }
    return n ? n : 1;
}

static const char *const CONDS[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                    "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};

static int is_branch(const char *m, size_t len)
{
    if ((len == 1 && m[0] == 'b') || (len >= 2 && starts(m, "bl")) || starts(m, "bx")) {
        return 1;
    }
    if (m[0] != 'b' || len < 3) {
        return 0;
    }
    for (size_t i = 0; i < sizeof CONDS / sizeof CONDS[0]; i++) {
        if (strncmp(m + 1, CONDS[i], 2) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Estimated cycles of one instruction, from its disassembly ("vfma.f32 s0, s1, s2"). */
static unsigned armv7m_cycles(const char *dis)
{
    while (*dis == ' ' || *dis == '\t') {
        dis++;
    }
    size_t len = strcspn(dis, " \t.");
    const char *ops = dis + strcspn(dis, " \t");
    int pc = 0;
    if (starts(dis, "vldm") || starts(dis, "vstm") || starts(dis, "vpush") || starts(dis, "vpop")) {
        return 1 + list_words(ops, &pc);
    }
    if (starts(dis, "vldr") || starts(dis, "vstr")) {
        return 2;
    }
    if (starts(dis, "vfma") || starts(dis, "vfms") || starts(dis, "vfnm") || starts(dis, "vmla") ||
        starts(dis, "vmls") || starts(dis, "vnmla") || starts(dis, "vnmls")) {
        return 3;
    }
    if (starts(dis, "vdiv") || starts(dis, "vsqrt")) {
        return 14;
    }
    if (dis[0] == 'v') {
        return 1;
    }
    if (starts(dis, "ldm") || starts(dis, "stm") || starts(dis, "push") || starts(dis, "pop")) {
        unsigned n = list_words(ops, &pc);
        return 1 + n + (unsigned)pc;
    }
    if (starts(dis, "ldrd") || starts(dis, "strd")) {
        return 3;
    }
    if (starts(dis, "ldr") || starts(dis, "str")) {
        return 2;
    }
    if (starts(dis, "sdiv") || starts(dis, "udiv")) {
        return 12;
    }
    if (starts(dis, "mla") || starts(dis, "mls")) {
        return 2;
    }
    if (starts(dis, "tbb") || starts(dis, "tbh")) {
        return 3;
    }
    if (starts(dis, "cbz") || starts(dis, "cbnz") || is_branch(dis, len)) {
        return 2;
    }
    return 1;
}

/* The mnemonic of QEMU's RISC-V disassembly, which prints the encoding first
   ("00c92b03          lw     s6,12(s2)"); its length in `*len`. */
static const char *riscv_mnemonic(const char *dis, size_t *len)
{
    dis += strspn(dis, " \t");
    dis += strcspn(dis, " \t");
    dis += strspn(dis, " \t");
    *len = strcspn(dis, " \t");
    return dis;
}

static int is(const char *m, size_t len, const char *name)
{
    return len == strlen(name) && strncmp(m, name, len) == 0;
}

/* Estimated cycles of one RISC-V instruction on the CV32E40P (see the top of this file). */
static unsigned cv32e40p_cycles(const char *dis)
{
    size_t len;
    const char *m = riscv_mnemonic(dis, &len);
    const char *ops = m + len;
    if (is(m, len, "mulh") || is(m, len, "mulhu") || is(m, len, "mulhsu")) {
        return 5;
    }
    if (is(m, len, "div") || is(m, len, "divu") || is(m, len, "rem") || is(m, len, "remu")) {
        return 35;
    }
    if (starts(m, "fdiv.") || starts(m, "fsqrt.")) {
        return 19;
    }
    if (is(m, len, "j") || is(m, len, "jal") || is(m, len, "jalr") || is(m, len, "jr") ||
        is(m, len, "ret") || is(m, len, "call") || is(m, len, "tail")) {
        return 2;
    }
    /* Every conditional branch (beq ... bgeu and the pseudo-forms beqz, bgt, ...). */
    if (m[0] == 'b') {
        return 3;
    }
    /* The CSRs the table times at 4: the machine state, trap and counter registers. */
    if (starts(m, "csr")) {
        static const char *const SLOW[] = {"mstatus", "mepc",  "mtvec", "mcause", "mcycle",
                                           "minstret", "mhpm", "mcountinhibit", "dscr",
                                           "dpc",     "dscratch"};
        for (size_t i = 0; i < sizeof SLOW / sizeof SLOW[0]; i++) {
            if (strstr(ops, SLOW[i])) {
                return 4;
            }
        }
    }
    return 1;
}

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    (void)userdata;
    if (n_marks < MAX_MARKS) {
        cycle_marks[n_marks] = cycles;
        marks[n_marks++] = executed;
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    if (model_cycles) {
        uint64_t weight = 0;
        for (size_t i = 0; i < n; i++) {
            char *dis = qemu_plugin_insn_disas(qemu_plugin_tb_get_insn(tb, i));
            weight += !dis ? 1 : model_cycles == MODEL_ARMV7M ? armv7m_cycles(dis) : cv32e40p_cycles(dis);
            free(dis);
        }
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &cycles, weight);
    }
    if (qemu_plugin_tb_vaddr(tb) == mark_addr) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    char line[64 + MAX_MARKS * 48];
    int len = snprintf(line, sizeof line, "icount total=%" PRIu64 " marks=", executed);
    for (int i = 0; i < n_marks && len < (int)sizeof line - 24; i++) {
        len += snprintf(line + len, sizeof line - len, "%s%" PRIu64, i ? "," : "", marks[i]);
    }
    if (model_cycles) {
        len += snprintf(line + len, sizeof line - len, " cycles=");
        for (int i = 0; i < n_marks && len < (int)sizeof line - 24; i++) {
            len += snprintf(line + len, sizeof line - len, "%s%" PRIu64, i ? "," : "",
                            cycle_marks[i]);
        }
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
        } else if (strcmp(argv[i], "cycles=armv7m") == 0) {
            model_cycles = MODEL_ARMV7M;
        } else if (strcmp(argv[i], "cycles=cv32e40p") == 0) {
            model_cycles = MODEL_CV32E40P;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
