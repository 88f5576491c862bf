/* Unit tests of error_hint_from_peer (error.c): a hint pointer that came from a
 * fork of this binary (the container's init, the OCI monitor) is kept only when
 * it points into the binary's own image, where a fork's static text sits at the
 * same address; a heap or stack pointer (valid only in the peer) becomes NULL.
 * The control: the static hint the peer would send is kept, and its text reads.
 * Writable data of the binary (.data, .bss) is dropped too: only its read-only
 * part holds a hint.  error_print makes what it prints one line of printable
 * text whatever set the message (an image's Entrypoint, a peer's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "error.h"
#include "tap.h"

static const char static_hint[] = "a static hint, as the container's set-up writes them";
static char writable_data[] = "in .data";
static char writable_bss[32];

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
	tap_ok(&t, error_hint_from_peer(writable_data) == NULL, "a pointer into the binary's .data is dropped");
	tap_ok(&t, error_hint_from_peer(writable_bss) == NULL, "a pointer into the binary's .bss is dropped");
	{
		struct nsrun_error e = { 0 };
		char out[1024] = "";
		FILE *f = fmemopen(out, sizeof(out) - 1, "w");
		/* as a peer's message arrives: set without error_set */
		snprintf(e.msg, sizeof(e.msg), "exec \"/bin/\033]0;T\007x\nnsrun: forged\"");
		e.hint = "a hint\033[31m";
		if (f) {
			error_print(&e, f);
			fclose(f);
		}
		tap_str(&t, "error_print: control characters of the message and hint as '?'",
			"nsrun: exec \"/bin/?]0;T?x?nsrun: forged\"\nnsrun: hint: a hint?[31m\n", out);
	}
	{
		/* C1 CSI in UTF-8 and as a lone byte, a stray continuation byte, an
		 * overlong '/', a cut sequence at the end; kept: é, €, 😀 */
		char s[] = "a\xc2\x9b" "31m b\x9b" "31m c\x80 d\xc0\xaf e\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 f\xe2\x82";
		tap_str(&t, "error_one_line: C1 controls and bytes that are not UTF-8 as '?', UTF-8 text kept",
			"a??31m b?31m c? d?? e\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 f??", error_one_line(s));
	}
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
