/* image_ref.c - see image_ref.h */
#include <stdio.h>
#include <string.h>

#include "image_ref.h"

const char image_ref_hint[] = "a reference is [REGISTRY[:PORT]/]NAME[:TAG][@sha256:DIGEST], e.g. redis:7, " \
		 "library/postgres:16-alpine, 127.0.0.1:5000/team/tool:1 (NAME lower case)";

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* records why in *err (a const char **: the reason, static text) */
static int bad(const char **err, const char *s, const char *why)
{
	(void)s;
	*err = why;
	return -1;
}

/* path-component := [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*, components joined by '/'. */
static const char *check_path(const char *p, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return "the name is empty";
	while (i < n) {
		if (!is_lower_alnum(p[i])) {
			if (p[i] >= 'A' && p[i] <= 'Z')
				return "the repository name must be lower case";
			return "each part of the name must start with a lower-case letter or digit";
		}
		while (i < n && is_lower_alnum(p[i]))
			i++;
		if (i == n)
			break;
		if (p[i] == '/') {
			i++;
			if (i == n)
				return "the name ends with '/'";
			continue;
		}
		size_t sep = i;
		if (p[i] == '.')
			i++;
		else if (p[i] == '_')
			i += (i + 1 < n && p[i + 1] == '_') ? 2 : 1;
		else if (p[i] == '-')
			while (i < n && p[i] == '-')
				i++;
		else if (p[i] >= 'A' && p[i] <= 'Z')
			return "the repository name must be lower case";
		else
			return "the name holds a character other than a-z, 0-9, '.', '_', '-' and '/'";
		if (i == n || !is_lower_alnum(p[i]))
			return sep == i - 1 && p[sep] == '.' ? "a '.' in the name must stand between letters or digits"
							     : "a separator in the name must stand between letters or digits";
	}
	return NULL;
}

/* host[:port]: domain components [A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])? joined
 * by '.', or an [IPv6] address. */
static const char *check_domain(const char *d, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return "the registry is empty";
	if (d[0] == '[') {
		for (i = 1; i < n && d[i] != ']'; i++)
			if (!is_hex(d[i]) && !(d[i] >= 'A' && d[i] <= 'F') && d[i] != ':')
				return "the registry's IPv6 address holds a character other than hex digits and ':'";
		if (i == n || i == 1)
			return "the registry's IPv6 address is not closed with ']'";
		i++;
	} else {
		while (i < n && d[i] != ':') {
			size_t start = i;
			while (i < n && (is_alnum(d[i]) || d[i] == '-'))
				i++;
			if (i == start || d[start] == '-' || d[i - 1] == '-')
				return "each part of the registry's host name must be letters, digits and inner '-'";
			if (i < n && d[i] == '.') {
				i++;
				if (i == n || d[i] == ':')
					return "the registry's host name ends with '.'";
			} else if (i < n && d[i] != ':') {
				return "the registry's host name holds a character other than letters, digits, '.' and '-'";
			}
		}
	}
	if (i < n) {
		if (d[i] != ':' || i + 1 == n || n - i - 1 > 5)
			return "the registry's port must be 1 to 5 digits after ':'";
		for (i++; i < n; i++)
			if (d[i] < '0' || d[i] > '9')
				return "the registry's port must be 1 to 5 digits after ':'";
	}
	return NULL;
}

int image_ref_check(const char *s, struct image_ref *ref, const char **err)
{
	size_t len = strlen(s);
	const char *at, *name = s, *slash, *colon, *e;
	size_t name_len;

	memset(ref, 0, sizeof(*ref));
	if (len == 0)
		return bad(err, s, "it is empty");
	if (len > IMAGE_REF_MAX)
		return bad(err, s, "it is longer than 512 characters");
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return bad(err, s, "it holds a space, control or non-ASCII character");
	at = strchr(s, '@');
	if (at) {
		const char *dg = at + 1;
		size_t hex = 0;
		if (strchr(dg, '@'))
			return bad(err, s, "it holds more than one '@'");
		if (strncmp(dg, "sha256:", 7) == 0)
			hex = 64;
		else if (strncmp(dg, "sha512:", 7) == 0)
			hex = 128;
		else
			return bad(err, s, "the digest must be sha256:HEX or sha512:HEX (the OCI image spec's)");
		if (strlen(dg + 7) != hex)
			return bad(err, s, hex == 64 ? "a sha256 digest is 64 hex digits" : "a sha512 digest is 128 hex digits");
		for (const char *h = dg + 7; *h; h++)
			if (!is_hex(*h))
				return bad(err, s, "the digest must be lower-case hex digits");
		snprintf(ref->digest, sizeof(ref->digest), "%s", dg);
		name_len = (size_t)(at - s);
	} else {
		name_len = len;
	}
	/* a ':' after the last '/' starts the tag; one before it is a port */
	slash = memrchr(name, '/', name_len);
	colon = memrchr(slash ? slash : name, ':', name_len - (size_t)((slash ? slash : name) - name));
	if (colon) {
		const char *t = colon + 1;
		size_t tl = name_len - (size_t)(t - name);
		if (tl == 0)
			return bad(err, s, "the tag after ':' is empty");
		if (tl > 128)
			return bad(err, s, "the tag is longer than 128 characters");
		if (!(is_alnum(t[0]) || t[0] == '_'))
			return bad(err, s, "the tag must start with a letter, digit or '_'");
		for (size_t i = 0; i < tl; i++)
			if (!(is_alnum(t[i]) || t[i] == '_' || t[i] == '.' || t[i] == '-'))
				return bad(err, s, "the tag holds a character other than letters, digits, '_', '.' and '-'");
		snprintf(ref->tag, sizeof(ref->tag), "%.*s", (int)tl, t);
		name_len = (size_t)(colon - name);
	}
	if (name_len == 0)
		return bad(err, s, "the name is empty");
	if (name_len > 255)
		return bad(err, s, "the name is longer than 255 characters");
	/* the first component is a registry if it has '.' or ':', is localhost or has capitals (docker's rule) */
	slash = memchr(name, '/', name_len);
	if (slash) {
		size_t dl = (size_t)(slash - name);
		bool domain = memchr(name, '.', dl) || memchr(name, ':', dl) || (dl == 9 && !strncmp(name, "localhost", 9));
		for (size_t i = 0; !domain && i < dl; i++)
			domain = name[i] >= 'A' && name[i] <= 'Z';
		if (domain) {
			if ((e = check_domain(name, dl)))
				return bad(err, s, e);
			snprintf(ref->domain, sizeof(ref->domain), "%.*s", (int)dl, name);
			name += dl + 1;
			name_len -= dl + 1;
		}
	}
	if (!ref->domain[0] || strcmp(ref->domain, "index.docker.io") == 0) {
		memset(ref->domain, 0, sizeof(ref->domain));
		snprintf(ref->domain, sizeof(ref->domain), "docker.io");
	}
	if ((e = check_path(name, name_len)))
		return bad(err, s, e);
	if (strcmp(ref->domain, "docker.io") == 0 && !memchr(name, '/', name_len))
		snprintf(ref->path, sizeof(ref->path), "library/%.*s", (int)name_len, name);
	else
		snprintf(ref->path, sizeof(ref->path), "%.*s", (int)name_len, name);
	if (strlen(ref->domain) + 1 + strlen(ref->path) > 255)
		return bad(err, s, "the name is longer than 255 characters");
	if (!ref->tag[0] && !ref->digest[0])
		snprintf(ref->tag, sizeof(ref->tag), "latest");
	return 0;
}

int image_ref_parse(const char *s, struct image_ref *ref, struct nsrun_error *err)
{
	const char *why = NULL;

	if (image_ref_check(s, ref, &why) == 0)
		return 0;
	error_set(err, 0, "invalid image reference \"%.160s\": %s", s, why);
	err->hint = image_ref_hint;
	return -1;
}

char *image_ref_string(const struct image_ref *ref, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s%s%s%s", ref->domain, ref->path, ref->tag[0] ? ":" : "", ref->tag,
			 ref->digest[0] ? "@" : "", ref->digest);

	return n < 0 || (size_t)n >= len ? NULL : buf;
}

char *image_ref_familiar(const struct image_ref *ref, char *buf, size_t len)
{
	bool hub = strcmp(ref->domain, "docker.io") == 0;
	const char *path = hub && strncmp(ref->path, "library/", 8) == 0 && !strchr(ref->path + 8, '/')
				   ? ref->path + 8 : ref->path;
	int n = snprintf(buf, len, "%s%s%s%s%s%s%s", hub ? "" : ref->domain, hub ? "" : "/", path,
			 ref->tag[0] ? ":" : "", ref->tag, ref->digest[0] ? "@" : "", ref->digest);

	return n < 0 || (size_t)n >= len ? NULL : buf;
}

int image_ref_store_name(const struct image_ref *ref, char *buf, size_t len, struct nsrun_error *err)
{
	char s[IMAGE_REF_MAX + 8];

	if (!image_ref_string(ref, s, sizeof(s)) || strlen(s) > IMAGE_STORE_NAME_MAX || strlen(s) >= len) {
		error_set(err, 0, "image reference \"%.120s...\": longer than the %d characters a store name may have",
			  s, IMAGE_STORE_NAME_MAX);
		err->hint = "use a shorter tag, or pull it by digest alone (NAME@sha256:...)";
		return -1;
	}
	for (size_t i = 0;; i++) {
		buf[i] = s[i] == '/' ? '+' : s[i] == ':' ? '=' : s[i];
		if (!s[i])
			break;
	}
	return 0;
}

bool image_store_name_is_ref(const char *name)
{
	return name[0] != '.' && strchr(name, '+') != NULL;
}

int image_store_name_ref(const char *name, struct image_ref *ref)
{
	char s[IMAGE_REF_MAX + 8], canon[IMAGE_REF_MAX + 8];
	struct nsrun_error err;
	size_t i;

	if (!image_store_name_is_ref(name) || strlen(name) >= sizeof(s))
		return -1;
	for (i = 0; name[i]; i++)
		s[i] = name[i] == '+' ? '/' : name[i] == '=' ? ':' : name[i];
	s[i] = '\0';
	/* only the canonical spelling is a store name of a reference */
	if (image_ref_parse(s, ref, &err) < 0 || !image_ref_string(ref, canon, sizeof(canon)) || strcmp(canon, s) != 0)
		return -1;
	return 0;
}
