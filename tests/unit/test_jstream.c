// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* include/xtcam/jstream.h: an array written element by element is the
 * array json-c writes whole, byte for byte, in every output style. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xtcam/jstream.h"

static unsigned int seed = 12345;

static unsigned int rnd(unsigned int n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

/* a value of some depth: what `rule show` prints, and more */
static json_object *value(int depth)
{
	static const char *const strs[] = { "", "drop", "a/b", "q\"uote", "tab\there",
					    "nl\nx", "\xc3\xa9t\xc3\xa9", "10.0.0.0/8" };
	json_object *o;
	unsigned int i, n;

	switch (depth > 0 ? rnd(6) : rnd(4)) {
	case 0:
		return json_object_new_int64((int64_t)rnd(100000) - 5);
	case 1:
		return json_object_new_string(strs[rnd(8)]);
	case 2:
		return rnd(2) ? json_object_new_double(rnd(1000) / 8.0) : NULL;
	case 3:
		return json_object_new_boolean(rnd(2));
	case 4:
		o = json_object_new_array();
		for (i = 0, n = rnd(4); i < n; i++)
			json_object_array_add(o, value(depth - 1));
		return o;
	default:
		o = json_object_new_object();
		for (i = 0, n = rnd(5); i < n; i++) {
			char k[16];

			snprintf(k, sizeof(k), "k%u", i);
			json_object_object_add(o, k, value(depth - 1));
		}
		return o;
	}
}

Test(json_stream, matches_json_c)
{
	static const int styles[] = {
		JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE,
		JSON_C_TO_STRING_PLAIN,
		JSON_C_TO_STRING_SPACED,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB,
	};
	size_t s, round, i;

	for (s = 0; s < sizeof(styles) / sizeof(styles[0]); s++) {
		for (round = 0; round < 200; round++) {
			json_object *arr = json_object_new_array();
			size_t n = round % 7, len = 0;
			struct xtcam_jstream js;
			char *got = NULL, *want;
			FILE *f = open_memstream(&got, &len);

			cr_assert_not_null(f);
			for (i = 0; i < n; i++)
				json_object_array_add(arr, value(3));
			xtcam_jstream_begin(&js, f, styles[s]);
			for (i = 0; i < n; i++)
				cr_assert_eq(xtcam_jstream_add(&js, json_object_array_get_idx(arr, i)), 0);
			xtcam_jstream_end(&js);
			fclose(f);
			cr_assert_eq(asprintf(&want, "%s\n",
					      json_object_to_json_string_ext(arr, styles[s])), (int)
				     strlen(json_object_to_json_string_ext(arr, styles[s])) + 1);
			cr_assert_str_eq(got, want, "style %zu, %zu elements", s, n);
			free(got);
			free(want);
			json_object_put(arr);
		}
	}
}
