/* Unit tests of the service log's index (log_index.c) on real files: the chunks
 * a reader gets (streams, times, nsrun's own bytes between records as stderr), a
 * reader starting inside a record (tail), a torn last record, a log and index
 * that started again, and a log without an index. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_index.h"
#include "tap.h"

static char dir[] = "/tmp/nsrun-test-log-index-XXXXXX";

static int open_at(const char *name, int flags)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return open(p, flags | O_CLOEXEC, 0600);
}

/* Appends text to the log (fd, O_APPEND) and, with stream, its record at time t. */
static void put(int log, struct log_index_writer *w, const char *text, unsigned char stream, int64_t t)
{
	size_t n = strlen(text);

	if (write(log, text, n) != (ssize_t)n)
		abort();
	if (stream && log_index_append(w, (uint64_t)lseek(log, 0, SEEK_CUR), n, stream, t) < 0)
		abort();
}

/* Every chunk from `from` (settled), as "S@T:text|" in out. */
static void read_all(int index, uint64_t from, char *out, size_t len)
{
	struct log_reader r;
	struct log_chunk c;
	size_t o = 0;

	log_reader_init(&r, open_at("log", O_RDONLY), index, from);
	out[0] = '\0';
	while (log_reader_next(&r, true, 4, &c) == 1) {
		char buf[8];
		ssize_t n = pread(r.log_fd, buf, (size_t)c.len, (off_t)c.offset);
		if (n <= 0)
			break;
		o += (size_t)snprintf(out + o, len - o, "%u@%lld:%.*s|", c.stream, (long long)c.time_ns, (int)n, buf);
		log_reader_consume(&r, (uint64_t)n);
	}
	log_reader_close(&r);
}

int main(void)
{
	struct tap t = { 0 };
	struct log_index_writer w = { .fd = -1 };
	struct log_reader r;
	struct log_chunk c;
	char got[512];
	int log;

	if (!mkdtemp(dir))
		return 1;
	log = open_at("log", O_WRONLY | O_CREAT | O_APPEND);
	w.fd = open_at(LOG_INDEX_FILE, O_WRONLY | O_CREAT | O_APPEND);
	tap_int(&t, "reset writes the header", 0, log_index_reset(&w));

	put(log, &w, "out1\n", 1, 100);
	put(log, &w, "nsrun: x\n", 0, 0); /* nsrun's own: no record */
	put(log, &w, "err\n", 2, 200);
	put(log, &w, "out2\n", 1, 300);
	read_all(open_at(LOG_INDEX_FILE, O_RDONLY), 0, got, sizeof(got));
	tap_str(&t, "chunks: streams and times; bytes without a record are stderr at the time before",
		"1@100:out1|1@100:\n|2@100:nsru|2@100:n: x|2@100:\n|2@200:err\n|1@300:out2|1@300:\n|", got);

	read_all(open_at(LOG_INDEX_FILE, O_RDONLY), 7, got, sizeof(got));
	tap_str(&t, "a reader from inside a record (tail): its rest, then on",
		"2@100:run:|2@100: x\n|2@200:err\n|1@300:out2|1@300:\n|", got);

	read_all(-1, 0, got, sizeof(got));
	tap_str(&t, "no index: one stream (0), no times",
		"0@0:out1|0@0:\nnsr|0@0:un: |0@0:x\ner|0@0:r\nou|0@0:t2\n|", got);

	/* a trailing write whose record is not there yet: given only once settled */
	put(log, &w, "late\n", 0, 0);
	log_reader_init(&r, open_at("log", O_RDONLY), open_at(LOG_INDEX_FILE, O_RDONLY), 23);
	tap_int(&t, "bytes past the last record, not settled: nothing yet", 0, log_reader_next(&r, false, 64, &c));
	tap_int(&t, "  ... settled: given", 1, log_reader_next(&r, true, 64, &c));
	tap_int(&t, "  ... as stderr at the last record's time", 2 * 1000 + 300, c.stream * 1000 + c.time_ns);
	tap_int(&t, "  ... all of them", 5, (long long)c.len);
	log_reader_consume(&r, c.len);

	/* a torn last record is not read */
	if (write(w.fd, "torn", 4) != 4)
		abort();
	put(log, &w, "", 0, 0);
	tap_int(&t, "a torn last record: nothing more", 0, log_reader_next(&r, false, 64, &c));

	/* the log at its limit starts again: index first, then the log */
	tap_int(&t, "reset again", 0, log_index_reset(&w));
	if (ftruncate(log, 0) < 0)
		abort();
	put(log, &w, "new\n", 2, 500);
	tap_int(&t, "a reader past the end of a log that started again: from its start", 1,
		log_reader_next(&r, false, 64, &c));
	tap_int(&t, "  ... the new bytes, stderr, their time", 0 * 1000 + 2 * 100 + 4,
		(long long)c.offset * 1000 + c.stream * 100 + (long long)c.len + (c.time_ns == 500 ? 0 : 1));
	log_reader_close(&r);

	/* a short write of a record is undone */
	struct log_index_writer bad = { .fd = open("/dev/full", O_WRONLY | O_CLOEXEC), .len = 24 };
	tap_int(&t, "a record that cannot be written: -1", -1, log_index_append(&bad, 10, 5, 1, 1));
	close(bad.fd);

	/* a file without the header is no index */
	int junk = open_at("junk", O_RDWR | O_CREAT);
	if (write(junk, "0123456789012345678901234567890123456789", 40) != 40)
		abort();
	read_all(junk, 0, got, sizeof(got));
	tap_str(&t, "an index without its header: the log as one stream", "0@0:new\n|", got);

	close(log);
	close(w.fd);
	if (tap_remove_tree(dir) < 0)
		return 1;
	return tap_done(&t);
}
