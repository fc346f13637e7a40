// SPDX-License-Identifier: GPL-2.0
/*
 * Touch tables: memory a process and the kernel share, in which the
 * process refreshes ids by storing the time into their slots, with no
 * system call; the kernel reads a slot only when its id's deadline comes
 * (dev.c, twheel_touch_lazy()).
 *
 * The table is ordinary pages, allocated at setup with GFP_KERNEL_ACCOUNT
 * (charged to the caller's memory cgroup; lowmem, so the kernel reads them
 * through the direct map) and handed to userspace one page at a time by
 * the fault handler. The kernel side reads a slot with one READ_ONCE() of
 * an aligned u64 in memory it owns: it never faults and never sleeps, so
 * it may run under the wheel's lock, and whatever userspace writes there
 * is only ever a number to it.
 *
 * Lifetime: a mapping holds a reference to the file, so the table lives
 * until the last mapping and the last descriptor are gone; pages mapped
 * into a process hold their own reference as well.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "compat.h"
#include "touch.h"

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

void twheel_touch_free(struct twheel_touch_table *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_pages; i++)
		put_page(t->pages[i]);
	kvfree(t->pages);
	t->pages = NULL;
	t->nr_pages = 0;
	t->slots = 0;
}

u64 twheel_touch_read(const struct twheel_touch_table *t, u32 slot)
{
	const u64 *page = page_address(t->pages[slot / TWHEEL_SLOTS_PER_PAGE]);

	/* Userspace stores into it whenever it likes: one untorn load. */
	return READ_ONCE(page[slot % TWHEEL_SLOTS_PER_PAGE]);
}

static vm_fault_t twheel_touch_fault(struct vm_fault *vmf)
{
	struct twheel_touch_table *t = vmf->vma->vm_private_data;
	struct page *page;

	if (vmf->pgoff >= t->nr_pages)
		return VM_FAULT_SIGBUS;
	page = t->pages[vmf->pgoff];
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
	vm_flags_set(vma, VM_DONTEXPAND);
	vma->vm_private_data = t;
	vma->vm_ops = &twheel_touch_vm_ops;
	return 0;
}
