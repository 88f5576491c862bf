/* etc_files.c - see etc_files.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "etc_files.h"
#include "sys.h"

/* Docker's own lines (moby libnetwork/etchosts), after the container's. */
static const char *const default_lines[] = {
	"127.0.0.1\tlocalhost",
	"::1\tlocalhost ip6-localhost ip6-loopback",
	"fe00::0\tip6-localnet",
	"ff00::0\tip6-mcastprefix",
	"ff02::1\tip6-allnodes",
	"ff02::2\tip6-allrouters",
};

/* snprintf(3) appended at *o, which counts what was needed even past len. */
static void __attribute__((format(printf, 4, 5))) append(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*o < len ? buf + *o : NULL, *o < len ? len - *o : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
}

/* "ADDR\tFQDN[ SHORT]\n": a dotted hostname also answers to its first label. */
static void host_line(char *buf, size_t len, size_t *o, const char *addr, const char *hostname)
{
	const char *dot = strchr(hostname, '.');

	if (dot && dot != hostname)
		append(buf, len, o, "%s\t%s %.*s\n", addr, hostname, (int)(dot - hostname), hostname);
	else
		append(buf, len, o, "%s\t%s\n", addr, hostname);
}

size_t etc_hosts_format(const struct nsrun_config *cfg, const struct etc_addr *addrs, size_t n, char *buf,
			size_t len)
{
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	append(buf, len, &o, "# the container's own, written by nsrun (read-only; --add-host adds lines)\n");
	for (size_t i = 0; i < n; i++)
		host_line(buf, len, &o, addrs[i].text, cfg->hostname);
	host_line(buf, len, &o, ETC_HOSTNAME_ADDR, cfg->hostname);
	for (size_t i = 0; i < sizeof(default_lines) / sizeof(default_lines[0]); i++)
		append(buf, len, &o, "%s\n", default_lines[i]);
	for (size_t i = 0; i < cfg->n_add_hosts; i++)
		append(buf, len, &o, "%s\t%s\n", cfg->add_hosts[i].ip, cfg->add_hosts[i].name);
	return o;
}

size_t etc_hostname_format(const struct nsrun_config *cfg, char *buf, size_t len)
{
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	append(buf, len, &o, "%s\n", cfg->hostname);
	return o;
}

size_t etc_container_addrs(struct etc_addr *out, size_t max)
{
	struct ifaddrs *list = NULL;
	size_t n = 0;

	if (getifaddrs(&list) < 0)
		return 0;
	for (const struct ifaddrs *ifa = list; ifa && n < max; ifa = ifa->ifa_next) {
		const void *a;
		int family;

		if (!ifa->ifa_addr || (ifa->ifa_flags & IFF_LOOPBACK) || !(ifa->ifa_flags & IFF_UP))
			continue;
		family = ifa->ifa_addr->sa_family;
		if (family == AF_INET) {
			a = &((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr;
		} else if (family == AF_INET6) {
			const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr;
			/* a link-local address needs its interface (a scope) to be used: not a name's */
			if (IN6_IS_ADDR_LINKLOCAL(a6) || IN6_IS_ADDR_LOOPBACK(a6))
				continue;
			a = a6;
		} else {
			continue;
		}
		if (inet_ntop(family, a, out[n].text, sizeof(out[n].text)))
			n++;
	}
	freeifaddrs(list);
	return n;
}

int etc_file_write(const struct nsrun_config *cfg, const char *target, int dir_fd, const char *name,
		   struct nsrun_error *err)
{
	struct etc_addr addrs[ETC_ADDR_MAX];
	size_t n_addrs = 0, len;
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	bool hosts = strcmp(target, "/etc/hosts") == 0;

	if (!hosts && strcmp(target, "/etc/hostname") != 0)
		return error_set(err, EINVAL, "write nsrun's \"%s\"", target);
	if (hosts && cfg->network == NSRUN_NETWORK_PASTA)
		n_addrs = etc_container_addrs(addrs, ETC_ADDR_MAX);
	len = hosts ? etc_hosts_format(cfg, addrs, n_addrs, NULL, 0) : etc_hostname_format(cfg, NULL, 0);
	buf = malloc(len + 1);
	if (!buf)
		return error_set(err, ENOMEM, "write nsrun's \"%s\"", target);
	if (hosts)
		etc_hosts_format(cfg, addrs, n_addrs, buf, len + 1);
	else
		etc_hostname_format(cfg, buf, len + 1);
	fd = openat(dir_fd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
	/* 0644 whatever the caller's umask: the payload may run as any uid */
	if (fd < 0 || fchmod(fd, 0644) < 0 || write_all(fd, buf, len) < 0)
		return error_set(err, errno, "write nsrun's \"%s\"", target);
	return 0;
}
