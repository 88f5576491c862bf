/* Unit tests of error_hint_from_peer (error.c): a hint pointer that came from a
 * fork of this binary (the container's init, the OCI monitor) is kept only when
 * it points into the binary's own image, where a fork's static text sits at the
 * same address; a heap or stack pointer (valid only in the peer) becomes NULL.
 * The control: the static hint the peer would send is kept, and its text reads. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "error.h"
#include "tap.h"

static const char static_hint[] = "a static hint, as the container's set-up writes them";

int main(void)
{
	struct tap t = { 0 };
	char on_stack[32] = "on the stack";
	char *on_heap = strdup("on the heap");
	int pipefd[2];
	const char *got = NULL;

	tap_ok(&t, error_hint_from_peer(static_hint) == static_hint, "a hint in the binary's image is kept");
	tap_ok(&t, error_hint_from_peer("a literal") != NULL, "a string literal is kept");
	tap_ok(&t, on_heap && error_hint_from_peer(on_heap) == NULL, "a heap pointer is dropped");
	tap_ok(&t, error_hint_from_peer(on_stack) == NULL, "a stack pointer is dropped");
	tap_ok(&t, error_hint_from_peer(NULL) == NULL, "NULL stays NULL");
	/* as the OCI monitor sends it: a struct nsrun_error written by a fork, read here */
	if (pipe(pipefd) == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			struct nsrun_error e = { 0 };
			error_set(&e, 0, "from the fork");
			e.hint = static_hint;
			_exit(write(pipefd[1], &e, sizeof(e)) == (ssize_t)sizeof(e) ? 0 : 1);
		}
		struct nsrun_error e;
		if (pid > 0 && read(pipefd[0], &e, sizeof(e)) == (ssize_t)sizeof(e))
			got = error_hint_from_peer(e.hint);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	tap_str(&t, "a fork's static hint arrives whole", static_hint, got);
	free(on_heap);
	return tap_done(&t);
}
