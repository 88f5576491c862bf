/* pool_internal.h - what runtime/pool.c (set-up, the zygote's container) and
 * runtime/pool_serve.c (requests, the loop) share; not an interface (pool.h is). */
#ifndef NSRUN_POOL_INTERNAL_H
#define NSRUN_POOL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#include "config.h"
#include "error.h"
#include "memwatch.h"
#include "result.h"
#include "util.h"

#define POOL_CHANNEL "/run/nsrun-pool"  /* the channel directory inside the container */
#define POOL_MAX_FRAME (16U << 20)      /* a request: code and stdin */
#define POOL_MAX_SIZE 64
#define POOL_MAX_CLIENTS 256
#define POOL_START_TRIES 3              /* a zygote that ends before it is ready, in a row */
#define POOL_SOCKET_FILE "pool.sock"    /* nsrun pool -d: its socket in its service directory */
/* a client that takes none of its answer, or adds nothing to a request it has
 * begun, for this long is closed: the pool never waits on one (pool_loop) */
#define POOL_CLIENT_STALL_US (10ULL * 1000000)

struct pool_req;

struct pool_slot {
	int id;
	int ctl, in, out, err;          /* ours: the request document, stdin, stdout, stderr */
	int stat;                       /* R's messages, read here (not through the zygote): its
					 * name, then its report of P's end */
	pid_t r_pid;                    /* R (the slot's pid 1) as our /proc names it, from its
					 * name's SCM_CREDENTIALS; 0: not known (yet) */
	struct memwatch mw;             /* its request's memory, measured through R while it runs */
	struct pool_req *req;           /* NULL: idle */
};

struct pool_req {
	int client;                     /* index in clients[], -1 once it went away */
	char *ctl;                      /* the document P reads */
	size_t ctl_len, ctl_off;
	char *in;                       /* the request's stdin */
	size_t in_len, in_off;
	uint64_t timeout_us, output_limit;
	uint64_t memory_bytes, pids;    /* RLIMIT_DATA, RLIMIT_NPROC: the pool's, or lower */
	uint64_t t_arrive, t_start;
	struct pool_slot *slot;
	struct nsrun_result r;
	bool exited, timed_out, killed_for_output;
	bool killed_for_memory;         /* its slot's measure passed memory_bytes */
	bool measured;                  /* its memory was measured (the result says "supervisor") */
	bool stream;                    /* "stream": output sent to the client as it comes */
	bool cancelled;                 /* its client went away or shut its side: killed */
	uint64_t streamed[2];           /* stream: the bytes of stdout, stderr sent (within output_limit) */
	struct pool_req *next;          /* the queue */
};

struct pool_client {
	int fd;
	unsigned char hdr[4];
	size_t hdr_have;
	char *buf;
	uint32_t need;
	size_t have;
	struct pool_req *req;
	char *obuf;                     /* stream frames and answers not yet written to fd */
	size_t olen, ooff;
	uint64_t out_since;             /* monotonic_us: its answer queued, or fd last took some */
	uint64_t in_since;              /* monotonic_us: its unfinished frame last grew */
	bool eof;                       /* it shut its side: its request is cancelled */
};

/* A streaming request's frames, before the last one (the result document, whose
 * first byte is '{'): 4-byte big-endian length, then this byte, then the bytes of
 * the request's output as it wrote them. */
#define POOL_FRAME_STDOUT 1
#define POOL_FRAME_STDERR 2
#define POOL_STREAM_BACKLOG (256U << 10)  /* a client's unsent frames past which its request's output waits */
/* a request's memory is first measured this long after it starts: most snippets have
 * ended by then, and until then RLIMIT_DATA holds each of its processes and the
 * container's own limit has room for every slot at its limit (pool.c, child_args) */
#define POOL_MEMWATCH_FIRST_US 5000

struct pool {
	struct nsrun_config cfg;
	char dir[64];                   /* our private directory (0700) */
	char chan[96];                  /* dir/chan, bound read-only at POOL_CHANNEL */
	char zsock[128];                /* chan/zygote.sock until the zygote connects */
	char *socket_path;
	bool socket_ours;
	unsigned size, queue_max;
	struct strv child_argv;
	pid_t child;
	int zlisten, zfd, listen_fd, sigfd;
	bool zready, announced, stopping, watch_stdin;
	bool detach;                    /* -d: a named service (state.h) */
	const char *name;               /* --name */
	int state_fd, ready_fd;         /* -d: its service directory; the pipe told the socket once ready */
	unsigned restarts, start_fails;
	bool measure;                   /* this kernel lets us measure a slot (memwatch_can_measure) */
	struct mount_op slot_tmp;       /* a slot's /tmp, for its measure (with its /dev/shm) */
	struct mount_plan slot_plan;
	struct pool_slot *slots;
	size_t n_slots;
	unsigned running;
	struct pool_client clients[POOL_MAX_CLIENTS];
	struct pool_req *qhead, *qtail;
	unsigned queued;
	/* messages to the zygote its socket would not take yet (its receive queue holds
	 * net.unix.max_dgram_qlen): sent in order once it does, never dropped: a lost
	 * "take" lost a slot for good, a lost "kill" left a timed-out request running */
	char (*zq)[40];
	size_t zq_n, zq_cap;
};

static inline void pool_gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* pool_request.c */
/* Sends q's result document (the --json one, with its pool timings) to its client,
 * if it still has one, then frees q and removes its slot. */
void pool_reply(struct pool *p, struct pool_req *q);
/* Answers the client at fd, which has no request of its own (too many clients, a
 * frame too long), with an error result (errnum, msg, hint), as far as its socket
 * takes it without waiting, then closes fd. */
void pool_refuse(struct pool *p, int fd, int errnum, const char *msg, const char *hint);
/* Parses a request's JSON text (text_len bytes, then a NUL; a NUL before is
 * refused) into q, its limits no higher than
 * the pool's, and makes the document its slot's P reads (q->ctl).  Returns 0 or
 * -1 with err (errnum 0: a bad request; ENOMEM). */
int pool_req_parse(struct pool *p, struct pool_req *q, char *text, size_t text_len, struct nsrun_error *err);

/* pool_serve.c */
/* Removes slot s from p->slots (closing our ends; its request, if any, loses it). */
void pool_slot_remove(struct pool *p, struct pool_slot *s);
/* Answers q with status error (msg, errnum, hint) and frees it. */
void pool_req_fail(struct pool *p, struct pool_req *q, int errnum, const char *msg, const char *hint);
/* Closes client ci; a request of it is cancelled (nothing runs on for it). */
void pool_client_close(struct pool *p, int ci);
/* Queues a (alen bytes) then b (blen) for client ci, which the loop writes as
 * its socket takes them (POLLOUT).  Returns 0, or -1 (no memory: nothing queued). */
int pool_client_queue(struct pool *p, int ci, const void *a, size_t alen, const void *b, size_t blen);
/* Writes what client ci's socket takes now of what is queued for it, never
 * waiting.  Closes a client whose socket fails, and one that shut its side
 * (eof) once it has no request and nothing queued. */
void pool_client_flush(struct pool *p, int ci);
/* Serves until p->stopping: returns 0, or -1 with err (the pool cannot go on). */
int pool_loop(struct pool *p, struct nsrun_error *err);

/* pool.c */
/* The zygote's container ended with status: fails what ran in it, starts it again
 * (err set and p->stopping when it failed to start POOL_START_TRIES times in a row). */
void pool_zygote_ended(struct pool *p, int status, struct nsrun_error *err);
/* Starts the zygote's container (nsrun re-executed).  Returns 0 or -1 with err. */
int pool_zygote_spawn(struct pool *p, struct nsrun_error *err);

#endif
