// SPDX-License-Identifier: GPL-2.0
/*
 * Touch tables: memory a process and the kernel share, in which the
 * process refreshes ids by storing the time into their slots, with no
 * system call; the kernel reads a slot when its id's deadline comes, or
 * before, when the wheel moves the id down a level of its slots
 * (twheel_touch_lazy(), at the end of this file), and re-arms the id if
 * the slot was stamped since its deadline was set.
 *
 * The table is ordinary pages, allocated at setup with GFP_KERNEL_ACCOUNT
 * (charged to the caller's memory cgroup; lowmem, so the kernel reads them
 * through the direct map) and handed to userspace one page at a time by
 * the fault handler (before 5.11 as page frames: compat.h's
 * TWHEEL_TOUCH_PFNMAP). The kernel side reads a slot with one READ_ONCE() of
 * an aligned u64 in memory it owns: it never faults and never sleeps, so
 * it may run under the wheel's lock, and whatever userspace writes there
 * is only ever a number to it.
 *
 * Lifetime: a mapping holds a reference to the file, so the table lives
 * until the last mapping and the last descriptor are gone; pages mapped
 * into a process hold their own reference as well (not before 5.11, where
 * the mapping's file is what keeps them).
 *
 * A registered table (TWHEEL_SETUPF_TOUCH_USER) is the process's own
 * shared memory instead (MAP_SHARED anonymous memory, shm or memfd, a
 * BPF array; never a private mapping, see twheel_touch_check_shared()),
 * which a BPF program
 * may stamp from the packet path. REGISTER pins its pages for as long as
 * the wheel lives, as io_uring pins registered buffers (FOLL_LONGTERM,
 * so that they are first moved out of movable memory; charged to the
 * caller's user against its RLIMIT_MEMLOCK, and to its process, for as
 * long as the pin lasts: twheel_touch_account()), and the kernel reads
 * them as it reads its own: one load through a local mapping, never a
 * fault, whatever the process does to its mapping afterwards. Their
 * stamps are on the kernel's clock, which is what a BPF program reads.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include <linux/twheel.h>

#include "clock.h"
#include "compat.h"
#include "dev.h"
#include "touch.h"
#include "trace.h"

#define TWHEEL_SLOTS_PER_PAGE	(PAGE_SIZE / sizeof(u64))

unsigned int twheel_touch_pages(u32 slots)
{
	return DIV_ROUND_UP(slots, TWHEEL_SLOTS_PER_PAGE);
}

int twheel_touch_init(struct twheel_touch_table *t, u32 slots)
{
	unsigned int i, n = twheel_touch_pages(slots);

	t->pages = kvcalloc(n, sizeof(*t->pages), GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!t->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		/* At the memcg limit: ENOMEM to setup, not the group's OOM killer. */
		t->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL);
		if (!t->pages[i])
			goto err_pages;
		cond_resched();
	}
	t->nr_pages = n;
	t->slots = slots;
	return 0;

err_pages:
	while (i--)
		__free_page(t->pages[i]);
	kvfree(t->pages);
	t->pages = NULL;
	return -ENOMEM;
}

/*
 * Charge @n pinned pages, as io_uring charges its registered buffers: to
 * the locked memory of the caller's user (user_struct.locked_vm), never
 * past its RLIMIT_MEMLOCK unless it may lock memory at will, and to the
 * pinned memory of its process (VmPin). Both objects are held for as
 * long as the pin lasts and uncharged alike, so a charge outlives neither
 * the exit nor an exec of the process that registered: a child that
 * registers on an inherited wheel and exits leaves its user charged. The
 * entry caps bound a user's tables across processes too
 * (TWHEEL_ENTRY_COST per entry a table's pages make).
 */
static int twheel_touch_account(struct twheel_touch_table *t, unsigned long n)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user = current_user();
	long cur;

	if (!capable(CAP_IPC_LOCK)) {
		/* The credentials hold the user: free_uid() is not exported before 5.11. */
		cur = atomic_long_read(&user->locked_vm);
		do {
			/* Never past the limit, even for a moment. */
			if (n > limit || (unsigned long)cur > limit - n)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + n));
		t->pin_cred = get_current_cred();
	}
	t->mm = current->mm;
	mmgrab(t->mm);
	atomic64_add(n, &t->mm->pinned_vm);
	return 0;
}

static void twheel_touch_unaccount(struct twheel_touch_table *t, unsigned long n)
{
	if (t->pin_cred) {
		atomic_long_sub(n, &t->pin_cred->user->locked_vm);
		put_cred(t->pin_cred);
		t->pin_cred = NULL;
	}
	atomic64_sub(n, &t->mm->pinned_vm);
	mmdrop(t->mm);
	t->mm = NULL;
}

/*
 * A private mapping in [@addr, @addr + @len) of the caller: -EINVAL, for
 * such a table would part from the process's stores without a word. The
 * pages pinned are the process's copy at REGISTER; a fork gives the child
 * copies of its own (pinned pages are copied at fork, not shared copy on
 * write), and MADV_DONTNEED or a remap gives the process new ones, so the
 * stamps of a prefork server's workers would never reach the kernel. A
 * shared mapping (MAP_SHARED anonymous memory, shm, memfd, a BPF array)
 * keeps its pages across all of that. A hole is pinning's to refuse
 * (EFAULT), as is a shared mapping that cannot be written. Process
 * context, in the caller's mm.
 */
static int twheel_touch_check_shared(unsigned long addr, unsigned long len)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + len;
	struct vm_area_struct *vma;
	int ret = 0;

	if (end < addr)
		return 0;
	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr)
			break;
		if (!(vma->vm_flags & VM_MAYSHARE)) {
			ret = -EINVAL;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

int twheel_touch_pin(struct twheel_touch_table *t, u64 addr, u32 slots)
{
	unsigned int n = twheel_touch_pages(slots);
	struct page **pages;
	int ret, pinned;

	if (!addr || !PAGE_ALIGNED(addr) || addr != (unsigned long)addr)
		return -EINVAL;
	ret = twheel_touch_check_shared(addr, (unsigned long)n << PAGE_SHIFT);
	if (ret)
		return ret;
	ret = twheel_touch_account(t, n);
	if (ret)
		return ret;
	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!pages) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	/*
	 * Writable, though the kernel only reads: the process writes them.
	 * The mappings were shared when looked at; one remapped private
	 * since is the process's own doing, and only its own stores are lost.
	 */
	pinned = pin_user_pages_fast(addr, n, FOLL_WRITE | FOLL_LONGTERM, pages);
	if (pinned != n) {
		if (pinned > 0)
			unpin_user_pages(pages, pinned);
		/* Short, unmapped, read-only, PFN or I/O memory: not a table. */
		ret = pinned == -ENOMEM ? -ENOMEM : -EFAULT;
		goto err_free;
	}
	t->pages = pages;
	t->nr_pages = n;
	t->slots = slots;
	t->user = true;
	return 0;

err_free:
	kvfree(pages);
err_unaccount:
	twheel_touch_unaccount(t, n);
	return ret;
}

void twheel_touch_install(struct twheel_touch_table *t, struct twheel_touch_table *from)
{
	t->nr_pages = from->nr_pages;
	t->mm = from->mm;
	t->pin_cred = from->pin_cred;
	/* Last: lockless readers that see the pages see the rest. */
	smp_store_release(&t->pages, from->pages);
	*from = (struct twheel_touch_table){};
}

void twheel_touch_free(struct twheel_touch_table *t)
{
	unsigned int i;

	if (t->user) {
		if (t->pages) {
			unpin_user_pages(t->pages, t->nr_pages);
			twheel_touch_unaccount(t, t->nr_pages);
		}
	} else {
		for (i = 0; i < t->nr_pages; i++)
			put_page(t->pages[i]);
	}
	kvfree(t->pages);
	t->pages = NULL;
	t->nr_pages = 0;
	t->slots = 0;
}

u64 twheel_touch_read(const struct twheel_touch_table *t, u32 slot)
{
	/* The module's pages are lowmem; a process's may be highmem. */
	const u64 *page = kmap_local_page(t->pages[slot / TWHEEL_SLOTS_PER_PAGE]);
	u64 stamp;

	/* Userspace stores into it whenever it likes: one untorn load. */
	stamp = READ_ONCE(page[slot % TWHEEL_SLOTS_PER_PAGE]);
	kunmap_local(page);
	return stamp;
}

/*
 * A slot's stamp as a time on the kernel's clock: the module's own table
 * holds the users' times, a registered one the kernel's (a BPF program's
 * bpf_ktime_get_ns()), whatever the time namespace.
 */
static u64 twheel_touch_stamp(const struct twheel_ctx *ctx, u32 slot)
{
	u64 stamp = twheel_touch_read(&ctx->touch, slot);

	return ctx->touch.user ? stamp : twheel_from_user(ctx, stamp);
}

static vm_fault_t twheel_touch_fault(struct vm_fault *vmf)
{
	struct twheel_touch_table *t = vmf->vma->vm_private_data;
	struct page *page;

	if (vmf->pgoff >= t->nr_pages)
		return VM_FAULT_SIGBUS;
	page = t->pages[vmf->pgoff];
	if (TWHEEL_TOUCH_PFNMAP)
		return vmf_insert_pfn(vmf->vma, vmf->address, page_to_pfn(page));
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct twheel_touch_vm_ops = {
	.fault	= twheel_touch_fault,
};

int twheel_touch_mmap(struct twheel_touch_table *t, struct vm_area_struct *vma)
{
	/*
	 * Shared, at offset 0, within the table: a private copy would never
	 * be seen by the kernel, and the table is data, never code. A shared
	 * mapping is VM_MAYSHARE whether or not it may be written.
	 */
	if (vma->vm_pgoff || vma_pages(vma) > t->nr_pages)
		return -EINVAL;
	if (!(vma->vm_flags & VM_MAYSHARE) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | (TWHEEL_TOUCH_PFNMAP ? VM_PFNMAP : 0));
	vma->vm_private_data = t;
	vma->vm_ops = &twheel_touch_vm_ops;
	return 0;
}

void twheel_touch_armed(struct twheel_ctx *ctx, struct tw_entry *e,
			const struct twheel_op *op, ktime_t now, u64 timeout)
{
	struct twheel_touch_entry *te = twheel_touch_entry(e);

	te->timeout_ns = op->flags & TWHEEL_OPF_ABSTIME ? ctx->default_timeout_ns : timeout;
	/* Set up with the default timeout's reach: only a timeout of its own may widen it. */
	if (unlikely(op->flags & TWHEEL_OPF_TIMEOUT) && te->timeout_ns > ctx->touch_timeout_max_ns)
		twheel_touch_reach(ctx, te->timeout_ns);
	/* Stamps up to now are no touch; nor what a slot holds at binding. */
	te->armed_ns = ktime_to_ns(now);
	if (op->flags & TWHEEL_OPF_TOUCH) {
		te->slot = op->slot;
		if (op->slot != TWHEEL_SLOT_NONE)
			te->seen = twheel_touch_stamp(ctx, op->slot);
	}
}

void twheel_touch_reach(struct twheel_ctx *ctx, u64 timeout_ns)
{
	/*
	 * The hook looks on a cascade only in the last eighth of a timeout
	 * (twheel_touch_lazy()): the core need not call it for moves
	 * further ahead than the longest timeout's eighth. Only grows, so
	 * no id's reach is cut.
	 */
	if (timeout_ns > ctx->touch_timeout_max_ns) {
		ctx->touch_timeout_max_ns = timeout_ns;
		ctx->wheel.lazy_ahead = div64_u64(timeout_ns / 8, ctx->tick_ns);
	}
}

/*
 * The core's lazy hook, asked when @e's deadline comes and when a
 * cascade moves it before then: a touch since the deadline was set
 * re-arms it to the touch plus its timeout, if that is a later tick
 * than its deadline. On a cascade it looks only in the last eighth of
 * the timeout, where an id refreshed at least once a timeout has been
 * touched: a look earlier would mostly find nothing and be made again
 * when the deadline comes (the core does not even call it for moves
 * beyond the longest timeout's eighth: twheel_touch_reach()). A stamp
 * from the future counts as the present when the deadline comes (on a
 * cascade it is left for then). One load from memory the kernel owns;
 * the value is untrusted.
 */
bool twheel_touch_lazy(struct tw_wheel *w, struct tw_entry *e, u64 now_ns, u64 *expires)
{
	struct twheel_ctx *ctx = container_of(w, struct twheel_ctx, wheel);
	struct twheel_touch_entry *te = twheel_touch_entry(e);
	u64 touched, tick, left_ns, left = e->expires - w->clk;

	lockdep_assert_held(&ctx->lock);
	if (te->slot == TWHEEL_SLOT_NONE)
		return false;
	if (left && (check_mul_overflow(left, ctx->tick_ns, &left_ns) ||
		     left_ns > te->timeout_ns / 8))
		return false;
	touched = twheel_touch_stamp(ctx, te->slot);
	if (touched <= te->armed_ns || touched == te->seen)
		return false;
	/*
	 * On a cascade, only a stamp from before the work began: one from
	 * the future (garbage, or a clock ahead) is the present's when the
	 * deadline comes, as if the look had been made only then.
	 */
	if (left && touched > now_ns)
		return false;
	te->seen = touched;
	/*
	 * @now_ns was read when the work began; a stamp stored since is no
	 * stamp from the future, and re-arming from @now_ns would make the
	 * id's deadline earlier than that touch's. Only a stamp past the
	 * clock read again here is clamped.
	 */
	if (touched > now_ns)
		touched = min_t(u64, touched, ktime_to_ns(twheel_ctx_now(ctx)));
	tick = twheel_deadline_tick(ctx, ns_to_ktime(touched), te->timeout_ns);
	/*
	 * Not later than the deadline (the clock's tick when it has come):
	 * no gain, and on a cascade an earlier one (a deadline set absolute,
	 * past touch + timeout) must not be taken.
	 */
	if (!tw_after(tick, e->expires))
		return false;
	te->armed_ns = touched;
	*expires = tick;
	WRITE_ONCE(ctx->touch_rearms, ctx->touch_rearms + 1);
	trace_twheel_touch_rearm(ctx->serial, e->id, twheel_to_user(ctx, touched),
				 twheel_to_user(ctx, twheel_tick_to_ns(ctx, tick)));
	return true;
}
