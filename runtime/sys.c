/* sys.c - see sys.h */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "sys.h"

int read_file(const char *path, size_t max, char **out, size_t *len_out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 4096;

	if (fd < 0)
		return -1;
	buf = malloc(cap + 1);
	if (!buf)
		return -1;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb;
			if (cap >= max) {
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return -1;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = steal_ptr(&buf);
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	return write_all(fd, s, strlen(s));
}

void fd_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}
