/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* The error message slot of libxtcam's functions (err, errlen); internal. */
#ifndef XTCAM_ERRMSG_H
#define XTCAM_ERRMSG_H

#include <stddef.h>

/* Write a message into err (errlen bytes); nothing when err is NULL. */
void xtcam_set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
