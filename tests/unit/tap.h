/* tap.h - a tiny Test Anything Protocol emitter for the unit tests. */
#ifndef NSRUN_TAP_H
#define NSRUN_TAP_H

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct tap {
	int n;
	int failed;
};

static inline void tap_ok(struct tap *t, bool cond, const char *desc)
{
	t->n++;
	if (!cond)
		t->failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", t->n, desc);
}

static inline void tap_str(struct tap *t, const char *desc, const char *want, const char *got)
{
	bool same = want && got && strcmp(want, got) == 0;

	tap_ok(t, same, desc);
	if (!same)
		printf("#   want: %s\n#   got:  %s\n", want ? want : "(null)", got ? got : "(null)");
}

static inline void tap_int(struct tap *t, const char *desc, long long want, long long got)
{
	tap_ok(t, want == got, desc);
	if (want != got)
		printf("#   want: %lld\n#   got:  %lld\n", want, got);
}

static inline int tap_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes the tree at path (a test's scratch directory), depth first and never
 * following a symlink (nftw(3) FTW_PHYS).  Returns 0 or -1 with errno. */
static inline int tap_remove_tree(const char *path)
{
	return nftw(path, tap_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Prints the plan and returns the exit status for main. */
static inline int tap_done(struct tap *t)
{
	printf("1..%d\n", t->n);
	return t->failed ? 1 : 0;
}

#endif
