/* timing.c - see timing.h */
#include <sys/mman.h>
#include <time.h>

#include "sys.h"
#include "timing.h"

struct timing *timing_new(void)
{
	void *p = mmap(NULL, sizeof(struct timing), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void timing_free(struct timing *t)
{
	if (t)
		munmap(t, sizeof(*t));
}

void timing_mark(struct timing *t, enum timing_point p)
{
	if (!t || p < 0 || p >= TP__COUNT)
		return;
	t->t_us[p] = monotonic_us();
}

void timing_start(struct timing *t)
{
	struct timespec cpu;

	timing_mark(t, TP_START);
	if (t && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0) {
		uint64_t used = (uint64_t)cpu.tv_sec * 1000000 + (uint64_t)cpu.tv_nsec / 1000;
		t->t_us[TP_EXEC] = t->t_us[TP_START] > used ? t->t_us[TP_START] - used : 0;
	}
}

const char *timing_phase_name(enum timing_point p)
{
	static const char *const names[TP__COUNT] = {
		[TP_EXEC] = "exec",
		[TP_START] = "exec of nsrun, start-up before main (its CPU time)",
		[TP_CONFIG] = "parse options, image lookup, validation",
		[TP_SOURCES] = "mount plan, source checks",
		[TP_SECCOMP] = "seccomp compile or cache load",
		[TP_CLONE] = "clone (namespaces)",
		[TP_ID_MAPS] = "id maps",
		[TP_INIT_GO] = "init: sync, set ids",
		[TP_ROOTFS] = "init: rootfs mount",
		[TP_MOUNTS] = "init: proc, dev, tmp, volumes",
		[TP_PIVOT] = "init: pivot_root",
		[TP_INIT_READY] = "init: hostname, loopback",
		[TP_PAYLOAD_IDS] = "payload: fork, user namespace, ids, rlimits",
		[TP_PAYLOAD_PRIVS] = "payload: caps, no_new_privs",
		[TP_PAYLOAD_SECCOMP] = "payload: seccomp load",
		[TP_EXEC_OK] = "payload: execve",
		[TP_PAYLOAD_EXITED] = "payload runs",
		[TP_END] = "teardown, report",
	};
	return p >= 0 && p < TP__COUNT && names[p] ? names[p] : "?";
}

void timing_print(const struct timing *t, FILE *out)
{
	uint64_t prev, total;
	int first = t && t->t_us[TP_EXEC] ? TP_EXEC : TP_START;

	if (!t || !t->t_us[first] || !t->t_us[TP_END])
		return;
	total = t->t_us[TP_END] - t->t_us[first];
	prev = t->t_us[first];
	for (int p = first + 1; p < TP__COUNT; p++) {
		if (!t->t_us[p])
			continue;
		uint64_t d = t->t_us[p] >= prev ? t->t_us[p] - prev : 0;
		fprintf(out, "nsrun: timing: %8llu us %5.1f%%  %s\n", (unsigned long long)d,
			total ? 100.0 * (double)d / (double)total : 0.0,
			p == TP_PAYLOAD_IDS && t->payload_vfork ?
				"payload: vfork (in init's memory), user namespace, ids, rlimits" :
				timing_phase_name((enum timing_point)p));
		prev = t->t_us[p];
	}
	fprintf(out, "nsrun: timing: %8llu us  total (exec to exit)\n", (unsigned long long)total);
}
