/* Unit tests of the bounded output capture (capture.c) with a real pipe. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "tap.h"

/* A child writes total bytes of a repeating pattern into the stream's pipe; the
 * parent reads it all through capture_read with poll, as the supervisor does. */
static int pump(struct capture_stream *s, size_t total, bool *ever_over)
{
	struct nsrun_error err = { 0 };
	pid_t pid = fork();

	if (pid == 0) {
		char buf[4096];
		close(s->read_fd);
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)('a' + i % 26);
		for (size_t done = 0; done < total;) {
			size_t n = total - done < sizeof(buf) ? total - done : sizeof(buf);
			ssize_t w = write(s->write_fd, buf, n);
			if (w <= 0)
				_exit(1);
			done += (size_t)w;
		}
		_exit(0);
	}
	close(s->write_fd);
	s->write_fd = -1;
	*ever_over = false;
	while (s->read_fd >= 0) {
		struct pollfd p = { .fd = s->read_fd, .events = POLLIN };
		bool over = false;
		if (poll(&p, 1, 5000) <= 0)
			return -1;
		if (capture_read(s, &over, &err) < 0)
			return -1;
		*ever_over |= over;
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err = { 0 };
	struct capture_stream s;
	bool over;

	tap_ok(&t, capture_open(&s, 1 << 20, &err) == 0, "open a 1 MiB capture");
	tap_ok(&t, pump(&s, 3 << 20, &over) == 0, "3 MiB through it: the writer never blocks for good");
	tap_int(&t, "1 MiB kept", 1 << 20, (long long)s.len);
	tap_int(&t, "3 MiB counted", 3 << 20, (long long)s.total_bytes);
	tap_ok(&t, s.truncated && over, "marked truncated, and the read that passed the limit said so");
	tap_ok(&t, s.buf && s.buf[0] == 'a' && s.buf[25] == 'z' && s.buf[s.len] == '\0',
	       "the kept bytes are the first ones, NUL-terminated");
	tap_ok(&t, s.cap <= (1 << 20) + 1, "the buffer never grew past the limit");
	capture_close(&s);

	tap_ok(&t, capture_open(&s, 1 << 20, &err) == 0, "open another");
	tap_ok(&t, pump(&s, 1000, &over) == 0, "1000 bytes");
	tap_ok(&t, s.len == 1000 && s.total_bytes == 1000 && !s.truncated && !over, "all kept, not truncated");
	capture_close(&s);

	tap_ok(&t, capture_open(&s, 0, &err) == 0, "open a capture that keeps nothing");
	tap_ok(&t, pump(&s, 100000, &over) == 0, "100000 bytes drained");
	tap_ok(&t, s.len == 0 && s.total_bytes == 100000 && s.truncated, "none kept, all counted, truncated");
	capture_close(&s);

	tap_ok(&t, capture_open(&s, 1 << 20, &err) == 0, "open one for an empty stream");
	tap_ok(&t, pump(&s, 0, &over) == 0 && s.len == 0 && s.total_bytes == 0 && !s.truncated,
	       "an empty stream: nothing, not truncated");
	capture_close(&s);
	return tap_done(&t);
}
