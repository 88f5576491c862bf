/* capture.c - see capture.h */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

#define CHUNK 65536

int capture_open(struct capture_stream *s, uint64_t limit, struct nsrun_error *err)
{
	int p[2];

	memset(s, 0, sizeof(*s));
	s->read_fd = s->write_fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe for the payload's output");
	s->read_fd = p[0];
	s->write_fd = p[1];
	if (fcntl(s->read_fd, F_SETFL, O_NONBLOCK) < 0)
		return error_set(err, errno, "make the output pipe non-blocking");
	s->limit = limit > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)limit;
	return 0;
}

/* Grows the buffer to hold need bytes, doubling, never past limit + 1. */
static int reserve(struct capture_stream *s, size_t need)
{
	size_t cap = s->cap ? s->cap : 4096;
	char *nb;

	if (need <= s->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > s->limit + 1)
		cap = s->limit + 1;
	nb = realloc(s->buf, cap);
	if (!nb)
		return -1;
	s->buf = nb;
	s->cap = cap;
	return 0;
}

int capture_read(struct capture_stream *s, bool *over, struct nsrun_error *err)
{
	char chunk[CHUNK];
	ssize_t n;

	*over = false;
	n = read(s->read_fd, chunk, sizeof(chunk));
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 1;
		return error_set(err, errno, "read the payload's output");
	}
	if (n == 0) {
		close(s->read_fd);
		s->read_fd = -1;
		return 0;
	}
	s->total_bytes += (uint64_t)n;
	if (s->len < s->limit) {
		size_t keep = (size_t)n < s->limit - s->len ? (size_t)n : s->limit - s->len;
		if (reserve(s, s->len + keep + 1) < 0)
			return error_set(err, ENOMEM, "output buffer");
		memcpy(s->buf + s->len, chunk, keep);
		s->len += keep;
		s->buf[s->len] = '\0';
		if (keep < (size_t)n)
			s->truncated = *over = true;
	} else {
		s->truncated = *over = true;
	}
	return 1;
}

void capture_close(struct capture_stream *s)
{
	if (s->read_fd >= 0)
		close(s->read_fd);
	if (s->write_fd >= 0)
		close(s->write_fd);
	s->read_fd = s->write_fd = -1;
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
}
