/* config.c - defaults, typed option parsers and validation of struct nsrun_config. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "image_user.h"
#include "tier.h"

int config_init(struct nsrun_config *cfg, struct nsrun_error *err)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->process.uid = NSRUN_DEFAULT_UID;
	cfg->process.gid = NSRUN_DEFAULT_UID;
	cfg->limits.memory_bytes = NSRUN_DEFAULT_MEMORY_BYTES;
	cfg->limits.tmpfs_bytes = NSRUN_DEFAULT_TMPFS_BYTES;
	cfg->limits.pids = NSRUN_DEFAULT_PIDS;
	cfg->limits.timeout_us = NSRUN_DEFAULT_TIMEOUT_US;
	cfg->limits.stop_timeout_us = NSRUN_DEFAULT_STOP_TIMEOUT_US;
	cfg->limits.memory_sample_timeout_us = NSRUN_DEFAULT_MEMORY_SAMPLE_TIMEOUT_US;
	cfg->network = NSRUN_NETWORK_NONE;
	cfg->output.limit_bytes = NSRUN_DEFAULT_OUTPUT_LIMIT;
	cfg->service.ready_timeout_us = NSRUN_DEFAULT_READY_TIMEOUT_US;
	/* docker run's defaults (docs.docker.com/reference/dockerfile/#healthcheck) */
	cfg->service.health.interval_us = 30ULL * 1000000;
	cfg->service.health.timeout_us = 30ULL * 1000000;
	cfg->service.health.retries = 3;
	cfg->publish_max_connections = NSRUN_DEFAULT_PUBLISH_CONNECTIONS;
	cfg->hostname = strdup(NSRUN_DEFAULT_HOSTNAME);
	cfg->security.seccomp = strdup("default");
	cfg->security.landlock = true;
	if (!cfg->hostname || !cfg->security.seccomp)
		return error_set(err, ENOMEM, "allocate the configuration");
	return 0;
}

int config_env_defaults(struct nsrun_config *cfg, struct nsrun_error *err)
{
	static const char *const defaults[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", "LANG=C.UTF-8",
	};

	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (strv_setenv(&cfg->process.env, defaults[i]) < 0)
			return error_set(err, ENOMEM, "environment");
	return 0;
}

char *config_container_path(const char *what, const char *path, struct nsrun_error *err)
{
	_cleanup_free_ char *out = NULL;
	size_t o = 0;
	const char *p = path;

	if (!path || path[0] != '/') {
		error_set(err, 0, "%s: \"%s\": must be an absolute path inside the container", what,
			  path ? path : "");
		return NULL;
	}
	if (strlen(path) >= PATH_MAX) {
		error_set(err, 0, "%s: path too long", what);
		return NULL;
	}
	out = malloc(strlen(path) + 2);
	if (!out) {
		error_set(err, ENOMEM, "%s", what);
		return NULL;
	}
	while (*p) {
		const char *seg;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			error_set(err, 0, "%s: \"%s\": \"..\" is not allowed", what, path);
			return NULL;
		}
		out[o++] = '/';
		memcpy(out + o, seg, len);
		o += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return steal_ptr(&out);
}

int config_add_env(struct nsrun_config *cfg, const char *arg, struct nsrun_error *err)
{
	_cleanup_free_ char *kv = NULL;

	if (!strchr(arg, '=')) {
		const char *val = getenv(arg);
		/* the name is checked whether or not it is set: -e "" or -e 1BAD is a mistake */
		if (asprintf(&kv, "%s=", arg) < 0)
			return error_set(err, ENOMEM, "--env");
		if (!is_env_assignment(kv))
			return error_set(err, 0, "--env: \"%s\": expected KEY=VALUE with KEY a name", arg);
		free(kv);
		kv = NULL;
		if (asprintf(&kv, "%s=%s", arg, val ? val : "") < 0)
			return error_set(err, ENOMEM, "--env");
		if (!val)
			return 0; /* as docker: an unset variable is not passed */
	} else if (!(kv = strdup(arg))) {
		return error_set(err, ENOMEM, "--env");
	}
	if (!is_env_assignment(kv))
		return error_set(err, 0, "--env: \"%s\": expected KEY=VALUE with KEY a name", arg);
	return strv_push(&cfg->process.user_env, kv) < 0 ? error_set(err, ENOMEM, "--env") : 0;
}

int config_set_file(struct nsrun_config *cfg, const char *file, struct nsrun_error *err)
{
	_cleanup_free_ char *real = realpath(file, NULL);
	_cleanup_free_ char *copy = NULL;
	_cleanup_free_ char *dest = NULL;
	struct nsrun_mount *m;
	struct stat st;

	if (!real || stat(real, &st) < 0) {
		error_set(err, errno, "file \"%s\"", file);
		/* nsrun FILE reads a script of the host's; a program of the image's goes after -- */
		if (errno == ENOENT)
			err->hint = "FILE is a script on the host, relative to the working directory; to run a "
				    "program of the image, put it after --: nsrun --image NAME -- python3 /path/in/image.py";
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return error_set(err, EISDIR, "file \"%s\"", file);
	if (!S_ISREG(st.st_mode))
		return error_set(err, 0, "file \"%s\": not a regular file", file);
	/* the interpreter inside must be able to read it: said here, not by the interpreter.
	 * A caller reads it as the payload will (same uid); root's payload is not root on
	 * the host and reads through the "other" bits (unless the overflow id owns it). */
	if (access(real, R_OK) < 0)
		return error_set(err, errno, "file \"%s\"", file);
	if (geteuid() == 0 && !(st.st_mode & S_IROTH) && !(st.st_uid == 65534 && (st.st_mode & S_IRUSR)))
		return error_set(err, 0, "file \"%s\": the payload (not root on the host) cannot read it "
				 "(mode %04o): make it readable by others (chmod o+r)", file, (unsigned)(st.st_mode & 07777));
	if (!(copy = strdup(real)) || asprintf(&dest, NSRUN_WORKDIR "/%s", basename(copy)) < 0)
		return error_set(err, ENOMEM, "file");
	m = realloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof(*m));
	if (!m)
		return error_set(err, ENOMEM, "file");
	cfg->mounts = m;
	m[cfg->n_mounts++] = (struct nsrun_mount){ .source = steal_ptr(&real), .destination = steal_ptr(&dest),
						   .is_file_arg = true };
	cfg->file = strdup(file);
	return strv_push(&cfg->process.args, m[cfg->n_mounts - 1].destination) < 0 ?
		       error_set(err, ENOMEM, "file") : 0;
}

int config_add_volume(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strdup(spec);
	_cleanup_free_ char *host = NULL;
	char *dest = NULL, *mode = NULL, *dest_norm = NULL;
	struct nsrun_mount *m;
	bool rw = false;
	dev_t src_dev;
	ino_t src_ino;

	if (!copy)
		return error_set(err, ENOMEM, "--volume");
	dest = strchr(copy, ':');
	if (!dest || dest == copy)
		return error_set(err, 0, "--volume: \"%s\": expected HOST:CONTAINER[:ro|rw]", spec);
	*dest++ = '\0';
	mode = strchr(dest, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "rw") == 0)
			rw = true;
		else if (strcmp(mode, "ro") != 0)
			return error_set(err, 0, "--volume: \"%s\": unknown mode \"%s\" (use ro or rw)", spec,
					 mode);
	}
	/* the caller's own symlinks are followed here, once (as docker does); from then
	 * on the source is the object this open resolved to: its path is read back from
	 * the fd, and mount.c checks each later lookup by device and inode, so a payload
	 * sharing a directory on the way (another container's volume) cannot swap it.
	 * nsrun api passes /proc/self/fd/N, an object it opened and checked. */
	{
		char fdpath[64];
		struct stat st;
		_cleanup_close_ int fd = open(copy, O_PATH | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			return error_set(err, errno, "--volume: \"%s\"", copy);
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
		host = realpath(fdpath, NULL);
		if (!host)
			return error_set(err, errno, "--volume: \"%s\"", copy);
		src_dev = st.st_dev;
		src_ino = st.st_ino;
	}
	dest_norm = config_container_path("--volume", dest, err);
	if (!dest_norm)
		return -1;
	if (strcmp(dest_norm, "/") == 0) {
		free(dest_norm);
		return error_set(err, 0, "--volume: \"%s\": cannot mount over /", spec);
	}
	m = realloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof(*m));
	if (!m) {
		free(dest_norm);
		return error_set(err, ENOMEM, "--volume");
	}
	cfg->mounts = m;
	m[cfg->n_mounts++] = (struct nsrun_mount){
		.source = steal_ptr(&host), .destination = dest_norm, .rw = rw,
		.pinned = true, .dev = src_dev, .ino = src_ino,
	};
	return 0;
}

int config_add_copy_archive(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	const char *colon = strchr(spec, ':');
	_cleanup_free_ char *tar = NULL, *dir = NULL;

	if (!colon || colon == spec)
		return error_set(err, 0, "--copy-archive: \"%s\": expected TAR:DIR (a tar archive on the host, a "
				 "directory inside)", spec);
	if (cfg->copy_archive_tars.n >= NSRUN_MAX_COPY_ARCHIVES)
		return error_set(err, 0, "--copy-archive: more than %d archives", NSRUN_MAX_COPY_ARCHIVES);
	if (!(dir = config_container_path("--copy-archive", colon + 1, err)))
		return -1;
	if (!(tar = strndup(spec, (size_t)(colon - spec))))
		return error_set(err, ENOMEM, "--copy-archive");
	if (strv_push(&cfg->copy_archive_tars, tar) < 0 || strv_push(&cfg->copy_archive_dirs, dir) < 0)
		return error_set(err, ENOMEM, "--copy-archive");
	return 0;
}

int config_set_user(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strdup(spec);
	char *gid_s;
	uint64_t uid, gid;

	if (!copy)
		return error_set(err, ENOMEM, "--user");
	gid_s = strchr(copy, ':');
	if (gid_s)
		*gid_s++ = '\0';
	/* 65535 and above are the overflow/invalid ids of a user namespace: stay below */
	gid = 0;
	if (parse_uint("--user", copy, 65533 + 1, &uid, err) < 0 ||
	    (gid_s && parse_uint("--user", gid_s, 65533 + 1, &gid, err) < 0))
		return error_set(err, 0, "--user: \"%s\": expected UID[:GID], numeric ids up to 65534", spec);
	if (!gid_s)
		gid = uid;
	cfg->process.uid = (uid_t)uid;
	cfg->process.gid = (gid_t)gid;
	return 0;
}

int config_set_user_spec(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	free(cfg->user_spec);
	cfg->user_spec = NULL;
	if (strspn(spec, "0123456789:") == strlen(spec))
		return config_set_user(cfg, spec, err);
	if (!image_user_spec_valid(spec))
		return error_set(err, 0, "--user: \"%s\": expected USER[:GROUP], each a name of the image's or a "
				 "number up to %d", spec, IMAGE_USER_ID_MAX);
	if (!(cfg->user_spec = strdup(spec)))
		return error_set(err, ENOMEM, "--user");
	return 0;
}

/* A name for /etc/hosts (hosts(5)): 1 to 253 letters, digits, '.', '-' and '_'
 * (docker's service names have '_'), not starting with '-' or '.'; nothing that
 * could end the line or start a comment in the file. */
static bool is_host_name(const char *s, size_t n)
{
	if (n == 0 || n > NSRUN_HOST_NAME_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", s[i]) || !s[i])
			return false;
	return true;
}

int config_add_host(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	struct nsrun_add_host h = { .name = "" };
	struct nsrun_add_host *v;
	const char *sep = strchr(spec, '=');
	const char *ip;
	size_t ip_len;
	unsigned char addr[16];

	/* docker: NAME=IP, else the first ':' ends NAME (an IPv6 IP has more) */
	if (!sep)
		sep = strchr(spec, ':');
	if (!sep || sep == spec)
		return error_set(err, 0, "--add-host: \"%s\": expected NAME:IP", spec);
	if (!is_host_name(spec, (size_t)(sep - spec)))
		return error_set(err, 0, "--add-host: \"%s\": the name must be 1 to %d letters, digits, '.', '-' "
				 "and '_', not starting with '-' or '.'", spec, NSRUN_HOST_NAME_MAX);
	ip = sep + 1;
	ip_len = strlen(ip);
	if (strcmp(ip, "host-gateway") == 0) {
		error_set(err, 0, "--add-host: \"%s\": host-gateway: nsrun gives the container no address of the "
			  "host (--network none has only loopback; with pasta the host's loopback stays out of reach)", spec);
		err->hint = "name the address to reach instead, for example --add-host NAME:192.0.2.10 with --network pasta";
		return -1;
	}
	if (ip_len > 2 && ip[0] == '[' && ip[ip_len - 1] == ']') {
		ip++;
		ip_len -= 2;
	}
	if (ip_len >= sizeof(h.ip))
		return error_set(err, 0, "--add-host: \"%s\": \"%s\" is not a numeric IP address", spec, sep + 1);
	memcpy(h.ip, ip, ip_len);
	h.ip[ip_len] = '\0';
	if (inet_pton(AF_INET, h.ip, addr) != 1 && inet_pton(AF_INET6, h.ip, addr) != 1)
		return error_set(err, 0, "--add-host: \"%s\": \"%s\" is not a numeric IP address", spec, sep + 1);
	memcpy(h.name, spec, (size_t)(sep - spec));
	h.name[sep - spec] = '\0';
	if (cfg->n_add_hosts >= NSRUN_MAX_ADD_HOSTS)
		return error_set(err, 0, "--add-host: at most %d", NSRUN_MAX_ADD_HOSTS);
	v = realloc(cfg->add_hosts, (cfg->n_add_hosts + 1) * sizeof(*v));
	if (!v)
		return error_set(err, ENOMEM, "--add-host");
	cfg->add_hosts = v;
	v[cfg->n_add_hosts++] = h;
	return 0;
}

/* What the reduced and minimal tiers cannot give (they make no mount, no id map and,
 * minimal, no namespace): an option that needs it is refused.  Returns 0 or -1
 * with *err (errnum 0). */
static int tier_options_check(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	const char *t = tier_name(cfg->isolation);
	/* every one of these needs mount(2), id maps or a namespace, which these tiers do without */
	if (cfg->mode == NSRUN_MODE_FILE) {
		error_set(err, 0, "isolation %s: FILE mode needs a mount for the file", t);
		err->hint = "give the program on standard input: nsrun --image NAME - < FILE";
		return -1;
	}
	if (cfg->tty)
		return error_set(err, 0, "isolation %s: -t needs the container's own /dev/pts, which this "
				 "tier does without", t);
	if (cfg->n_mounts > 0 || cfg->n_tmpfs > 0)
		return error_set(err, 0, "isolation %s: volumes (-v) and --tmpfs need mount(2), which "
				 "this tier does without", t);
	if (cfg->n_add_hosts > 0)
		return error_set(err, 0, "isolation %s: --add-host needs nsrun's own /etc/hosts, a "
				 "mount, which this tier does without", t);
	if (!cfg->security.landlock)
		return error_set(err, 0, "isolation %s: the file system is kept read-only by Landlock: "
				 "it cannot go with --security-opt landlock=unconfined", t);
	if (cfg->process.uid != NSRUN_DEFAULT_UID || cfg->process.gid != NSRUN_DEFAULT_UID)
		return error_set(err, 0, "isolation %s: -u needs an id map, which this tier does without: "
				 "the payload is 65534 (nobody)", t);
	if (cfg->network == NSRUN_NETWORK_PASTA)
		return error_set(err, 0, "isolation %s: --network pasta needs the full tier", t);
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		if (cfg->ns_path[i])
			return error_set(err, 0, "isolation %s: linux.namespaces' ipc, uts, pid or user path is joined "
					 "from a user namespace of nsrun's, which needs the full tier", t);
	if (cfg->network == NSRUN_NETWORK_CONTAINER || cfg->network == NSRUN_NETWORK_NAMED ||
	    cfg->network == NSRUN_NETWORK_PATH)
		return error_set(err, 0, "isolation %s: --network %s%s joins a network namespace from a user namespace "
				 "of nsrun's, which needs the full tier", t,
				 cfg->network == NSRUN_NETWORK_CONTAINER ? "container:" : "", cfg->network_name);
	if (cfg->security.allow_nested)
		return error_set(err, 0, "isolation %s: --allow-nested needs the full tier", t);
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL && cfg->n_publish)
		return error_set(err, 0, "isolation minimal: -p needs a network namespace of the run's own");
	if (cfg->security.strict) {
		error_set(err, 0, "isolation %s is weaker than full: --strict refuses it", t);
		err->hint = tier_lacks(cfg->isolation, geteuid() == 0);
		return -1;
	}
	return 0;
}

int config_validate(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	if (cfg->tty && (cfg->output.capture || cfg->output.stdin_path))
		return error_set(err, 0, "--tty and %s: a terminal is neither captured nor fed from a file",
				 cfg->output.json_path ? "--json" : cfg->output.capture ? "--capture" : "--stdin");
	if (!cfg->rootfs)
		return error_set(err, 0, "no image: use --image NAME or --rootfs DIR");
	if (cfg->process.args.n == 0)
		return error_set(err, 0, "no command: give FILE, - or -- CMD [ARG...]");
	if (cfg->process.args.v[0][0] == '\0')
		return error_set(err, 0, "the command is an empty string");
	if (!cfg->process.cwd || cfg->process.cwd[0] != '/')
		return error_set(err, 0, "--workdir: must be an absolute path");
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		for (size_t j = i + 1; j < cfg->n_mounts; j++) {
			if (strcmp(cfg->mounts[i].destination, cfg->mounts[j].destination) == 0)
				return error_set(err, 0, "--volume: \"%s\" is mounted twice",
						 cfg->mounts[i].destination);
		}
		const char *d = cfg->mounts[i].destination;
		if (strcmp(d, "/proc") == 0 || strncmp(d, "/proc/", 6) == 0 ||
		    strcmp(d, "/dev") == 0 || strncmp(d, "/dev/", 5) == 0)
			return error_set(err, 0, "--volume: \"%s\": /proc and /dev are managed by nsrun", d);
	}
	if (cfg->n_mounts > NSRUN_MAX_MOUNTS)
		return error_set(err, 0, "--volume: at most %d volumes", NSRUN_MAX_MOUNTS - 1);
	if (cfg->limits.tmpfs_bytes == 0)
		return error_set(err, 0, "--tmpfs-size: must be more than 0");
	if ((cfg->isolation == NSRUN_ISOLATION_REDUCED || cfg->isolation == NSRUN_ISOLATION_MINIMAL) &&
	    (cfg->userns == NSRUN_USERNS_SUBIDS || cfg->rootfs_writable)) {
		error_set(err, 0, "isolation %s: %s needs the full tier", tier_name(cfg->isolation),
			  cfg->userns == NSRUN_USERNS_SUBIDS ? "--userns subids" : "--read-only=false");
		if (cfg->isolation_why)
			err->hint = cfg->isolation_why;
		return -1;
	}
	if (cfg->isolation == NSRUN_ISOLATION_REDUCED || cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		if (tier_options_check(cfg, err) < 0) {
			/* a tier chosen because full could not be had: say why it could not,
			 * which is what the caller can change */
			if (cfg->isolation_why && !err->hint)
				err->hint = cfg->isolation_why;
			return -1;
		}
	}
	return config_validate_service(cfg, err);
}

void config_free(struct nsrun_config *cfg)
{
	strv_free(&cfg->process.args);
	strv_free(&cfg->process.env);
	strv_free(&cfg->process.user_env);
	strv_free(&cfg->masked_paths);
	strv_free(&cfg->copy_archive_tars);
	strv_free(&cfg->copy_archive_dirs);
	free(cfg->archive_path);
	strv_free(&cfg->readonly_paths);
	strv_free(&cfg->sysctl);
	for (size_t i = 0; i < cfg->n_devices; i++)
		free(cfg->devices[i].path);
	free(cfg->devices);
	free(cfg->process.cwd);
	free(cfg->image);
	free(cfg->entrypoint);
	free(cfg->image_dir);
	free(cfg->image_user);
	free(cfg->user_spec);
	free(cfg->rootfs);
	free(cfg->file);
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		free(cfg->mounts[i].source);
		free(cfg->mounts[i].destination);
	}
	free(cfg->mounts);
	for (size_t i = 0; i < cfg->n_tmpfs; i++)
		free(cfg->tmpfs[i].destination);
	free(cfg->tmpfs);
	free(cfg->publish);
	free(cfg->add_hosts);
	free(cfg->network_name);
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		free(cfg->ns_path[i]);
	free(cfg->service.name);
	strv_free(&cfg->service.labels);
	free(cfg->service.wait_log);
	free(cfg->service.wait_http_path);
	free(cfg->service.health.cmd);
	free(cfg->security.seccomp);
	free(cfg->cgroup_parent);
	free(cfg->cgroups_path);
	free(cfg->output.json_path);
	free(cfg->output.stdin_path);
	free(cfg->hostname);
	free(cfg->exec_fifo);
	free(cfg->oci_inside.hooks);
	free(cfg->oci_inside.state_head[0]);
	free(cfg->oci_inside.state_head[1]);
	free(cfg->oci_inside.state_tail);
	free(cfg->console_socket);
	free(cfg->isolation_why);
	memset(cfg, 0, sizeof(*cfg));
}
