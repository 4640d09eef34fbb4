/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Intrusive circular doubly-linked lists, with the names and argument order
 * of the Linux kernel's <linux/list.h> so that code written against the
 * kernel's flow_block API reads the same here.  Userspace only.
 *
 * A list is a `struct list_head` sentinel; entries embed a `struct
 * list_head` and are recovered with list_entry()/container_of().
 *
 * One deliberate difference from the kernel: list_del() leaves the removed
 * entry pointing at itself (the kernel poisons it).  So after list_del(),
 * list_empty(&entry) is true and a second list_del() is harmless; the
 * flow_block core relies on that to unlink a callback from a driver list
 * whether or not the driver already did.
 */
#ifndef XTCAM_LIST_H
#define XTCAM_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
/* The structure of type `type` whose member `member` is at `ptr`. */
#define container_of(ptr, type, member) ({				\
	const __typeof__(((type *)0)->member) *__mptr = (ptr);		\
	(type *)((char *)__mptr - offsetof(type, member)); })
#endif

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

/* Link `n` between two consecutive entries. */
static inline void __list_link(struct list_head *n, struct list_head *prev,
			       struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert `n` right after `head` (stack order). */
static inline void list_add(struct list_head *n, struct list_head *head)
{
	__list_link(n, head, head->next);
}

/* Insert `n` right before `head`, i.e. at the end of the list (queue). */
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	__list_link(n, head->prev, head);
}

/* Unlink `e` from whatever list it is on; `e` is left self-linked. */
static inline void list_del(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	INIT_LIST_HEAD(e);
}

/* Same as list_del() here; kept for code written against the kernel. */
static inline void list_del_init(struct list_head *e)
{
	list_del(e);
}

/* Take `e` off its list and put it at the front of `head`. */
static inline void list_move(struct list_head *e, struct list_head *head)
{
	list_del(e);
	list_add(e, head);
}

/* Take `e` off its list and put it at the end of `head`. */
static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	list_del(e);
	list_add_tail(e, head);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

static inline bool list_is_singular(const struct list_head *head)
{
	return !list_empty(head) && head->next == head->prev;
}

/* Move every entry of `list` to the end of `head`; `list` ends up empty. */
static inline void list_splice_tail_init(struct list_head *list,
					 struct list_head *head)
{
	struct list_head *first = list->next, *last = list->prev;

	if (list_empty(list))
		return;
	first->prev = head->prev;
	head->prev->next = first;
	last->next = head;
	head->prev = last;
	INIT_LIST_HEAD(list);
}

/* Number of entries (walks the list). */
static inline size_t list_count_nodes(const struct list_head *head)
{
	const struct list_head *p;
	size_t n = 0;

	for (p = head->next; p != head; p = p->next)
		n++;
	return n;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) \
	list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) \
	list_entry((head)->prev, type, member)
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, __typeof__(*(pos)), member)
#define list_prev_entry(pos, member) \
	list_entry((pos)->member.prev, __typeof__(*(pos)), member)
#define list_entry_is_head(pos, head, member) (&(pos)->member == (head))

#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, __typeof__(*pos), member);	\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_next_entry(pos, member))

#define list_for_each_entry_reverse(pos, head, member)			\
	for (pos = list_last_entry(head, __typeof__(*pos), member);	\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_prev_entry(pos, member))

/* Safe against removal of `pos` from the list inside the loop body. */
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, __typeof__(*pos), member),	\
	     n = list_next_entry(pos, member);				\
	     !list_entry_is_head(pos, head, member);			\
	     pos = n, n = list_next_entry(n, member))

#define list_for_each_entry_safe_reverse(pos, n, head, member)		\
	for (pos = list_last_entry(head, __typeof__(*pos), member),	\
	     n = list_prev_entry(pos, member);				\
	     !list_entry_is_head(pos, head, member);			\
	     pos = n, n = list_prev_entry(n, member))

#endif
