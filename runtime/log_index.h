/* log_index.h - which stream each part of a service's log came from, and when
 * (issue 18: the API's logs as Docker sends them).
 *
 * The log itself ($STATE/NAME/log) stays the plain bytes `nsrun logs` prints.
 * Next to it, log.index holds a header record, then one fixed-size record a
 * write of the relay (relay.h) to the log: where the bytes are in the log, how
 * many, stdout's or stderr's, and the wall-clock time they were read from the
 * payload (CLOCK_REALTIME, nanoseconds).  Records are appended in the order of
 * the writes, so their offsets only grow; host byte order (the file never leaves
 * the machine).  Bytes of the log no record covers are nsrun's own messages
 * about the run (its stderr): they read as stderr.  A log without an index (one
 * written before it, or by nsrun api's reaper) reads as one stream.  A torn last
 * record (a writer killed mid-write) is not read; the log starting again at its
 * --output-limit starts its index again too (index first, then the log).
 */
#ifndef NSRUN_LOG_INDEX_H
#define NSRUN_LOG_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOG_INDEX_FILE "log.index"
#define LOG_INDEX_MAGIC 0x3178646e49676f4cULL   /* "LogIndx1" */

struct log_index_rec {
	uint64_t offset;        /* in the log; the header: LOG_INDEX_MAGIC */
	uint32_t len;           /* bytes */
	uint8_t stream;         /* 1 stdout, 2 stderr; the header: 0 */
	uint8_t pad[3];
	int64_t time_ns;        /* CLOCK_REALTIME when read from the payload */
};

/* The writer's side: its fd (O_WRONLY | O_APPEND) and the bytes it holds. */
struct log_index_writer {
	int fd;                 /* -1: none */
	uint64_t len;
};

/* Starts the index at fd empty, with its header.  Returns 0 or -1 (errno). */
int log_index_reset(struct log_index_writer *w);

/* Appends the record of len bytes (at most UINT32_MAX) of stream (1, 2) that
 * end at end in the log, read at time_ns.  A short write is undone (the file
 * is cut back to its last whole record).  Returns 0 or -1 (errno). */
int log_index_append(struct log_index_writer *w, uint64_t end, size_t len, unsigned char stream, int64_t time_ns);

/* CLOCK_REALTIME in nanoseconds (clock_gettime(2)). */
int64_t log_index_now_ns(void);

/* ---- the reader's side ---- */

/* A run of the log's bytes from one stream at one time. */
struct log_chunk {
	uint64_t offset;
	uint64_t len;
	unsigned char stream;   /* 1, 2 */
	int64_t time_ns;
};

struct log_reader {
	int log_fd;
	int index_fd;           /* -1: no index, the log is one stream */
	uint64_t pos;           /* the next byte of the log to give */
	uint64_t index_pos;     /* the next record of the index (bytes into it) */
	int64_t last_time_ns;   /* of the last record read (a gap's time) */
	int64_t epoch_ns;       /* the header's time: another one, the index started again */
	bool have_next;
	struct log_index_rec next;      /* the record at index_pos - sizeof, not given yet */
};

/* Opens the reader on log_fd and index_fd (both taken over; index_fd -1 or one
 * without the header: no index) at the log's byte from (0: its start).  */
void log_reader_init(struct log_reader *r, int log_fd, int index_fd, uint64_t from);

/* The next chunk from r->pos, at most max bytes (the caller reads them with
 * pread(2) and calls log_reader_consume).  Bytes past the last record (the
 * relay's write whose record is not there yet, or nsrun's own message) are
 * given as stderr only when settled is true.  Returns 1 with *c, 0 when there is
 * nothing (more) now, -1 with errno.  A log (or index) that is shorter than
 * where r is (it started again at its limit) is read again from its start. */
int log_reader_next(struct log_reader *r, bool settled, uint64_t max, struct log_chunk *c);

/* The caller gave n bytes of the chunk from log_reader_next. */
void log_reader_consume(struct log_reader *r, uint64_t n);

/* Closes both fds. */
void log_reader_close(struct log_reader *r);

#endif
