/* caps.c - see caps.h */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "caps.h"
#include "cleanup.h"

static const struct {
	const char *name;
	int cap;
} docker_default[] = {
	{ "CHOWN", CAP_CHOWN }, { "DAC_OVERRIDE", CAP_DAC_OVERRIDE }, { "FSETID", CAP_FSETID },
	{ "FOWNER", CAP_FOWNER }, { "MKNOD", CAP_MKNOD }, { "NET_RAW", CAP_NET_RAW },
	{ "SETGID", CAP_SETGID }, { "SETUID", CAP_SETUID }, { "SETFCAP", CAP_SETFCAP },
	{ "SETPCAP", CAP_SETPCAP }, { "NET_BIND_SERVICE", CAP_NET_BIND_SERVICE },
	{ "SYS_CHROOT", CAP_SYS_CHROOT }, { "KILL", CAP_KILL }, { "AUDIT_WRITE", CAP_AUDIT_WRITE },
};

uint64_t caps_docker_default(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < sizeof(docker_default) / sizeof(docker_default[0]); i++)
		m |= 1ULL << docker_default[i].cap;
	return m;
}

void caps_format(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(docker_default) / sizeof(docker_default[0]) && n < len; i++)
		if (mask & (1ULL << docker_default[i].cap))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", docker_default[i].name);
}

bool caps_known(const char *name)
{
	char lower[64] = "cap_";
	size_t n = 4;
	cap_value_t v;

	if (strncasecmp(name, "CAP_", 4) == 0)
		name += 4;
	/* one name: libcap's parser would also take a list ("chown,kill") */
	for (; *name && n < sizeof(lower) - 1; name++) {
		if (!isalnum((unsigned char)*name) && *name != '_')
			return false;
		lower[n++] = (char)tolower((unsigned char)*name);
	}
	lower[n] = '\0';
	/* libcap also takes a bare number ("12"): Docker's names only */
	return !*name && n > 4 && !(lower[4] >= '0' && lower[4] <= '9') && cap_from_name(lower, &v) == 0;
}

int caps_parse_add(const char *arg, uint64_t *mask, struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strdup(arg);
	char *save = NULL;

	if (!copy)
		return error_set(err, ENOMEM, "--cap-add");
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const char *name = strncasecmp(t, "CAP_", 4) == 0 ? t + 4 : t;
		size_t i, n = sizeof(docker_default) / sizeof(docker_default[0]);
		if (strcasecmp(name, "ALL") == 0) {
			*mask |= caps_docker_default();
			continue;
		}
		for (i = 0; i < n && strcasecmp(name, docker_default[i].name) != 0; i++)
			;
		if (i == n) {
			error_set(err, 0, "--cap-add: \"%s\": not one of Docker's default capabilities, the most "
				  "nsrun grants (CHOWN, DAC_OVERRIDE, FSETID, FOWNER, MKNOD, NET_RAW, SETGID, SETUID, "
				  "SETFCAP, SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL, AUDIT_WRITE, or ALL for them)", t);
			err->hint = "capabilities such as SYS_ADMIN or SYS_PTRACE would reach past what a sandbox "
				    "may do; nsrun refuses them";
			return -1;
		}
		*mask |= 1ULL << docker_default[i].cap;
	}
	return 0;
}

int caps_drop_bounding(struct nsrun_error *err)
{
	return caps_keep_bounding(0, err);
}

int caps_keep_bounding(uint64_t keep, struct nsrun_error *err)
{
	int last;

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return error_set(err, errno, "clear the ambient capabilities");
	last = (int)cap_max_bits() - 1;
	for (int c = 0; c <= last; c++) {
		if (c < 64 && (keep & (1ULL << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return error_set(err, errno, "drop capability %d from the bounding set", c);
	}
	return 0;
}

int caps_clear_and_nnp(struct nsrun_error *err)
{
	return caps_set_and_nnp(0, err);
}

int caps_set_and_nnp(uint64_t keep, struct nsrun_error *err)
{
	cap_t empty = cap_init();

	if (!empty)
		return error_set(err, errno, "cap_init");
	for (int c = 0; c < 64; c++) {
		cap_value_t v = c;
		if (!(keep & (1ULL << c)))
			continue;
		if (cap_set_flag(empty, CAP_PERMITTED, 1, &v, CAP_SET) < 0 ||
		    cap_set_flag(empty, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
		    cap_set_flag(empty, CAP_INHERITABLE, 1, &v, CAP_SET) < 0) {
			int saved = errno;
			cap_free(empty);
			return error_set(err, saved, "cap_set_flag %d", c);
		}
	}
	if (cap_set_proc(empty) < 0) {
		int saved = errno;
		cap_free(empty);
		return error_set(err, saved, "clear the capability sets");
	}
	cap_free(empty);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_set(err, errno, "set no_new_privs");
	return 0;
}
