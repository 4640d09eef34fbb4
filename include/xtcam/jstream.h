/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A JSON array written element by element: the same bytes as
 * json_object_to_json_string_ext() gives for the whole array (with the
 * same flags), followed by a newline as puts() adds, without ever holding
 * more than one element.
 */
#ifndef XTCAM_JSTREAM_H
#define XTCAM_JSTREAM_H

#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>

struct xtcam_jstream {
	FILE *f;
	int flags;              /* JSON_C_TO_STRING_* */
	size_t n;               /* elements written */
};

void xtcam_jstream_begin(struct xtcam_jstream *s, FILE *f, int flags);
/* The next element (not consumed: the caller still puts it). */
int xtcam_jstream_add(struct xtcam_jstream *s, json_object *o);
void xtcam_jstream_end(struct xtcam_jstream *s);

#endif
