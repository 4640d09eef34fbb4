// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The modes and the backends that serve them (driver.h): the one place
 * that names them.  The order is the order `mode auto` tries them in.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "driver.h"
#include "loader_int.h"

static const struct {
	const char *name;
	enum xtcam_mode mode;
	const struct xtcam_driver_ops *ops;
} modes[XTCAM_NDRIVERS] = {
	{ "hw", XTCAM_MODE_HW, &xtcam_hw_ops },
	{ "native", XTCAM_MODE_NATIVE, &xtcam_xdp_ops },
	{ "generic", XTCAM_MODE_GENERIC, &xtcam_xdp_ops },
};

void xtcam_drivers_init(struct xtcam_ctx *c)
{
	size_t i, k;

	c->nimpl = 0;
	for (i = 0; i < XTCAM_NDRIVERS; i++) {
		c->drv[i] = (struct xtcam_driver){
			.be = { modes[i].name, modes[i].ops->setup, c },
			.mode = modes[i].mode,
			.ops = modes[i].ops,
		};
		for (k = 0; k < c->nimpl && c->impl[k] != modes[i].ops; k++)
			;
		if (k == c->nimpl)
			c->impl[c->nimpl++] = modes[i].ops;
	}
	for (k = 0; k < c->nimpl; k++)
		if (c->impl[k]->init)
			c->impl[k]->init(c);
}

int xtcam_drivers_register(struct xtcam_ctx *c)
{
	size_t i;
	int e;

	for (i = 0; i < XTCAM_NDRIVERS; i++) {
		e = xtcam_core_backend_add(c->core, &c->drv[i].be);
		if (e)
			return e;
	}
	return 0;
}

void xtcam_drivers_fini(struct xtcam_ctx *c)
{
	size_t k;

	for (k = 0; k < c->nimpl; k++)
		if (c->impl[k]->fini)
			c->impl[k]->fini(c);
}

struct xtcam_driver *xtcam_driver_named(struct xtcam_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; name && i < XTCAM_NDRIVERS; i++)
		if (!strcmp(c->drv[i].be.name, name))
			return &c->drv[i];
	return NULL;
}

struct xtcam_driver *xtcam_driver_of_mode(struct xtcam_ctx *c, enum xtcam_mode mode)
{
	size_t i;

	for (i = 0; i < XTCAM_NDRIVERS; i++)
		if (c->drv[i].mode == mode)
			return &c->drv[i];
	return NULL;
}

void xtcam_driver_names(struct xtcam_ctx *c, char *buf, size_t len)
{
	size_t i, n = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (i = 0; i < XTCAM_NDRIVERS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", c->drv[i].be.name);
}
