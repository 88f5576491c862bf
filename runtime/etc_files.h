/* etc_files.h - the files nsrun writes for every container, as Docker does:
 * /etc/hosts (hosts(5)) and /etc/hostname (hostname(5)).  mount.c writes them
 * into its private staging tmpfs and binds them read-only over the image's, or
 * where the image has none, into the overlay's upper layer (mount_plan.h).
 *
 * /etc/hosts holds Docker's lines for localhost and the IPv6 names (moby's
 * libnetwork/etchosts), the container's hostname, and --add-host's lines in the
 * order given.  The hostname is on 127.0.1.1 (Debian's convention, hosts(5)): the
 * container has nothing but loopback under --network none, where Docker names no
 * address for it at all; with --network pasta, the addresses of eth0 come first.
 */
#ifndef NSRUN_ETC_FILES_H
#define NSRUN_ETC_FILES_H

#include <stddef.h>

#include "config.h"
#include "error.h"

#define ETC_ADDR_MAX 8                  /* container addresses written to /etc/hosts */
#define ETC_HOSTNAME_ADDR "127.0.1.1"   /* the hostname's loopback address */

/* A numeric address in text form (inet_ntop(3)). */
struct etc_addr {
	char text[46];
};

/* Writes the container's /etc/hosts into buf: addrs (n of them: eth0's under
 * --network pasta, none otherwise) and 127.0.1.1 with the hostname, Docker's
 * localhost and IPv6 lines, then cfg->add_hosts.  A hostname with a '.' is
 * written as itself and its first label, as Docker does.  Pure.  Returns the
 * length needed without the NUL (as snprintf(3)); buf holds it if it is < len. */
size_t etc_hosts_format(const struct nsrun_config *cfg, const struct etc_addr *addrs, size_t n, char *buf,
			size_t len);

/* Writes "HOSTNAME\n" into buf.  Returns the length needed (as snprintf(3)). */
size_t etc_hostname_format(const struct nsrun_config *cfg, char *buf, size_t len);

/* Container side: the IPv4 and global IPv6 addresses of the interfaces that are
 * up, other than loopback (getifaddrs(3), a netlink dump), at most max of them.
 * Returns how many; 0 when there are none or the dump fails (an outer sandbox
 * may deny netlink: the file then lacks those lines, nothing else). */
size_t etc_container_addrs(struct etc_addr *out, size_t max);

/* Container side: writes the content nsrun gives target ("/etc/hosts" or
 * "/etc/hostname"; under --network pasta with eth0's addresses) to a new file
 * name in dir_fd, mode 0644.  Returns 0, or -1 with err (errno of openat(2),
 * write(2); EINVAL for another target). */
int etc_file_write(const struct nsrun_config *cfg, const char *target, int dir_fd, const char *name,
		   struct nsrun_error *err);

#endif
