/* config_service.c - the options of a service: -p, --tmpfs, and their checks
 * (see config.h).  Pure: no syscalls. */
#include <arpa/inet.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config.h"

/* One option of a --tmpfs option string. Returns 0 or -1 with err. */
static int tmpfs_option(struct nsrun_tmpfs *t, const char *spec, const char *name, size_t nlen, const char *value,
			size_t vlen, struct nsrun_error *err)
{
	char val[64];
	uint64_t n = 0;

	if (!value || vlen == 0 || vlen >= sizeof(val))
		return error_set(err, 0, "--tmpfs: \"%s\": %.*s needs a value", spec, (int)nlen, name);
	memcpy(val, value, vlen);
	val[vlen] = '\0';
	if (nlen == 4 && strncmp(name, "size", 4) == 0) {
		if (parse_size_bytes("--tmpfs size", val, &t->size_bytes, err) < 0)
			return -1;
		return t->size_bytes ? 0 : error_set(err, 0, "--tmpfs: \"%s\": size must be more than 0", spec);
	}
	if (nlen == 4 && strncmp(name, "mode", 4) == 0) {
		char *end = NULL;
		errno = 0;
		n = strtoull(val, &end, 8);
		if (errno || !end || *end || val[0] == '-' || n > 07777)
			return error_set(err, 0, "--tmpfs: \"%s\": mode \"%s\": expected octal 0 to 7777", spec, val);
		t->mode = (unsigned)n;
		return 0;
	}
	return error_set(err, 0, "--tmpfs: \"%s\": unknown option \"%.*s\" (use size=BYTES,mode=OCTAL,tmpcopyup)", spec, (int)nlen,
			 name);
}

int config_add_tmpfs(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	_cleanup_free_ char *path = strdup(spec);
	struct nsrun_tmpfs t = { .size_bytes = cfg->limits.tmpfs_bytes, .mode = 01777 };
	struct nsrun_tmpfs *v;
	char *opts;

	if (!path)
		return error_set(err, ENOMEM, "--tmpfs");
	opts = strchr(path, ':');
	if (opts)
		*opts++ = '\0';
	if (opts) {
		/* getsubopt(3) splits the option string ("a=1,b=2"): no parser of ours */
		char *const names[] = { "size", "mode", "tmpcopyup", NULL };
		char *optstr = opts, *value = NULL;
		while (*optstr) {
			int i = getsubopt(&optstr, names, &value);
			if (i < 0)
				return error_set(err, 0, "--tmpfs: \"%s\": unknown option \"%.*s\" "
						 "(use size=BYTES,mode=OCTAL,tmpcopyup)",
						 spec, (int)strcspn(value ? value : "", "="), value ? value : "");
			if (i == 2) { /* podman's: the tmpfs starts with what the image has there */
				if (value)
					return error_set(err, 0, "--tmpfs: \"%s\": tmpcopyup takes no value", spec);
				t.copy_up = true;
				continue;
			}
			if (tmpfs_option(&t, spec, names[i], strlen(names[i]), value, value ? strlen(value) : 0, err) < 0)
				return -1;
		}
	}
	if (!(t.destination = config_container_path("--tmpfs", path, err)))
		return -1;
	if (strcmp(t.destination, "/") == 0) {
		free(t.destination);
		return error_set(err, 0, "--tmpfs: \"%s\": cannot mount over /", spec);
	}
	v = realloc(cfg->tmpfs, (cfg->n_tmpfs + 1) * sizeof(*v));
	if (!v) {
		free(t.destination);
		return error_set(err, ENOMEM, "--tmpfs");
	}
	cfg->tmpfs = v;
	v[cfg->n_tmpfs++] = t;
	return 0;
}

static int parse_port(const char *spec, const char *what, const char *s, bool zero_ok, uint16_t *out,
		      struct nsrun_error *err)
{
	uint64_t n = 0;
	struct nsrun_error ignored = { 0 };

	if (parse_uint(what, s, 65535, &n, &ignored) < 0 || (!zero_ok && n == 0))
		return error_set(err, 0, "-p: \"%s\": %s \"%s\": expected %s to 65535", spec, what, s, zero_ok ? "0" : "1");
	*out = (uint16_t)n;
	return 0;
}

int config_add_publish(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strdup(spec);
	struct nsrun_publish p = { .host_ip = "127.0.0.1" };
	struct nsrun_publish *v;
	char *proto, *cport, *hport, *ip = NULL;
	unsigned char addr[16];

	if (!copy)
		return error_set(err, ENOMEM, "-p");
	proto = strchr(copy, '/');
	if (proto) {
		*proto++ = '\0';
		if (strcmp(proto, "tcp") != 0)
			return error_set(err, 0, "-p: \"%s\": only tcp can be published", spec);
	}
	cport = strrchr(copy, ':');
	if (!cport) /* docker's "-p 6379": here the same port on the host, not a random one */
		return error_set(err, 0, "-p: \"%s\": expected [HOST_IP:]HOST_PORT:CONTAINER_PORT[/tcp] (HOST_PORT 0: any free port)",
				 spec);
	*cport++ = '\0';
	hport = strrchr(copy, ':');
	if (hport) {
		*hport++ = '\0';
		ip = copy;
		if (ip[0] == '[') { /* [::1] */
			size_t n = strlen(ip);
			if (n < 3 || ip[n - 1] != ']')
				return error_set(err, 0, "-p: \"%s\": an IPv6 address goes in brackets", spec);
			ip[n - 1] = '\0';
			ip++;
		}
		if (inet_pton(AF_INET, ip, addr) != 1 && inet_pton(AF_INET6, ip, addr) != 1)
			return error_set(err, 0, "-p: \"%s\": \"%s\" is not a numeric IP address", spec, ip);
		snprintf(p.host_ip, sizeof(p.host_ip), "%s", ip);
	} else {
		hport = copy;
	}
	if (parse_port(spec, "host port", hport, true, &p.host_port, err) < 0 ||
	    parse_port(spec, "container port", cport, false, &p.container_port, err) < 0)
		return -1;
	if (cfg->n_publish >= NSRUN_MAX_PUBLISH)
		return error_set(err, 0, "-p: at most %d ports", NSRUN_MAX_PUBLISH);
	v = realloc(cfg->publish, (cfg->n_publish + 1) * sizeof(*v));
	if (!v)
		return error_set(err, ENOMEM, "-p");
	cfg->publish = v;
	v[cfg->n_publish++] = p;
	return 0;
}

int config_add_label(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	size_t klen = strcspn(spec, "=");
	_cleanup_free_ char *kv = NULL;

	if (klen == 0 || klen > NSRUN_LABEL_KEY_MAX || strlen(spec + klen) > NSRUN_LABEL_VALUE_MAX + 1)
		return error_set(err, 0, "--label: \"%s\": expected KEY=VALUE, KEY of 1 to %d and VALUE of at most %d "
				 "characters", spec, NSRUN_LABEL_KEY_MAX, NSRUN_LABEL_VALUE_MAX);
	for (const char *c = spec; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return error_set(err, 0, "--label: \"%s\": no control characters", spec);
	/* docker's "--label KEY" is KEY with an empty value */
	if (asprintf(&kv, "%s%s", spec, spec[klen] ? "" : "=") < 0)
		return error_set(err, ENOMEM, "--label");
	if (cfg->service.labels.n >= NSRUN_MAX_LABELS && !strv_getenv(&cfg->service.labels, spec))
		return error_set(err, 0, "--label: at most %d", NSRUN_MAX_LABELS);
	return strv_setenv(&cfg->service.labels, kv) < 0 ? error_set(err, ENOMEM, "--label") : 0;
}

int config_set_wait_log(struct nsrun_config *cfg, const char *regex, struct nsrun_error *err)
{
	regex_t re;
	int rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
	char why[128];

	if (rc != 0) {
		regerror(rc, &re, why, sizeof(why));
		return error_set(err, 0, "--wait-log: \"%s\": %s (a POSIX extended regular expression)", regex, why);
	}
	regfree(&re);
	free(cfg->service.wait_log);
	cfg->service.wait_log = strdup(regex);
	return cfg->service.wait_log ? 0 : error_set(err, ENOMEM, "--wait-log");
}

int config_set_wait_http(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err)
{
	const char *slash = strchr(spec, '/');
	char port[8];
	size_t plen = slash ? (size_t)(slash - spec) : strlen(spec);
	uint16_t p = 0;

	if (plen == 0 || plen >= sizeof(port))
		return error_set(err, 0, "--wait-http: \"%s\": expected CONTAINER_PORT[/PATH]", spec);
	memcpy(port, spec, plen);
	port[plen] = '\0';
	if (parse_port(spec, "container port", port, false, &p, err) < 0)
		return error_set(err, 0, "--wait-http: \"%s\": expected CONTAINER_PORT[/PATH], the port 1 to 65535", spec);
	for (const char *c = slash ? slash : ""; *c; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return error_set(err, 0, "--wait-http: \"%s\": the path has a space or control character", spec);
	free(cfg->service.wait_http_path);
	cfg->service.wait_http_path = strdup(slash ? slash : "/");
	if (!cfg->service.wait_http_path)
		return error_set(err, ENOMEM, "--wait-http");
	cfg->service.wait_http_port = p;
	return 0;
}

/* Cross-field checks of -p, --tmpfs, -d and their kin. Returns 0 or -1 with err. */
int config_validate_service(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	const struct nsrun_service *s = &cfg->service;
	bool found = false;

	for (size_t i = 0; i < cfg->n_tmpfs; i++) {
		const char *d = cfg->tmpfs[i].destination;
		if (strcmp(d, "/proc") == 0 || strncmp(d, "/proc/", 6) == 0 || strcmp(d, "/dev") == 0 ||
		    strncmp(d, "/dev/", 5) == 0 || strcmp(d, "/tmp") == 0)
			return error_set(err, 0, "--tmpfs: \"%s\": /proc, /dev and /tmp are managed by nsrun (see --tmpfs-size)", d);
		for (size_t j = 0; j < cfg->n_mounts; j++)
			if (strcmp(d, cfg->mounts[j].destination) == 0)
				return error_set(err, 0, "--tmpfs: \"%s\" is also a volume", d);
		for (size_t j = i + 1; j < cfg->n_tmpfs; j++)
			if (strcmp(d, cfg->tmpfs[j].destination) == 0)
				return error_set(err, 0, "--tmpfs: \"%s\" is mounted twice", d);
	}
	if (cfg->n_tmpfs > NSRUN_MAX_TMPFS)
		return error_set(err, 0, "--tmpfs: at most %d", NSRUN_MAX_TMPFS);
	for (size_t i = 0; i < cfg->n_publish; i++) {
		for (size_t j = i + 1; j < cfg->n_publish; j++)
			if (cfg->publish[i].host_port && cfg->publish[i].host_port == cfg->publish[j].host_port &&
			    strcmp(cfg->publish[i].host_ip, cfg->publish[j].host_ip) == 0)
				return error_set(err, 0, "-p: host port %s:%u is published twice", cfg->publish[i].host_ip,
						 (unsigned)cfg->publish[i].host_port);
		found |= cfg->publish[i].container_port == s->wait_port;
	}
	if (s->wait_http_port) {
		bool http_found = false;
		for (size_t i = 0; i < cfg->n_publish; i++)
			http_found |= cfg->publish[i].container_port == s->wait_http_port;
		if (!http_found)
			return error_set(err, 0, "--wait-http %u: not a published container port (add -p 0:%u)",
					 (unsigned)s->wait_http_port, (unsigned)s->wait_http_port);
	}
	if (!s->detach && (s->labels.n || s->wait_log || s->wait_http_port || s->wait_healthy || s->health.cmd))
		return error_set(err, 0, "%s: only with -d", s->labels.n ? "--label" : s->wait_log ? "--wait-log" :
				 s->wait_http_port ? "--wait-http" : s->wait_healthy ? "--wait-healthy" : "--health-cmd");
	if (s->wait_healthy && !s->health.cmd)
		return error_set(err, 0, "--wait-healthy: there is no health check (add --health-cmd CMD)");
	if (s->health.cmd && (!s->health.interval_us || !s->health.timeout_us || !s->health.retries))
		return error_set(err, 0, "--health-interval, --health-timeout and --health-retries must be more than 0");
	if (s->wait_port && !found)
		return error_set(err, 0, "--wait-port %u: not a published container port (add -p 0:%u)", (unsigned)s->wait_port,
				 (unsigned)s->wait_port);
	if (s->name && !s->detach)
		return error_set(err, 0, "--name: only with -d (a service has a name, a run does not)");
	if (s->wait_port && !s->detach)
		return error_set(err, 0, "--wait-port: only with -d");
	if ((s->stop_with_parent || s->stop_with_pid) && !s->detach)
		return error_set(err, 0, "--stop-with-%s: only with -d (a run in the foreground ends with nsrun)",
				 s->stop_with_parent ? "parent" : "pid");
	if (s->stdin_once && !(s->detach && s->open_stdin))
		return error_set(err, 0, "--stdin-once: only with -d -i (a service whose stdin clients attach to)");
	if (s->stop_with_parent && s->stop_with_pid)
		return error_set(err, 0, "--stop-with-parent and --stop-with-pid: one process is watched, choose one");
	if (s->detach && cfg->output.capture && !cfg->output.json_path)
		return error_set(err, 0, "--capture: not with -d (the output goes to the service's log: nsrun logs NAME)");
	if (s->detach && cfg->mode == NSRUN_MODE_STDIN)
		return error_set(err, 0, "-d: a program on standard input cannot be detached");
	if (s->detach && cfg->archive_op)
		return error_set(err, 0, "--archive-get, --archive-stat: not with -d (a run that copies, then ends)");
	return config_validate_network(cfg, err);
}

/* --network container:NAME and --network NAME (netjoin.h): the namespace is
 * another's, so nothing of the run's own network can be asked for. */
int config_validate_network(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	const char *form = cfg->network == NSRUN_NETWORK_CONTAINER ? "container:" : "";

	if (cfg->network != NSRUN_NETWORK_CONTAINER && cfg->network != NSRUN_NETWORK_NAMED)
		return 0;
	/* as docker refuses it: "conflicting options: port publishing and the container type network mode" */
	if (cfg->n_publish && cfg->network == NSRUN_NETWORK_CONTAINER) {
		error_set(err, 0, "-p and --network %s%s: the network namespace is the service's, whose -p publishes "
			  "its ports", form, cfg->network_name);
		err->hint = "publish the port on the service whose network is joined (its -p reaches every run in it)";
		return -1;
	}
	if (cfg->network == NSRUN_NETWORK_NAMED && cfg->n_add_hosts)
		return error_set(err, 0, "--add-host and --network %s: the network's members share one /etc/hosts, "
				 "which names them all", cfg->network_name);
	return 0;
}
