/* capture.h - the payload's stdout and stderr through pipes, read with poll(2).
 *
 * Each stream keeps at most `limit` bytes; past it the supervisor goes on reading
 * and discarding (so a payload never blocks on a full pipe, and nsrun's memory
 * stays at the limit plus one read buffer), and marks the stream truncated.
 * Reading both streams as they come, never one to EOF first, is what keeps a
 * payload that fills the other pipe from deadlocking (known bug B31).
 */
#ifndef NSRUN_CAPTURE_H
#define NSRUN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct capture_stream {
	int read_fd;            /* supervisor's end, -1 once at EOF */
	int write_fd;           /* the payload's end, -1 once handed over */
	char *buf;              /* the first `limit` bytes */
	size_t len;
	size_t cap;
	size_t limit;
	uint64_t total_bytes;   /* all the payload wrote */
	bool truncated;
};

/* Makes the pipe of a stream that keeps limit bytes.  Returns 0 or -1 with err. */
int capture_open(struct capture_stream *s, uint64_t limit, struct nsrun_error *err);

/* Reads what is there (non-blocking).  Returns 1 after data, 0 at EOF (read_fd is
 * then closed), -1 with err.  Sets *over when the limit was passed by this read. */
int capture_read(struct capture_stream *s, bool *over, struct nsrun_error *err);

/* Closes both ends and frees the buffer. */
void capture_close(struct capture_stream *s);

#endif
