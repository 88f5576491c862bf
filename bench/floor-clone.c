/* floor-clone.c - the kernel floor of a container start, part 1: clone(2) with
 * nsrun's namespace flags (user, mount, pid, net, ipc, uts, cgroup), the child
 * calls _exit(0) at once, the parent waits.  Nothing else: no id maps, no mounts.
 * What is left of a run's time above this is not the namespaces' creation.
 *
 * Usage: floor-clone       (exit status 0, or 1 with a message)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
		  CLONE_NEWCGROUP)

int main(void)
{
	int status;
	/* raw clone without a stack: fork semantics (x86-64 argument order) */
	long pid = syscall(SYS_clone, (unsigned long)NS_FLAGS | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid < 0) {
		perror("floor-clone: clone");
		return 1;
	}
	if (pid == 0)
		_exit(0);
	if (waitpid((pid_t)pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "floor-clone: the child failed\n");
		return 1;
	}
	return 0;
}
