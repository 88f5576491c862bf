/* Unit tests of nsrun's /etc/hosts and /etc/hostname: --add-host parsing (config.c),
 * the files' content (etc_files.c) and their place in the mount plan (mount_plan.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "config.h"
#include "etc_files.h"
#include "mount_plan.h"
#include "tap.h"

static const struct mount_op *find(const struct mount_plan *p, enum mount_op_kind kind, const char *target)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].kind == kind && strcmp(p->ops[i].target, target) == 0)
			return &p->ops[i];
	return NULL;
}

static void add_host_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	static const struct {
		const char *spec, *name, *ip;
	} good[] = {
		{ "db:10.0.0.5", "db", "10.0.0.5" },
		{ "db.example.org=10.0.0.6", "db.example.org", "10.0.0.6" },
		{ "v6:2001:db8::1", "v6", "2001:db8::1" },
		{ "v6b:[2001:db8::2]", "v6b", "2001:db8::2" },
		{ "v6c=[::1]", "v6c", "::1" },
		{ "my_svc-1:[192.0.2.1]", "my_svc-1", "192.0.2.1" },
	};
	static const char *const bad[] = {
		"db", ":10.0.0.1", "=10.0.0.1", "db:", "db:10.0.0", "db:10.0.0.256", "db:example.org",
		"db:[2001:db8::1", "db:2001:db8::1]", "db:[]", "db:fe80::1%eth0", "-db:10.0.0.1", ".db:10.0.0.1",
		"d b:10.0.0.1", "db#x:10.0.0.1", "db\n127.0.0.1 evil:10.0.0.1", "a:b=10.0.0.1", "db:host-gateway",
		"db:10.0.0.1 x", "",
	};
	char longname[300];

	config_init(&cfg, &err);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char desc[96];
		snprintf(desc, sizeof(desc), "--add-host %s", good[i].spec);
		tap_ok(t, config_add_host(&cfg, good[i].spec, &err) == 0, desc);
		tap_str(t, "  ... its name", good[i].name, cfg.n_add_hosts > i ? cfg.add_hosts[i].name : NULL);
		tap_str(t, "  ... its address, without brackets", good[i].ip,
			cfg.n_add_hosts > i ? cfg.add_hosts[i].ip : NULL);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char desc[96];
		snprintf(desc, sizeof(desc), "--add-host \"%.40s\" is rejected with a message", bad[i]);
		for (char *c = desc; *c; c++)
			*c = *c == '\n' ? '~' : *c;
		err = (struct nsrun_error){ 0 };
		tap_ok(t, config_add_host(&cfg, bad[i], &err) < 0 && err.errnum == 0 &&
		       strncmp(err.msg, "--add-host", 10) == 0, desc);
	}
	config_add_host(&cfg, "db:host-gateway", &err);
	tap_ok(t, strstr(err.msg, "host-gateway") && err.hint, "host-gateway: refused, saying why, with a hint");
	memset(longname, 'a', 254);
	snprintf(longname + 254, sizeof(longname) - 254, ":10.0.0.1");
	tap_ok(t, config_add_host(&cfg, longname, &err) < 0, "a name of 254 characters is rejected");
	longname[253] = ':';
	snprintf(longname + 253, sizeof(longname) - 253, ":10.0.0.1");
	tap_ok(t, config_add_host(&cfg, longname, &err) == 0, "a name of 253 characters is taken");
	tap_int(t, "rejected specs add nothing", (long long)(sizeof(good) / sizeof(good[0])) + 1,
		(long long)cfg.n_add_hosts);
	while (cfg.n_add_hosts < NSRUN_MAX_ADD_HOSTS)
		config_add_host(&cfg, "x:10.0.0.1", &err);
	tap_ok(t, config_add_host(&cfg, "x:10.0.0.1", &err) < 0 && strstr(err.msg, "at most"),
	       "at most NSRUN_MAX_ADD_HOSTS of them");
	config_free(&cfg);
}

static void content_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	char buf[4096], small[16];
	struct etc_addr addrs[2] = { { "192.0.2.2" }, { "fd00::2" } };
	size_t need;

	config_init(&cfg, &err);
	need = etc_hosts_format(&cfg, NULL, 0, buf, sizeof(buf));
	tap_ok(t, need == strlen(buf), "the hosts file fits and its length is returned");
	tap_ok(t, strstr(buf, "\n127.0.0.1\tlocalhost\n") != NULL, "127.0.0.1 is localhost");
	tap_ok(t, strstr(buf, "\n::1\tlocalhost ip6-localhost ip6-loopback\n") != NULL, "::1 is localhost, as docker has it");
	tap_ok(t, strstr(buf, "\n127.0.1.1\tnsrun\n") != NULL, "the hostname is on loopback (127.0.1.1)");
	tap_ok(t, strstr(buf, "ff02::2\tip6-allrouters\n") != NULL, "docker's IPv6 names");
	tap_ok(t, buf[0] == '#', "it starts with a comment saying whose it is");
	tap_int(t, "a short buffer: the length needed, still", (long long)need,
		(long long)etc_hosts_format(&cfg, NULL, 0, small, sizeof(small)));
	tap_ok(t, strlen(small) == sizeof(small) - 1, "  ... and what fits, terminated");
	tap_int(t, "no buffer at all: the length needed", (long long)need, (long long)etc_hosts_format(&cfg, NULL, 0, NULL, 0));

	free(cfg.hostname);
	cfg.hostname = strdup("box.example.org");
	config_add_host(&cfg, "db:10.0.0.5", &err);
	config_add_host(&cfg, "v6:[2001:db8::1]", &err);
	etc_hosts_format(&cfg, addrs, 2, buf, sizeof(buf));
	tap_ok(t, strstr(buf, "\n127.0.1.1\tbox.example.org box\n") != NULL, "a dotted hostname also answers to its first label");
	tap_ok(t, strstr(buf, "\n192.0.2.2\tbox.example.org box\nfd00::2\tbox.example.org box\n127.0.1.1\t") != NULL,
	       "the container's addresses (--network pasta) come first, then loopback");
	tap_ok(t, strstr(buf, "\n10.0.0.5\tdb\n2001:db8::1\tv6\n") != NULL, "--add-host lines, in order");
	tap_ok(t, strstr(buf, "\n10.0.0.5\tdb\n") > strstr(buf, "127.0.0.1\tlocalhost"),
	       "  ... after localhost, as docker: they cannot take localhost over");
	need = etc_hostname_format(&cfg, buf, sizeof(buf));
	tap_str(t, "/etc/hostname is the hostname and a newline", "box.example.org\n", buf);
	tap_int(t, "  ... its length", 16, (long long)need);
	config_free(&cfg);
}

static void plan_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct mount_plan plan;
	const struct mount_op *hosts, *hostname, *vol;

	config_init(&cfg, &err);
	cfg.process.cwd = strdup("/");
	tap_ok(t, mount_plan_build(&cfg, &plan, &err) == 0, "plan builds");
	hosts = find(&plan, MOP_ETC_FILE, "/etc/hosts");
	hostname = find(&plan, MOP_ETC_FILE, "/etc/hostname");
	tap_ok(t, hosts && hostname, "every run gets /etc/hosts and /etc/hostname");
	tap_ok(t, hosts && (hosts->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV)) == (MS_RDONLY | MS_NOSUID | MS_NODEV),
	       "  ... read-only, nosuid, nodev");
	tap_ok(t, hosts && hosts->in_image && hosts->create == CREATE_FILE,
	       "  ... made as a file (in the overlay) where the image has none");
	mount_plan_free(&plan);

	config_add_tmpfs(&cfg, "/etc", &err);
	config_add_volume(&cfg, "/tmp:/etc/hosts", &err);
	tap_ok(t, mount_plan_build(&cfg, &plan, &err) == 0, "plan with -v :/etc/hosts and --tmpfs /etc builds");
	hosts = find(&plan, MOP_ETC_FILE, "/etc/hosts");
	hostname = find(&plan, MOP_ETC_FILE, "/etc/hostname");
	vol = find(&plan, MOP_BIND, "/etc/hosts");
	tap_ok(t, !hosts && vol, "a volume at /etc/hosts is the caller's: nsrun's is left out, as docker does");
	tap_ok(t, hostname && !hostname->in_image && hostname->create == CREATE_FILE &&
	       hostname > find(&plan, MOP_TMPFS, "/etc"),
	       "/etc/hostname goes into the --tmpfs /etc, after it");
	mount_plan_free(&plan);
	config_free(&cfg);

	config_init(&cfg, &err);
	cfg.process.cwd = strdup("/");
	config_add_volume(&cfg, "/tmp:/etc", &err);
	tap_ok(t, mount_plan_build(&cfg, &plan, &err) == 0 && !find(&plan, MOP_ETC_FILE, "/etc/hosts") &&
	       !find(&plan, MOP_ETC_FILE, "/etc/hostname"),
	       "a volume at /etc: nothing of nsrun's is written into it");
	mount_plan_free(&plan);
	config_free(&cfg);
}

int main(void)
{
	struct tap t = { 0 };

	add_host_cases(&t);
	content_cases(&t);
	plan_cases(&t);
	return tap_done(&t);
}
