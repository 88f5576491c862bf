/* log_index.c - see log_index.h. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log_index.h"

#define REC ((uint64_t)sizeof(struct log_index_rec))

_Static_assert(sizeof(struct log_index_rec) == 24, "the index's records are 24 bytes on every ABI");

int64_t log_index_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int log_index_reset(struct log_index_writer *w)
{
	struct log_index_rec h = { .offset = LOG_INDEX_MAGIC, .time_ns = log_index_now_ns() };

	if (w->fd < 0)
		return 0;
	w->len = 0;
	if (ftruncate(w->fd, 0) < 0)
		return -1;
	if (write(w->fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		int e = errno ? errno : ENOSPC;
		if (ftruncate(w->fd, 0) < 0) {
			/* a header cut short is no header: the log reads as one stream */
		}
		errno = e;
		return -1;
	}
	w->len = REC;
	return 0;
}

int log_index_append(struct log_index_writer *w, uint64_t end, size_t len, unsigned char stream, int64_t time_ns)
{
	struct log_index_rec r = { .offset = end - len, .len = (uint32_t)len, .stream = stream, .time_ns = time_ns };
	ssize_t n;

	if (w->fd < 0 || w->len == 0 || len == 0)
		return 0;
	n = write(w->fd, &r, sizeof(r));
	if (n == (ssize_t)sizeof(r)) {
		w->len += REC;
		return 0;
	}
	if (n >= 0) {
		/* a record cut short would shift every later one: it goes */
		if (ftruncate(w->fd, (off_t)w->len) < 0) {
			/* the reader ignores a torn last record; the next append is then torn too */
		}
		errno = ENOSPC;
	}
	return -1;
}

/* ---- reader ---- */

static bool read_rec(int fd, uint64_t at, struct log_index_rec *r)
{
	return pread(fd, r, sizeof(*r), (off_t)at) == (ssize_t)sizeof(*r);
}

static uint64_t file_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* The first record (its byte in the index) whose bytes end after from. */
static uint64_t first_after(int fd, uint64_t from)
{
	uint64_t lo = 1, hi = file_size(fd) / REC; /* records [lo, hi), the header is 0 */
	struct log_index_rec r;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!read_rec(fd, mid * REC, &r))
			break;
		if (r.offset + r.len > from)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo * REC;
}

void log_reader_init(struct log_reader *r, int log_fd, int index_fd, uint64_t from)
{
	struct log_index_rec h;

	memset(r, 0, sizeof(*r));
	r->log_fd = log_fd;
	r->index_fd = index_fd;
	r->pos = from;
	if (index_fd >= 0 && (!read_rec(index_fd, 0, &h) || h.offset != LOG_INDEX_MAGIC || h.stream != 0)) {
		close(index_fd);
		r->index_fd = -1;
	}
	if (r->index_fd < 0)
		return;
	r->epoch_ns = h.time_ns;
	r->index_pos = first_after(r->index_fd, from);
	if (r->index_pos > REC && read_rec(r->index_fd, r->index_pos - REC, &h))
		r->last_time_ns = h.time_ns;
}

static void restart(struct log_reader *r)
{
	r->pos = 0;
	r->index_pos = REC;
	r->have_next = false;
}

/* The time of bytes no record covers: the record before them, else the one
 * after, else the log's last change. */
static int64_t gap_time(const struct log_reader *r)
{
	struct stat st;

	if (r->last_time_ns)
		return r->last_time_ns;
	if (r->have_next)
		return r->next.time_ns;
	if (fstat(r->log_fd, &st) < 0)
		return log_index_now_ns();
	return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int log_reader_next(struct log_reader *r, bool settled, uint64_t max, struct log_chunk *c)
{
	uint64_t size = file_size(r->log_fd), end;
	struct log_index_rec h;
	bool headless = false;

	if (size < r->pos)
		restart(r);
	if (r->index_fd >= 0) {
		/* without its header (being started again, or its writer gave up): no
		 * records are read, the bytes are nsrun's once settled */
		headless = !read_rec(r->index_fd, 0, &h) || h.offset != LOG_INDEX_MAGIC;
		if (!headless && h.time_ns != r->epoch_ns) {
			r->epoch_ns = h.time_ns;
			restart(r);
		}
	}
	if (r->index_fd < 0) {
		if (r->pos >= size)
			return 0;
		*c = (struct log_chunk){ .offset = r->pos, .len = size - r->pos, .stream = 0 };
		if (c->len > max)
			c->len = max;
		return 1;
	}
	while (!headless && !r->have_next && read_rec(r->index_fd, r->index_pos, &r->next)) {
		r->index_pos += REC;
		/* behind us (the tail started inside it, or a record out of order): past */
		r->have_next = r->next.offset + r->next.len > r->pos && (r->next.stream == 1 || r->next.stream == 2);
		if (!r->have_next)
			r->last_time_ns = r->next.time_ns;
	}
	if (r->pos >= size)
		return 0;
	if (r->have_next && r->next.offset <= r->pos) {
		end = r->next.offset + r->next.len;
		*c = (struct log_chunk){ .offset = r->pos, .stream = r->next.stream, .time_ns = r->next.time_ns };
	} else if (r->have_next || settled) {
		end = r->have_next ? r->next.offset : size;
		*c = (struct log_chunk){ .offset = r->pos, .stream = 2, .time_ns = gap_time(r) };
	} else {
		return 0;
	}
	if (end > size)
		end = size;
	c->len = end - r->pos;
	if (c->len > max)
		c->len = max;
	return c->len ? 1 : 0;
}

void log_reader_consume(struct log_reader *r, uint64_t n)
{
	r->pos += n;
	if (r->have_next && r->pos >= r->next.offset + r->next.len) {
		r->last_time_ns = r->next.time_ns;
		r->have_next = false;
	}
}

void log_reader_close(struct log_reader *r)
{
	if (r->log_fd >= 0)
		close(r->log_fd);
	if (r->index_fd >= 0)
		close(r->index_fd);
	r->log_fd = r->index_fd = -1;
}
