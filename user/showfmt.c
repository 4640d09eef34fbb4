// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A rule of a listing as `xtcam rule show` prints it (see xtcam_shown in
 * xtcam/loader.h): its two lines of text, or its JSON object.  A listing
 * of a big block prints millions of these, so both are written straight
 * into the caller's buffer, without printf per field and without a json-c
 * object per rule.  The JSON is json-c's text of xtcam_shown_object(), byte
 * for byte: written by hand where that text is plain (no indentation, the
 * strings printable ASCII without quote or backslash), and by json-c
 * itself for the rest (a pretty listing, a string to escape, a time since
 * the last hit).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "xtcam/compile.h"
#include "xtcam/loader.h"
#include "xtcam/syntax.h"

/* what is written into buf: o bytes of len; full once it would not fit */
struct out {
	char *buf;
	size_t len, o;
	bool full;
};

static void put(struct out *w, const char *s, size_t n)
{
	if (w->full || n >= w->len - w->o) {
		w->full = true;
		return;
	}
	memcpy(w->buf + w->o, s, n);
	w->o += n;
}

static void puts_(struct out *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_u64(struct out *w, unsigned long long v)
{
	char d[24];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, d + i, sizeof(d) - i);
}

/* as "%" PRId64 */
static void put_i64(struct out *w, long long v)
{
	if (v < 0) {
		put(w, "-", 1);
		put_u64(w, 0ull - (unsigned long long)v);
	} else {
		put_u64(w, (unsigned long long)v);
	}
}

/* the text's escape of a device or namespace name: control characters
 * as \xNN */
static void put_esc(struct out *w, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			char x[8];

			snprintf(x, sizeof(x), "\\x%02x", c);
			put(w, x, 4);
		} else {
			put(w, (const char *)&c, 1);
		}
	}
}

int xtcam_shown_text(const struct xtcam_shown *s, char *buf, size_t len)
{
	const struct xtcam_rule_action *a;
	struct out w = { buf, len, 0, false };
	char m[4096];
	int e;

	if (!s || !s->rule || !buf || !len)
		return -EINVAL;
	a = &s->rule->action;
	e = xtcam_rule_match_format(s->rule, s->spec, m, sizeof(m));
	if (e < 0)
		return e;
	puts_(&w, "handle ");
	put_u64(&w, s->rule->handle);
	puts_(&w, " prio ");
	put_u64(&w, s->rule->prio);
	put(&w, m, (size_t)e);
	puts_(&w, " action ");
	puts_(&w, xtcam_action_name(a->type));
	if (a->type == XTCAM_ACT_REDIRECT) {
		puts_(&w, " dev ");
		put_esc(&w, a->dev, sizeof(a->dev));
		if (a->netns[0]) {
			puts_(&w, " netns ");
			put_esc(&w, a->netns, sizeof(a->netns));
		}
	} else if (a->type == XTCAM_ACT_CPU) {
		put(&w, " ", 1);
		put_u64(&w, a->cpu);
	}
	puts_(&w, "\n    entries ");
	put_u64(&w, xtcam_rule_entries(s->rule));
	puts_(&w, " packets ");
	put_u64(&w, s->packets);
	puts_(&w, " bytes ");
	put_u64(&w, s->bytes);
	if (s->last_used >= 0) {
		char u[64];
		int n = snprintf(u, sizeof(u), " used %.1fs ago", s->last_used);

		if (n < 0 || (size_t)n >= sizeof(u))
			return -ENOSPC;
		put(&w, u, (size_t)n);
	}
	put(&w, "\n", 1);
	if (w.full)
		return -ENOSPC;
	buf[w.o] = 0;
	return (int)w.o;
}

json_object *xtcam_shown_object(const struct xtcam_shown *s)
{
	json_object *o = json_object_new_object(), *m, *a;

	if (!o)
		return NULL;
	m = xtcam_rule_match_json(s->rule, s->spec);
	a = xtcam_action_json(&s->rule->action);
	if (!m || !a) {
		json_object_put(m);
		json_object_put(a);
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "handle", json_object_new_int64(s->rule->handle));
	json_object_object_add(o, "prio", json_object_new_int64(s->rule->prio));
	json_object_object_add(o, "match", m);
	json_object_object_add(o, "action", a);
	json_object_object_add(o, "entries", json_object_new_int64(xtcam_rule_entries(s->rule)));
	json_object_object_add(o, "packets", json_object_new_int64((int64_t)s->packets));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)s->bytes));
	json_object_object_add(o, "last_used", s->last_used >= 0 ?
			       json_object_new_double(s->last_used) : NULL);
	return o;
}

/* a string json-c writes as it is, quoted (flags: without
 * JSON_C_TO_STRING_NOSLASHESCAPE, it escapes '/') */
static bool plain_str(const char *s, size_t max, int flags)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' ||
		    (c == '/' && !(flags & JSON_C_TO_STRING_NOSLASHESCAPE)))
			return false;
	}
	return true;
}

/* a string plain_str() took, quoted: NUL-terminated, or of max bytes at most */
static void put_strn(struct out *w, const char *s, size_t max)
{
	put(w, "\"", 1);
	put(w, s, strnlen(s, max));
	put(w, "\"", 1);
}

static void put_str(struct out *w, const char *s)
{
	put(w, "\"", 1);
	puts_(w, s);
	put(w, "\"", 1);
}

struct jmatch {
	struct out *w;
	int flags;
	bool first;
};

static int match_one(void *arg, const char *name, const char *value)
{
	struct jmatch *j = arg;

	if (!plain_str(name, SIZE_MAX, j->flags) || !plain_str(value, SIZE_MAX, j->flags))
		return 1;
	if (!j->first)
		put(j->w, ",", 1);
	j->first = false;
	put_str(j->w, name);
	put(j->w, ":", 1);
	put_str(j->w, value);
	return 0;
}

/* the plain text by hand: 1 when it needs json-c (left in w unfinished) */
static int json_plain(const struct xtcam_shown *s, int flags, struct out *w)
{
	const struct xtcam_rule_action *a = &s->rule->action;
	struct jmatch j = { w, flags, true };
	int e;

	if (s->last_used >= 0)
		return 1;       /* a double: as json-c prints it */
	puts_(w, "{\"handle\":");
	put_i64(w, s->rule->handle);
	puts_(w, ",\"prio\":");
	put_i64(w, s->rule->prio);
	puts_(w, ",\"match\":{");
	e = xtcam_rule_match_each(s->rule, s->spec, match_one, &j);
	if (e)
		return e;
	puts_(w, "},\"action\":{\"type\":");
	put_str(w, xtcam_action_name(a->type));
	if (a->type == XTCAM_ACT_REDIRECT) {
		if (!plain_str(a->dev, sizeof(a->dev), flags) ||
		    !plain_str(a->netns, sizeof(a->netns), flags))
			return 1;
		puts_(w, ",\"dev\":");
		put_strn(w, a->dev, sizeof(a->dev));
		if (a->netns[0]) {
			puts_(w, ",\"netns\":");
			put_strn(w, a->netns, sizeof(a->netns));
		}
	} else if (a->type == XTCAM_ACT_CPU) {
		puts_(w, ",\"cpu\":\"");
		put_u64(w, a->cpu);
		put(w, "\"", 1);
	}
	puts_(w, "},\"entries\":");
	put_i64(w, xtcam_rule_entries(s->rule));
	puts_(w, ",\"packets\":");
	put_i64(w, (int64_t)s->packets);
	puts_(w, ",\"bytes\":");
	put_i64(w, (int64_t)s->bytes);
	puts_(w, ",\"last_used\":null}");
	return 0;
}

int xtcam_shown_json(const struct xtcam_shown *s, int flags, char *buf, size_t len)
{
	struct out w = { buf, len, 0, false };
	json_object *o;
	const char *t;
	int e = 1;

	if (!s || !s->rule || !buf || !len)
		return -EINVAL;
	if (!(flags & ~JSON_C_TO_STRING_NOSLASHESCAPE))
		e = json_plain(s, flags, &w);
	if (e < 0)
		return e;
	if (e) {
		w.o = 0;
		w.full = false;
		o = xtcam_shown_object(s);
		if (!o)
			return -ENOMEM;
		t = json_object_to_json_string_ext(o, flags);
		if (t)
			puts_(&w, t);
		json_object_put(o);
		if (!t)
			return -ENOMEM;
	}
	if (w.full)
		return -ENOSPC;
	buf[w.o] = 0;
	return (int)w.o;
}
