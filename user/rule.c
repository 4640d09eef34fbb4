// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* struct xtcam_rule helpers. */
#include <string.h>
#include "xtcam/rule.h"

void xtcam_rule_init(struct xtcam_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->sport_lo = 0;
	r->sport_hi = 0xffff;
	r->dport_lo = 0;
	r->dport_hi = 0xffff;
	r->action.type = XTCAM_ACT_PASS;
}
