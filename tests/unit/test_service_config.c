/* Unit tests of the service options: -p and --tmpfs parsing (config_service.c), their
 * cross-field checks, tmpfs in the mount plan, and service names (service.c). */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mount_plan.h"
#include "service.h"
#include "state.h"
#include "tap.h"

static const struct mount_op *find(const struct mount_plan *p, enum mount_op_kind kind, const char *target)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].kind == kind && strcmp(p->ops[i].target, target) == 0)
			return &p->ops[i];
	return NULL;
}

static void publish_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	static const char *const bad[] = { "6379", "0:0", "0:65536", "x:1", "1:-1", "0:80/udp", "localhost:0:80",
					   "[::1:0:80", "1.2.3:0:80", "0:80/", ":80", "" };

	config_init(&cfg, &err);
	tap_ok(t, config_add_publish(&cfg, "0:6379", &err) == 0, "-p 0:6379");
	tap_str(t, "  ... host ip defaults to 127.0.0.1", "127.0.0.1", cfg.publish[0].host_ip);
	tap_int(t, "  ... host port 0", 0, cfg.publish[0].host_port);
	tap_int(t, "  ... container port", 6379, cfg.publish[0].container_port);
	tap_ok(t, config_add_publish(&cfg, "0.0.0.0:8080:80/tcp", &err) == 0, "-p 0.0.0.0:8080:80/tcp");
	tap_str(t, "  ... host ip", "0.0.0.0", cfg.publish[1].host_ip);
	tap_int(t, "  ... host port", 8080, cfg.publish[1].host_port);
	tap_ok(t, config_add_publish(&cfg, "[::1]:0:5432", &err) == 0, "-p [::1]:0:5432");
	tap_str(t, "  ... IPv6 host ip without brackets", "::1", cfg.publish[2].host_ip);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char desc[64];
		snprintf(desc, sizeof(desc), "-p \"%s\" is rejected", bad[i]);
		tap_ok(t, config_add_publish(&cfg, bad[i], &err) < 0 && err.errnum == 0, desc);
	}
	tap_int(t, "rejected specs add nothing", 3, (long long)cfg.n_publish);
	cfg.service.wait_port = 6379;
	cfg.service.detach = true;
	cfg.rootfs = strdup("/");
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "--wait-port of a published port is fine with -d");
	cfg.service.wait_port = 6380;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "not a published container port"),
	       "--wait-port of a port not published is rejected");
	cfg.service.wait_port = 0;
	config_add_publish(&cfg, "127.0.0.1:8080:81", &err);
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "the same host port on another address is fine");
	config_add_publish(&cfg, "0.0.0.0:8080:82", &err);
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "published twice"),
	       "the same host address and port twice is rejected");
	config_free(&cfg);
}

/* --stop-with-parent and --stop-with-pid: only with -d, not both */
static void stop_with_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };

	config_init(&cfg, &err);
	cfg.rootfs = strdup("/");
	cfg.service.stop_with_parent = true;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "--stop-with-parent: only with -d"),
	       "--stop-with-parent without -d is rejected");
	cfg.service.detach = true;
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "--stop-with-parent with -d is fine");
	cfg.service.stop_with_pid = 42;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "choose one"),
	       "--stop-with-parent and --stop-with-pid together are rejected");
	cfg.service.stop_with_parent = false;
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "--stop-with-pid with -d is fine");
	cfg.service.detach = false;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "--stop-with-pid: only with -d"),
	       "--stop-with-pid without -d is rejected");
	config_free(&cfg);
}

/* --network container:NAME and NAME: no -p (docker's rule), no --add-host on a named network */
static void network_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };

	config_init(&cfg, &err);
	cfg.rootfs = strdup("/");
	cfg.network = NSRUN_NETWORK_CONTAINER;
	cfg.network_name = strdup("db");
	cfg.service.detach = true;
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "-d --network container:db is fine");
	config_add_publish(&cfg, "0:80", &err);
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "-p and --network container:db") &&
		   err.hint, "-p with --network container:db is rejected, with a hint");
	cfg.n_publish = 0;
	config_add_host(&cfg, "x:192.0.2.1", &err);
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "--add-host with container: is fine (its own /etc/hosts)");
	cfg.network = NSRUN_NETWORK_NAMED;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "--add-host and --network db"),
	       "--add-host with a named network is rejected (one /etc/hosts for all)");
	config_free(&cfg);
}

static void tmpfs_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct mount_plan plan;
	const struct mount_op *data, *inner, *vol;
	char buf[8192];

	config_init(&cfg, &err);
	tap_ok(t, config_add_tmpfs(&cfg, "/data", &err) == 0, "--tmpfs /data");
	tap_int(t, "  ... size defaults to --tmpfs-size", (long long)NSRUN_DEFAULT_TMPFS_BYTES,
		(long long)cfg.tmpfs[0].size_bytes);
	tap_int(t, "  ... mode defaults to 1777", 01777, cfg.tmpfs[0].mode);
	tap_ok(t, config_add_tmpfs(&cfg, "/data/pg//:size=16m,mode=0700", &err) == 0, "--tmpfs /data/pg//:size=16m,mode=0700");
	tap_str(t, "  ... path normalised", "/data/pg", cfg.tmpfs[1].destination);
	tap_int(t, "  ... size", 16 << 20, (long long)cfg.tmpfs[1].size_bytes);
	tap_int(t, "  ... mode", 0700, cfg.tmpfs[1].mode);
	tap_ok(t, config_add_tmpfs(&cfg, "data", &err) < 0, "a relative path is rejected");
	tap_ok(t, config_add_tmpfs(&cfg, "/x:size=0", &err) < 0, "size 0 is rejected");
	tap_ok(t, config_add_tmpfs(&cfg, "/x:mode=8", &err) < 0, "a mode that is not octal is rejected");
	tap_ok(t, config_add_tmpfs(&cfg, "/x:uid=0", &err) < 0 && strstr(err.msg, "unknown option"),
	       "an unknown option is rejected");
	tap_ok(t, config_add_tmpfs(&cfg, "/x:size", &err) < 0, "an option without value is rejected");
	tap_ok(t, config_add_tmpfs(&cfg, "/:size=1m", &err) < 0, "a tmpfs over / is rejected");
	tap_int(t, "rejected specs add nothing", 2, (long long)cfg.n_tmpfs);

	/* a volume inside a tmpfs: the tmpfs is mounted first, the volume's mount point made in it */
	config_add_volume(&cfg, "/var/tmp:/data/in", &err);
	cfg.process.cwd = strdup("/");
	cfg.rootfs = strdup("/");
	tap_ok(t, mount_plan_build(&cfg, &plan, &err) == 0, "plan with tmpfs and volume builds");
	data = find(&plan, MOP_TMPFS, "/data");
	inner = find(&plan, MOP_TMPFS, "/data/pg");
	vol = find(&plan, MOP_BIND, "/data/in");
	tap_ok(t, data && inner && vol && data < inner && data < vol, "parents first: /data before /data/pg and /data/in");
	tap_ok(t, data && data->in_image && data->create == CREATE_DIR, "/data's mount point is in the image (made if missing)");
	tap_ok(t, vol && !vol->in_image && vol->create == CREATE_DIR, "/data/in's mount point is made in the tmpfs");
	tap_ok(t, inner && strcmp(inner->data, "mode=0700,size=16777216,nr_inodes=4096") == 0, "tmpfs data has mode, size and nr_inodes (one a page)");
	mount_plan_format(&plan, &cfg, buf, sizeof(buf));
	tap_ok(t, strstr(buf, "tmpfs /data/pg - rw mode=0700,size=16777216,nr_inodes=4096 mkdir") != NULL, "the plan prints it");
	mount_plan_free(&plan);
	config_add_tmpfs(&cfg, "/tmp", &err);
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "managed by nsrun"), "--tmpfs /tmp is rejected");
	config_free(&cfg);
}

/* --label, --wait-log, --wait-http, --health-*: parsing, checks, and labels in a state */
static void wait_label_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct service_state st = { 0 };

	config_init(&cfg, &err);
	cfg.rootfs = strdup("/");
	tap_ok(t, config_add_label(&cfg, "app=web", &err) == 0, "--label app=web");
	tap_ok(t, config_add_label(&cfg, "flag", &err) == 0, "--label KEY alone");
	tap_str(t, "  ... has an empty value", "", strv_getenv(&cfg.service.labels, "flag"));
	tap_ok(t, config_add_label(&cfg, "app=db", &err) == 0 && cfg.service.labels.n == 2, "a KEY again replaces");
	tap_ok(t, config_add_label(&cfg, "=v", &err) < 0 && err.errnum == 0, "--label =v is rejected");
	tap_ok(t, config_add_label(&cfg, "a=\n", &err) < 0, "--label with a control character is rejected");
	tap_ok(t, config_set_wait_log(&cfg, "ready (to|for)", &err) == 0, "--wait-log with a valid ERE");
	tap_ok(t, config_set_wait_log(&cfg, "(", &err) < 0 && strstr(err.msg, "--wait-log"), "--wait-log \"(\" is rejected");
	tap_ok(t, config_set_wait_http(&cfg, "8080", &err) == 0 && cfg.service.wait_http_port == 8080 &&
			  strcmp(cfg.service.wait_http_path, "/") == 0, "--wait-http 8080: path /");
	tap_ok(t, config_set_wait_http(&cfg, "8080/health?x=1", &err) == 0 &&
			  strcmp(cfg.service.wait_http_path, "/health?x=1") == 0, "--wait-http 8080/health?x=1");
	tap_ok(t, config_set_wait_http(&cfg, "0/x", &err) < 0, "--wait-http 0 is rejected");
	tap_ok(t, config_set_wait_http(&cfg, "/x", &err) < 0, "--wait-http without a port is rejected");
	tap_ok(t, config_set_wait_http(&cfg, "80/a b", &err) < 0, "--wait-http with a space in the path is rejected");
	cfg.service.wait_http_port = 8080;
	cfg.service.detach = true;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "not a published container port"),
	       "--wait-http of a port not published is rejected");
	config_add_publish(&cfg, "0:8080", &err);
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "... published: fine");
	cfg.service.wait_healthy = true;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "no health check"),
	       "--wait-healthy without --health-cmd is rejected");
	cfg.service.health.cmd = strdup("true");
	tap_ok(t, config_validate_service(&cfg, &err) == 0, "... with one: fine");
	tap_int(t, "  ... docker's default retries", 3, (long long)cfg.service.health.retries);
	cfg.service.detach = false;
	tap_ok(t, config_validate_service(&cfg, &err) < 0 && strstr(err.msg, "only with -d"), "labels and waits need -d");
	config_free(&cfg);

	snprintf(st.labels[0].key, sizeof(st.labels[0].key), "app");
	snprintf(st.labels[0].value, sizeof(st.labels[0].value), "web");
	snprintf(st.labels[1].key, sizeof(st.labels[1].key), "ap");
	st.n_labels = 2;
	tap_ok(t, state_has_label(&st, "app") && state_has_label(&st, "app=web") && state_has_label(&st, "ap="),
	       "state_has_label: KEY, KEY=VALUE, an empty value");
	tap_ok(t, !state_has_label(&st, "app=we") && !state_has_label(&st, "a") && !state_has_label(&st, "apps"),
	       "state_has_label: no prefix matches");
}

int main(void)
{
	struct tap t = { 0 };
	static const char *const good[] = { "redis", "a", "Pg-15.test_1", "0abc" };
	static const char *const bad[] = { "", "-x", ".x", "_x", "a/b", "a b", "..", "a:b",
					   "x0123456789012345678901234567890123456789012345678901234567890123" };

	publish_cases(&t);
	tmpfs_cases(&t);
	stop_with_cases(&t);
	wait_label_cases(&t);
	network_cases(&t);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		tap_ok(&t, service_name_valid(good[i]), good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char desc[96];
		snprintf(desc, sizeof(desc), "name \"%.70s\" is rejected", bad[i]);
		tap_ok(&t, !service_name_valid(bad[i]), desc);
	}
	return tap_done(&t);
}
