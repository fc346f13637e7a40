// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts how many times each guest
 * instruction runs, for an instruction profile of the guest kernel where
 * perf is not available (the test VM has none, and TCG has no PMU).
 *
 *   qemu-system-x86_64 ... -plugin insnprof.so,out=FILE
 *
 * writes one line per guest instruction executed, "ADDRESS COUNT" (hex
 * address, 16 digits, so that sort(1) orders them), when QEMU exits;
 * bench/device/insnprof.sh turns two of them into instructions per symbol per
 * operation. Under -icount shift=0 an instruction is a nanosecond of
 * guest time, so the profile is where guest time goes, exactly, except
 * that memory costs nothing (no cache misses).
 *
 * Built against QEMU's plugin ABI, version 1 (QEMU 7.2 of Debian 12),
 * which ships no header: the few entry points used are declared here.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plugin ABI, as far as it is used ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
} qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op, void *ptr,
						uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- counters: an open-addressing table of address -> count ---- */

#define TABLE_BITS	22		/* 4M distinct instructions, 64 MiB */
#define TABLE_SIZE	(1UL << TABLE_BITS)

struct counter {
	uint64_t addr;
	uint64_t count;
};

static struct counter *table;
static unsigned long used;
static char *out_path;

/*
 * The counter of @addr. Counters never move, so the code TCG generates
 * can add to them directly; translation is single-threaded under icount.
 */
static struct counter *counter_of(uint64_t addr)
{
	unsigned long i = (addr * 0x9e3779b97f4a7c15ULL) >> (64 - TABLE_BITS);

	while (table[i].count || table[i].addr) {
		if (table[i].addr == addr)
			return &table[i];
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	if (++used > TABLE_SIZE / 4 * 3) {
		fprintf(stderr, "insnprof: more than %lu distinct instructions\n", used);
		abort();
	}
	table[i].addr = addr;
	return &table[i];
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct counter *c = counter_of(qemu_plugin_insn_vaddr(insn));

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &c->count, 1);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	unsigned long i;

	(void)id;
	(void)userdata;
	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < TABLE_SIZE; i++)
		if (table[i].count)
			fprintf(f, "%016" PRIx64 " %" PRIu64 "\n", table[i].addr, table[i].count);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	if (!out_path) {
		fprintf(stderr, "insnprof: usage: -plugin insnprof.so,out=FILE\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
