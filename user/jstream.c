// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * JSON arrays written element by element (see xtcam/jstream.h).  Each
 * element is printed by json-c itself as the only element of an array,
 * and the brackets are cut off: so it is indented and separated exactly
 * as in the whole array.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "xtcam/jstream.h"

static bool pretty(const struct xtcam_jstream *s)
{
	return s->flags & JSON_C_TO_STRING_PRETTY;
}

void xtcam_jstream_begin(struct xtcam_jstream *s, FILE *f, int flags)
{
	s->f = f;
	s->flags = flags;
	s->n = 0;
	fputs(pretty(s) ? "[\n" : "[", f);
}

int xtcam_jstream_add(struct xtcam_jstream *s, json_object *o)
{
	json_object *one = json_object_new_array();
	const char *t;
	size_t len, head, tail;

	if (!one)
		return -ENOMEM;
	json_object_array_add(one, json_object_get(o));
	/* "[X]", pretty "[\n  X\n]"; spaced "[ X ]" */
	t = json_object_to_json_string_ext(one, s->flags);
	len = t ? strlen(t) : 0;
	head = pretty(s) ? 2 : 1;      /* spaced keeps json-c's space before X */
	tail = pretty(s) ? 2 : (s->flags & JSON_C_TO_STRING_SPACED) ? 2 : 1;
	if (len < head + tail) {
		json_object_put(one);
		return -EINVAL;
	}
	if (s->n)
		fputs(pretty(s) ? ",\n" : ",", s->f);
	fwrite(t + head, 1, len - head - tail, s->f);
	s->n++;
	json_object_put(one);
	return 0;
}

void xtcam_jstream_end(struct xtcam_jstream *s)
{
	if (pretty(s) && s->n)
		fputs("\n", s->f);
	fputs((s->flags & JSON_C_TO_STRING_SPACED) && !pretty(s) ? " ]\n" : "]\n", s->f);
}
