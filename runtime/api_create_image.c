/* api_create_image.c - the parts of an image's config that a create turns into
 * nsrun options of their own, as docker run applies them: its Volumes (a tmpfs
 * each, unless bound) and, with PublishAllPorts (`docker run -P`), its
 * ExposedPorts published on free loopback ports; and where a published port may
 * bind.  See api_internal.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "image_store.h"

/* Is the container path a (as given: "/data/", "/data") the same as b? */
static bool same_path(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	while (na > 1 && a[na - 1] == '/')
		na--;
	while (nb > 1 && b[nb - 1] == '/')
		nb--;
	return na == nb && strncmp(a, b, na) == 0;
}

/* One of nsrun's own mounts, or the root: not a volume's place. */
static bool nsrun_owns(const char *p)
{
	static const char *const own[] = { "/tmp", "/dev", "/proc", "/sys" };

	if (same_path(p, "/"))
		return true;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t n = strlen(own[i]);
		if (strncmp(p, own[i], n) == 0 && (p[n] == '\0' || p[n] == '/'))
			return true;
	}
	return false;
}

int api_image_volumes(const char *entry, const struct strv *taken, struct strv *out, struct nsrun_error *err)
{
	struct strv vols = { 0 };
	int rc = 0;

	if (image_config_strings(entry, "volumes", &vols, err) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && i < vols.n; i++) {
		const char *v = vols.v[i];
		bool covered = v[0] != '/' || nsrun_owns(v);
		for (size_t j = 0; !covered && j < taken->n; j++)
			covered = same_path(v, taken->v[j]);
		for (size_t j = 0; !covered && j < out->n; j++)
			covered = same_path(v, out->v[j]);
		if (!covered && strv_push(out, v) < 0)
			rc = error_set(err, ENOMEM, "image %s: volumes", entry);
	}
	strv_free(&vols);
	return rc;
}

/* "PORT" or "PORT/tcp" as a number, 0 for another protocol, -1 for no port. */
static long tcp_port(const char *key)
{
	char *end;
	unsigned long p = strtoul(key, &end, 10);

	if (end == key || p == 0 || p > 65535)
		return -1;
	if (*end == '\0' || strcmp(end, "/tcp") == 0)
		return (long)p;
	return *end == '/' ? 0 : -1;
}

int api_publish_all(const char *entry, yajl_val body, yajl_val hc, unsigned *ports, size_t max, size_t *n,
		    char *skipped, size_t skipped_len, struct nsrun_error *err)
{
	yajl_val own = api_get(body, "ExposedPorts", yajl_t_object), bound = api_get(hc, "PortBindings", yajl_t_object);
	struct strv keys = { 0 };
	size_t o = 0;

	*n = 0;
	skipped[0] = '\0';
	if (entry[0] && image_config_strings(entry, "exposed_ports", &keys, err) < 0)
		return -1;
	for (size_t i = 0; own && i < own->u.object.len; i++)
		if (strv_push(&keys, own->u.object.keys[i]) < 0) {
			strv_free(&keys);
			return error_set(err, ENOMEM, "ExposedPorts");
		}
	for (size_t i = 0; i < keys.n; i++) {
		long p = tcp_port(keys.v[i]);
		bool dup = p < 0;
		if (p == 0) {
			/* nsrun publishes TCP only: said, not dropped silently */
			if (o < skipped_len)
				o += (size_t)snprintf(skipped + o, skipped_len - o, "%s%s", o ? ", " : "", keys.v[i]);
			continue;
		}
		for (size_t j = 0; !dup && bound && j < bound->u.object.len; j++)
			dup = tcp_port(bound->u.object.keys[j]) == p;
		for (size_t j = 0; !dup && j < *n; j++)
			dup = ports[j] == (unsigned)p;
		if (!dup && *n < max)
			ports[(*n)++] = (unsigned)p;
	}
	strv_free(&keys);
	return 0;
}

int api_loopback_host_ip(const char *ip, char *out, size_t len)
{
	unsigned char a[16];

	if (!ip || !ip[0]) {
		snprintf(out, len, "127.0.0.1");
		return 0;
	}
	if (inet_pton(AF_INET, ip, a) == 1) {
		if (a[0] == 127) {
			snprintf(out, len, "%s", ip);
			return 0;
		}
		if (!(a[0] | a[1] | a[2] | a[3])) {
			snprintf(out, len, "127.0.0.1");
			return 0;
		}
		return -1;
	}
	if (inet_pton(AF_INET6, ip, a) == 1) {
		static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
		bool zero10 = true;
		for (int i = 0; i < 10; i++)
			zero10 = zero10 && !a[i];
		/* ::1 */
		if (zero10 && !(a[10] | a[11] | a[12] | a[13] | a[14]) && a[15] == 1) {
			snprintf(out, len, "[::1]");
			return 0;
		}
		/* :: */
		if (zero10 && !(a[10] | a[11] | a[12] | a[13] | a[14] | a[15])) {
			snprintf(out, len, "127.0.0.1");
			return 0;
		}
		/* ::ffff:a.b.c.d, an IPv4 address: its own rule */
		if (memcmp(a, mapped, sizeof(mapped)) == 0) {
			char v4[INET_ADDRSTRLEN];
			return inet_ntop(AF_INET, a + 12, v4, sizeof(v4)) ? api_loopback_host_ip(v4, out, len) : -1;
		}
	}
	return -1;
}
