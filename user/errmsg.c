// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "errmsg.h"

void xtcam_set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}
