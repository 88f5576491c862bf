/* util.c - see util.h */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int parse_uint(const char *what, const char *s, uint64_t max, uint64_t *out, struct nsrun_error *err)
{
	char *end = NULL;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)s[0]))
		return error_set(err, 0, "%s: \"%s\": not a number", what, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return error_set(err, 0, "%s: \"%s\": not a number", what, s);
	if (errno == ERANGE || v > max)
		return error_set(err, 0, "%s: \"%s\": too large (at most %llu)", what, s,
				 (unsigned long long)max);
	*out = v;
	return 0;
}

int parse_size_bytes(const char *what, const char *s, uint64_t *out, struct nsrun_error *err)
{
	char *end = NULL;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || !isdigit((unsigned char)s[0]))
		return error_set(err, 0, "%s: \"%s\": not a size (use a number with k, m or g)", what,
				 s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return error_set(err, 0, "%s: \"%s\": too large", what, s);
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'b': shift = 0; break;
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		default:
			return error_set(err, 0, "%s: \"%s\": unknown suffix (use k, m or g)", what, s);
		}
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if ((*end == 'b' || *end == 'B') && shift)
			end++;
		if (*end)
			return error_set(err, 0, "%s: \"%s\": unknown suffix (use k, m or g)", what, s);
	}
	if (shift && v > (UINT64_MAX >> shift))
		return error_set(err, 0, "%s: \"%s\": too large", what, s);
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_duration_us(const char *what, const char *s, uint64_t *out, struct nsrun_error *err)
{
	uint64_t whole = 0, frac_us = 0, scale = 100000;
	const char *p = s;

	if (!s || !*s)
		return error_set(err, 0, "%s: \"\": not a duration in seconds", what);
	if (!isdigit((unsigned char)*p) && *p != '.')
		return error_set(err, 0, "%s: \"%s\": not a duration in seconds", what, s);
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX / 1000000 - 10) / 10)
			return error_set(err, 0, "%s: \"%s\": too large", what, s);
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p) && p - s == 1)
			return error_set(err, 0, "%s: \"%s\": not a duration in seconds", what, s);
		for (; isdigit((unsigned char)*p); p++) {
			frac_us += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 's' && p[1] == '\0')
		p++;
	if (*p)
		return error_set(err, 0, "%s: \"%s\": not a duration in seconds", what, s);
	*out = whole * 1000000 + frac_us;
	/* only a zero means "none": a positive value below 1 us is 1 us, not unlimited */
	if (*out == 0 && strpbrk(s, "123456789"))
		*out = 1;
	return 0;
}

int strv_push(struct strv *sv, const char *s)
{
	char *copy;

	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 8;
		char **v = realloc(sv->v, cap * sizeof(*v));
		if (!v)
			return -1;
		sv->v = v;
		sv->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -1;
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

static size_t env_key_len(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq ? (size_t)(eq - kv) : strlen(kv);
}

int strv_setenv(struct strv *sv, const char *kv)
{
	size_t klen = env_key_len(kv);

	for (size_t i = 0; i < sv->n; i++) {
		if (env_key_len(sv->v[i]) == klen && strncmp(sv->v[i], kv, klen) == 0) {
			char *copy = strdup(kv);
			if (!copy)
				return -1;
			free(sv->v[i]);
			sv->v[i] = copy;
			return 0;
		}
	}
	return strv_push(sv, kv);
}

struct env_entry {
	const char *kv;
	size_t klen;
	size_t idx;
};

static int env_entry_order(const void *a, const void *b)
{
	const struct env_entry *x = a, *y = b;
	int c = memcmp(x->kv, y->kv, x->klen < y->klen ? x->klen : y->klen);

	if (c)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int strv_setenv_many(struct strv *sv, const char *const *kvs, size_t n)
{
	size_t total = sv->n + n;
	struct env_entry *e = calloc(total ? total : 1, sizeof(*e));
	const char **at = calloc(total ? total : 1, sizeof(*at));
	struct strv out = { 0 };
	int rc = 0;

	if (!e || !at) {
		free(e);
		free(at);
		return -1;
	}
	for (size_t i = 0; i < total; i++) {
		e[i].kv = i < sv->n ? sv->v[i] : kvs[i - sv->n];
		e[i].klen = env_key_len(e[i].kv);
		e[i].idx = i;
	}
	/* by key, then by place: each key's first place gets its last value */
	qsort(e, total, sizeof(*e), env_entry_order);
	for (size_t i = 0, j; i < total; i = j) {
		for (j = i + 1; j < total && e[j].klen == e[i].klen && memcmp(e[j].kv, e[i].kv, e[i].klen) == 0; j++)
			;
		at[e[i].idx] = e[j - 1].kv;
	}
	for (size_t i = 0; i < total && !rc; i++)
		if (at[i] && strv_push(&out, at[i]) < 0)
			rc = -1;
	free(e);
	free(at);
	if (rc) {
		strv_free(&out);
		return -1;
	}
	strv_free(sv);
	*sv = out;
	return 0;
}

const char *strv_getenv(const struct strv *sv, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < sv->n; i++) {
		if (strncmp(sv->v[i], key, klen) == 0 && sv->v[i][klen] == '=')
			return sv->v[i] + klen + 1;
	}
	return NULL;
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void format_seconds(uint64_t us, char *buf, size_t len)
{
	char frac[8];
	size_t n;

	if (us % 1000000 == 0) {
		snprintf(buf, len, "%llus", (unsigned long long)(us / 1000000));
		return;
	}
	/* whole microseconds, never an exponent ("0.000001s", not "1e-06s") */
	snprintf(frac, sizeof(frac), "%06llu", (unsigned long long)(us % 1000000));
	for (n = strlen(frac); n > 1 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%llu.%ss", (unsigned long long)(us / 1000000), frac);
}

void format_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1 << 20)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes >= 1 << 10)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

/* Appends the shell word of s at buf + *o; false (nothing appended) if it does not fit. */
static bool quote_word(const char *s, char *buf, size_t len, size_t *o)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
	bool plain = s[0] && strspn(s, safe) == strlen(s);
	size_t at = *o;

	if (!plain && at < len)
		buf[at++] = '\'';
	for (const char *p = s; *p && at < len; p++) {
		if (*p == '\'' && !plain) {
			if (len - at < 4)
				return false;
			memcpy(buf + at, "'\\''", 4);
			at += 4;
		} else {
			buf[at++] = *p;
		}
	}
	if (!plain && at < len)
		buf[at++] = '\'';
	if (at >= len)
		return false;
	*o = at;
	return true;
}

char *shell_quote_join(const char *const *v, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (size_t i = 0; i < n; i++) {
		bool fits = !i || o + 1 < len;
		if (fits && i)
			buf[o++] = ' ';
		size_t before = o;
		if (!fits || !quote_word(v[i], buf, len, &o)) {
			o = before;
			if (len > 4) { /* "..." says a word was left out */
				if (o > len - 4)
					o = len - 4;
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
	}
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}

bool is_env_assignment(const char *s)
{
	const char *p = s;

	if (!(isalpha((unsigned char)*p) || *p == '_'))
		return false;
	for (; *p && *p != '='; p++) {
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	}
	return *p == '=';
}

size_t json_scan_depth(const char *buf, size_t len, int max_depth)
{
	bool in_str = false, esc = false;
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max_depth)
				return i;
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	return len;
}

size_t json_scan_nul(const char *buf, size_t len)
{
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		if (!in_str) {
			in_str = buf[i] == '"';
		} else if (buf[i] == '"') {
			in_str = false;
		} else if (buf[i] == '\\' && i + 1 < len) {
			if (buf[i + 1] == 'u' && len - i >= 6 && memcmp(buf + i + 2, "0000", 4) == 0)
				return i;
			i++; /* the escaped character: \\ or \" does not end or start anything */
		}
	}
	return len;
}
