/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Error pointers, as the kernel's <linux/err.h>: a function that returns a
 * pointer returns either a valid pointer or ERR_PTR(-errno), an address in
 * the last page of the address space that no allocation can have.  Test
 * with IS_ERR(), read the errno with PTR_ERR().  Userspace only.
 */
#ifndef XTCAM_ERR_H
#define XTCAM_ERR_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_ERRNO 4095

#define IS_ERR_VALUE(x) ((uintptr_t)(x) >= (uintptr_t)-MAX_ERRNO)

static inline void *ERR_PTR(long error)
{
	return (void *)(intptr_t)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)(intptr_t)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE(ptr);
}

/* An error pointer of one type as another. */
static inline void *ERR_CAST(const void *ptr)
{
	return (void *)ptr;
}

static inline bool IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR_VALUE(ptr);
}

#endif
