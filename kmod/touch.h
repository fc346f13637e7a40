/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A wheel's touch table: slots of u64 stamps in pages shared with the
 * process that maps them. See touch.c and "Touch table" in the uapi.
 */
#ifndef TWHEEL_TOUCH_H
#define TWHEEL_TOUCH_H

#include <linux/mm_types.h>
#include <linux/types.h>

/**
 * struct twheel_touch_table - the table
 * @pages:	the table's pages, charged to the memory cgroup of setup's
 *		caller, NULL for a wheel without a table.
 * @nr_pages:	how many.
 * @slots:	how many slots; 0 for a wheel without a table.
 *
 * Fixed from setup to release.
 */
struct twheel_touch_table {
	struct page **pages;
	unsigned int nr_pages;
	u32 slots;
};

/* Pages a table of @slots slots takes. */
unsigned int twheel_touch_pages(u32 slots);

/* Allocate a zeroed table of @slots slots. Process context, may sleep. */
int twheel_touch_init(struct twheel_touch_table *t, u32 slots);
void twheel_touch_free(struct twheel_touch_table *t);

/*
 * The stamp in slot @slot (< t->slots), as userspace last stored it:
 * any value. Never faults, never sleeps.
 */
u64 twheel_touch_read(const struct twheel_touch_table *t, u32 slot);

/* Map the table into @vma: the file's mmap for a wheel with a table. */
int twheel_touch_mmap(struct twheel_touch_table *t, struct vm_area_struct *vma);

#endif /* TWHEEL_TOUCH_H */
